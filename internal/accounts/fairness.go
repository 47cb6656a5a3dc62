package accounts

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"github.com/fairplay/fairplay/internal/problem"
)

// passwordGate lets one password computation (an argon2 verification or
// hash, or a password change's verification then hash) run per account at a
// time in this process; a second one for the same account is refused at
// once with ErrPasswordBusy. The Hasher's semaphore bounds all accounts'
// computations together (they hold 19 MiB each), and it queues them first
// come, first served: without the gate, one account's parallel requests
// would fill that queue and every other player's sign-in would wait behind
// them. With it, a flooding account holds one place in the queue, and the
// rest of its requests cost a map lookup. The gate holds even with the rate
// limits off, and before they have counted anything.
type passwordGate struct {
	mu   sync.Mutex
	busy map[string]struct{}
}

// ErrPasswordBusy answers a password computation for an account that
// already has one running: the rate-limit answer, to retry in a second.
var ErrPasswordBusy = problem.TooManyRequests(ErrRateLimited, time.Second)

// tryLock takes the account's place, or reports that it is taken. The
// caller calls unlock when its computation is over.
func (g *passwordGate) tryLock(account string) (unlock func(), ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, taken := g.busy[account]; taken {
		return nil, false
	}
	if g.busy == nil {
		g.busy = map[string]struct{}{}
	}
	g.busy[account] = struct{}{}
	return func() {
		g.mu.Lock()
		delete(g.busy, account)
		g.mu.Unlock()
	}, true
}

// accountKey names an account for the per-account limits and the password
// gate: its id when it exists, so that every case of its username and its
// email address count as one; otherwise a digest of the lowercased login,
// so that an account that does not exist is limited exactly like one that
// does and Redis keys are short and hold no one's email address.
func accountKey(cred Credentials, found bool, login string) string {
	if found {
		return userKey(cred.ID.String())
	}
	sum := sha256.Sum256([]byte(strings.ToLower(login)))
	return "n:" + hex.EncodeToString(sum[:16])
}

// userKey names an existing account for the limits and the gate.
func userKey(id string) string { return "u:" + id }
