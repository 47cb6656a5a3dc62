package accounts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"github.com/fairplay/fairplay/internal/problem"
)

// passwordGate runs one password computation (an argon2 verification or
// hash, or a password change's verification then hash) per account at a
// time in this process; the account's other requests wait their turn in
// arrival order.
//
// The Hasher's semaphore bounds all accounts' computations together (each
// holds 19 MiB) and serves them first come, first served: without the gate,
// one account's parallel requests would fill its queue and every other
// player's sign-in would wait behind them all. With it, an account holds at
// most one place there, whatever the rate limits say (they may be off).
// Waiting requests cost no CPU, so a flood that waits is cheaper for
// everyone than one answered at once and sent again at once; a request finds
// ErrPasswordBusy when gateQueue requests of its account already wait, or
// when its turn has not come within gateWait.
type passwordGate struct {
	mu       sync.Mutex
	accounts map[string]*gateLine
}

// gateLine is one account's line: turn holds a token while a computation
// runs (channel senders are served in order), and n counts the requests
// running or waiting, so that the line is dropped when it empties.
type gateLine struct {
	turn chan struct{}
	n    int
}

// Bounds of an account's line: how many requests may wait behind the
// running one, and for how long.
const (
	gateQueue = 32
	gateWait  = 5 * time.Second
)

// ErrPasswordBusy answers a password computation for an account whose line
// is full or did not move in time: the rate-limit answer, to retry in a
// second.
var ErrPasswordBusy = problem.TooManyRequests(ErrRateLimited, time.Second)

// enter waits for the account's turn and returns the function that ends it.
func (g *passwordGate) enter(ctx context.Context, account string) (leave func(), err error) {
	g.mu.Lock()
	l := g.accounts[account]
	if l == nil {
		if g.accounts == nil {
			g.accounts = map[string]*gateLine{}
		}
		l = &gateLine{turn: make(chan struct{}, 1)}
		g.accounts[account] = l
	}
	if l.n > gateQueue {
		g.mu.Unlock()
		return nil, ErrPasswordBusy
	}
	l.n++
	g.mu.Unlock()
	out := func() {
		g.mu.Lock()
		if l.n--; l.n == 0 {
			delete(g.accounts, account)
		}
		g.mu.Unlock()
	}
	timer := time.NewTimer(gateWait)
	defer timer.Stop()
	select {
	case l.turn <- struct{}{}:
		return func() {
			<-l.turn
			out()
		}, nil
	case <-timer.C:
		out()
		return nil, ErrPasswordBusy
	case <-ctx.Done():
		out()
		return nil, ctx.Err()
	}
}

// loginKey names what a sign-in typed, for its per-account limits and the
// password gate: a digest of the login lowercased, whether or not it names
// an account, so that every case of a name counts as one and Redis keys are
// short and hold no one's email address. A username and its account's email
// address are two names with two budgets: had they shared the account's
// (as they once did), filling the budget through one and probing with the
// other would tell whether an email address belongs to a username (a 429
// for the account's own name, a 401 for any other), and usernames are public
// in the live feed. Found by a review playing a hostile player;
// test/security's TestSignInLimitsDoNotLinkAUsernameToItsEmail.
func loginKey(login string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(login)))
	return "n:" + hex.EncodeToString(sum[:16])
}

// userKey names an existing account for the limits and the gate.
func userKey(id string) string { return "u:" + id }
