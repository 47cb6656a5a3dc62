package security_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/accounts"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/test/apitest"
)

// trustLoopback makes the server believe X-Forwarded-For from the test's
// own connections, so each apitest.Client can play a different client IP.
func trustLoopback(c *settings.Config) { c.TrustedProxies = []string{"127.0.0.1/32", "::1/128"} }

// expectRateLimited fails the test unless res is the rate limit's 429 with
// a whole number of seconds in Retry-After.
func expectRateLimited(t *testing.T, res apitest.Response, what string) {
	t.Helper()
	if res.Status != http.StatusTooManyRequests || res.Message() != accounts.ErrRateLimited {
		t.Fatalf("%s: %d %s, want 429 %q", what, res.Status, res.Raw, accounts.ErrRateLimited)
	}
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || s < 1 {
		t.Fatalf("%s: Retry-After %q, want whole seconds", what, res.Header.Get("Retry-After"))
	}
}

func changePassword(c *apitest.Client, current, next string) apitest.Response {
	return c.Do("POST", "/api/auth/change-password", map[string]any{"currentPassword": current, "newPassword": next})
}

// A signed-in player (or whoever holds their access token) cannot turn
// change-password into a password-guessing or CPU-burning endpoint: after
// FAIRPLAY_RATE_PASSWORD_USER attempts the account is refused with 429 —
// over /api and Connect alike — before any password is hashed, even with
// the right current password, and other players are not affected.
func TestChangePasswordIsRateLimitedPerUser(t *testing.T) {
	t.Parallel()
	hasher := accounts.NewHasher(64, 1, 1, 8)
	env := apitest.Start(t, apitest.WithHasher(hasher), apitest.WithConfig(func(c *settings.Config) {
		c.PasswordChangePerUser = settings.Rate{N: 5, Period: 15 * time.Minute}
		c.PasswordChangePerIP = settings.Rate{N: 1000, Period: 15 * time.Minute}
	}))
	mallory := env.Client()
	mallory.Register("mallory")
	for i := range 5 {
		if res := changePassword(mallory, "guess-"+strconv.Itoa(i), "Newpass1!"); res.Status != 400 || res.Message() != "Current password is incorrect" {
			t.Fatalf("attempt %d: %d %s", i+1, res.Status, res.Raw)
		}
	}
	before := hasher.Computed()
	expectRateLimited(t, changePassword(mallory, "secret123", "Newpass1!"), "sixth change with the right password")
	if n := hasher.Computed() - before; n != 0 {
		t.Fatalf("the refused change hashed %d passwords; the limit must come first", n)
	}
	// Over Connect, with the same procedure and the same account.
	client := fairplayv1connect.NewAuthServiceClient(http.DefaultClient, env.URL)
	req := connect.NewRequest(&fairplayv1.ChangePasswordRequest{CurrentPassword: "secret123", NewPassword: "Newpass1!"})
	req.Header().Set("Authorization", "Bearer "+mallory.Token)
	_, err := client.ChangePassword(context.Background(), req)
	var ce *connect.Error
	if connect.CodeOf(err) != connect.CodeResourceExhausted || !errors.As(err, &ce) || ce.Meta().Get("Retry-After") == "" {
		t.Fatalf("Connect ChangePassword over the limit: %v", err)
	}
	if n := hasher.Computed() - before; n != 0 {
		t.Fatalf("the refused Connect change hashed %d passwords", n)
	}
	// Nothing changed: the old password still signs in.
	env.Client().Login("mallory", "secret123")

	// Another player, from the same address, is not affected.
	alice := env.Client()
	alice.Register("alice")
	if res := changePassword(alice, "secret123", "Newpass1!"); res.Status != 200 {
		t.Fatalf("another player's change: %d %s", res.Status, res.Raw)
	}
}

// One address cannot change passwords without end either, whatever
// accounts it uses: FAIRPLAY_RATE_PASSWORD_IP counts per client IP.
func TestChangePasswordIsRateLimitedPerIP(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) {
		trustLoopback(c)
		c.PasswordChangePerUser = settings.Rate{N: 1000, Period: 15 * time.Minute}
		c.PasswordChangePerIP = settings.Rate{N: 3, Period: 15 * time.Minute}
	}))
	players := make([]*apitest.Client, 4)
	for i := range players {
		players[i] = env.Client()
		players[i].ForwardedFor = "203.0.113.7"
		players[i].Register("bot" + strconv.Itoa(i))
	}
	for i, p := range players[:3] {
		if res := changePassword(p, "wrong-pass", "Newpass1!"); res.Status != 400 {
			t.Fatalf("attempt %d from the address: %d %s", i+1, res.Status, res.Raw)
		}
	}
	expectRateLimited(t, changePassword(players[3], "secret123", "Newpass1!"), "fourth change from one address")
	players[3].ForwardedFor = "198.51.100.9"
	if res := changePassword(players[3], "secret123", "Newpass1!"); res.Status != 200 {
		t.Fatalf("the same player from another address: %d %s", res.Status, res.Raw)
	}
}

// With the rate limits off (as in make bench), one account flooding
// change-password still gets at most one argon2 computation at a time: its
// other requests wait in its own line, those beyond the line are answered
// 429 with Retry-After at once, and other players sign in and change their
// passwords as usual meanwhile.
func TestChangePasswordFloodHashesOnePasswordAtATime(t *testing.T) {
	t.Parallel()
	// A real computation (1 MiB), so that unfair requests would overlap.
	hasher := accounts.NewHasher(1024, 1, 1, 8)
	env := apitest.Start(t, apitest.WithHasher(hasher))
	flooder := env.Client()
	flooder.Register("flooder")
	victim := env.Client()
	victim.Register("victim")

	// flood sends 96 parallel streams of wrong-password changes (more than
	// a server takes of one session's calls at once, 64, and than the
	// account's line of password computations holds, 32) until stop is
	// closed, and reports the statuses it saw.
	flood := func(stop <-chan struct{}) (statuses map[int]int, noRetryAfter int) {
		statuses = map[int]int{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range 96 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					res := changePassword(flooder, "not-my-password", "Newpass1!")
					mu.Lock()
					statuses[res.Status]++
					if res.Status == 429 && (res.Header.Get("Retry-After") == "" || res.Message() != accounts.ErrRateLimited) {
						noRetryAfter++
					}
					mu.Unlock()
				}
			}()
		}
		<-stop
		wg.Wait()
		return statuses, noRetryAfter
	}

	// Watch the hasher while one account floods alone.
	var peak atomic.Int64
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if n := int64(hasher.InFlight()); n > peak.Load() {
				peak.Store(n)
			}
		}
	}()
	done := make(chan struct{})
	var statuses map[int]int
	var noRetryAfter int
	go func() {
		defer close(done)
		statuses, noRetryAfter = flood(stop)
	}()
	// Let it run for a given amount of hashing, not of time.
	start := hasher.Computed()
	for hasher.Computed()-start < 60 {
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	<-done
	<-watched
	if p := peak.Load(); p > 1 {
		t.Errorf("one account had %d argon2 computations in flight at once; want at most 1", p)
	}
	if statuses[429] == 0 || noRetryAfter > 0 {
		t.Errorf("flood statuses %v (%d 429s without Retry-After or the rate-limit message): the requests beyond the account's line must be refused with 429",
			statuses, noRetryAfter)
	}
	for s := range statuses {
		if s != 400 && s != 429 {
			t.Errorf("flood statuses %v: only 400 (wrong password) and 429 expected", statuses)
		}
	}

	// While it floods again, the other player signs in and changes their
	// password as usual.
	stop = make(chan struct{})
	done = make(chan struct{})
	go func() {
		defer close(done)
		flood(stop)
	}()
	other := env.Client()
	other.Login("victim", "secret123")
	if res := changePassword(other, "secret123", "Newpass1!"); res.Status != 200 {
		t.Errorf("the other player's password change during the flood: %d %s", res.Status, res.Raw)
	}
	close(stop)
	<-done
	// And the flooder's own password never changed.
	env.Client().Login("flooder", "secret123")
}
