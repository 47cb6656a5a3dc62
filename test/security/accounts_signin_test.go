package security_test

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/test/apitest"
)

// signIn sends one sign-in attempt from the client's address.
func signIn(c *apitest.Client, login, password string) apitest.Response {
	return c.Do("POST", "/api/auth/login", map[string]any{"username": login, "password": password, "turnstileToken": apitest.BotToken})
}

// from returns a new browser that the server sees at address ip.
func from(env *apitest.Env, ip string) *apitest.Client {
	c := env.Client()
	c.ForwardedFor = ip
	return c
}

// signInServer starts a server that believes the test's X-Forwarded-For,
// with sign-in limits of perIP attempts a minute per address, perLogin
// attempts per login and address in 15 minutes and failures per login in an
// hour, and whatever more changes.
func signInServer(t *testing.T, perIP, perLogin, failures int, more ...func(*settings.Config)) *apitest.Env {
	t.Helper()
	return apitest.Start(t, apitest.WithConfig(func(c *settings.Config) {
		trustLoopback(c)
		c.LoginPerIP = settings.Rate{N: perIP, Period: time.Minute}
		c.LoginPerAccountIP = settings.Rate{N: perLogin, Period: 15 * time.Minute}
		c.LoginFailuresPerAccount = settings.Rate{N: failures, Period: time.Hour}
		for _, f := range more {
			f(c)
		}
	}))
}

// A stranger who knows a player's username or email cannot lock the player
// out: the attempts that count against one address are per login and
// address, so ten wrong passwords from address A — through any case of the
// username, which all count as one login — stop A, and only A, while the
// owner signs in from address B. The email address is another login with
// its own ten (TestSignInLimitsDoNotLinkAUsernameToItsEmail).
func TestStrangerCannotLockOwnerOut(t *testing.T) {
	t.Parallel()
	env := signInServer(t, 1000, 10, 100)
	from(env, "198.51.100.20").Register("owner")

	attacker := from(env, "203.0.113.66")
	variants := []string{"owner", "OWNER", "Owner", "oWnEr", "owNER", "OwNeR", "ownER", "OWNer", "oWNER", "OwNER"}
	for i, login := range variants {
		if res := signIn(attacker, login, "guess"+strconv.Itoa(i)); res.Status != 401 || res.Message() != "Invalid username or password" {
			t.Fatalf("attempt %d (%s): %d %s", i+1, login, res.Status, res.Raw)
		}
	}
	// The eleventh attempt from A is refused whichever case it uses, even
	// with the right password.
	expectRateLimited(t, signIn(attacker, "Owner", "guess-again"), "11th attempt from A by username")
	expectRateLimited(t, signIn(from(env, "203.0.113.66"), "owner", "secret123"), "A with the right password")
	for i, login := range []string{"owner@example.com", "OWNER@Example.COM"} {
		for j := range 5 {
			if res := signIn(attacker, login, "guess"+strconv.Itoa(j)); res.Status != 401 {
				t.Fatalf("attempt %d by email from A: %d %s", i*5+j+1, res.Status, res.Raw)
			}
		}
	}
	expectRateLimited(t, signIn(attacker, "Owner@Example.com", "guess-again"), "11th attempt from A by email")

	// The owner, from B, signs in by username and by email.
	if res := signIn(from(env, "198.51.100.20"), "owner", "secret123"); res.Status != 200 {
		t.Fatalf("owner from B after A's attempts: %d %s", res.Status, res.Raw)
	}
	if res := signIn(from(env, "198.51.100.20"), "Owner@example.com", "secret123"); res.Status != 200 {
		t.Fatalf("owner from B by email: %d %s", res.Status, res.Raw)
	}

	// A second address gets its own ten attempts, and the owner still signs in.
	second := from(env, "192.0.2.99")
	for i := range 10 {
		if res := signIn(second, variants[i], "guess"); res.Status != 401 {
			t.Fatalf("attempt %d from a second address: %d %s", i+1, res.Status, res.Raw)
		}
	}
	expectRateLimited(t, signIn(second, "owner", "guess"), "11th attempt from the second address")
	if res := signIn(from(env, "198.51.100.20"), "OWNER", "secret123"); res.Status != 200 {
		t.Fatalf("owner from B after two addresses' attempts: %d %s", res.Status, res.Raw)
	}
}

// An IPv6 client holds a whole /64 and may send from any address in it:
// the per-address limits count the /64, so moving through its addresses
// buys no more sign-in attempts, registrations or password changes, while
// the next /64 is another client.
func TestAddressLimitsCountAnIPv6Network(t *testing.T) {
	t.Parallel()
	env := signInServer(t, 1000, 3, 100, func(c *settings.Config) { c.RegisterPerIP = settings.Rate{N: 2, Period: time.Hour} })
	from(env, "198.51.100.20").Register("owner6")
	for i := range 3 {
		if res := signIn(from(env, fmt.Sprintf("2001:db8:7:7::%x", i+1)), "owner6", "guess"); res.Status != 401 {
			t.Fatalf("attempt %d: %d %s", i+1, res.Status, res.Raw)
		}
	}
	expectRateLimited(t, signIn(from(env, "2001:db8:7:7:ffff:1:2:3"), "owner6", "guess"), "a 4th attempt from another address of the /64")
	if res := signIn(from(env, "2001:db8:7:8::1"), "owner6", "secret123"); res.Status != 200 {
		t.Fatalf("the next /64: %d %s", res.Status, res.Raw)
	}
	register := func(ip, name string) apitest.Response {
		return from(env, ip).Do("POST", "/api/auth/register", map[string]any{"username": name, "email": name + "@example.com",
			"password": "secret123", "turnstileToken": apitest.BotToken})
	}
	for i, name := range []string{"six1", "six2"} {
		if res := register(fmt.Sprintf("2001:db8:9:9::%x", i+1), name); res.Status != 200 {
			t.Fatalf("registration %d: %d %s", i+1, res.Status, res.Raw)
		}
	}
	expectRateLimited(t, register("2001:db8:9:9:abcd::1", "six3"), "a 3rd registration from another address of the /64")
}

// Behind the per-address limit, each account has a slower limit of failed
// sign-ins from anywhere (FAIRPLAY_RATE_LOGIN_ACCOUNT_FAILURES): the owner's
// successful sign-ins do not count against it, and an account that does not
// exist answers every step exactly as one that does, so the limits tell no
// one which usernames are taken.
func TestSignInFailureLimitPerAccount(t *testing.T) {
	t.Parallel()
	env := signInServer(t, 1000, 3, 5)
	from(env, "198.51.100.1").Register("owner")

	// Six sign-ins, more than either limit, from six devices: successes count
	// against neither the failure limit nor one another's addresses.
	for i := range 6 {
		if res := signIn(from(env, fmt.Sprintf("198.51.100.%d", 10+i)), "owner", "secret123"); res.Status != 200 {
			t.Fatalf("owner's sign-in %d: %d %s", i+1, res.Status, res.Raw)
		}
	}

	// A distributed guesser: one wrong password from each of many addresses.
	// Five failures spend the account's budget; the sixth address is refused
	// before its password is checked. An account that does not exist
	// answers the same, step by step.
	attack := func(login string, net int) []string {
		var seen []string
		for i := range 7 {
			res := signIn(from(env, fmt.Sprintf("203.0.%d.%d", net, i+1)), login, "guess"+strconv.Itoa(i))
			seen = append(seen, fmt.Sprintf("%d %s retry-after:%t", res.Status, res.Message(), res.Header.Get("Retry-After") != ""))
		}
		return seen
	}
	owner, ghost := attack("OWNER", 113), attack("Ghost", 114)
	for i := range owner {
		want := "401 Invalid username or password retry-after:false"
		if i >= 5 {
			want = "429 Too many requests, please try again later retry-after:true"
		}
		if owner[i] != want {
			t.Fatalf("owner's attempt %d: %q, want %q (all: %q)", i+1, owner[i], want, owner)
		}
		if ghost[i] != owner[i] {
			t.Fatalf("attempt %d tells accounts apart: existing %q, missing %q", i+1, owner[i], ghost[i])
		}
	}
	// Now the account is refused from anywhere until failures age out —
	// the owner too: that is the slow global limit doing its job.
	expectRateLimited(t, signIn(from(env, "198.51.100.50"), "owner", "secret123"), "the owner after the account's failure budget is spent")
}

// TestSignInFailuresInParallelAreBounded: wrong passwords sent at once, from
// as many addresses, get as many password checks as the account's failure
// budget, and the rest are refused 429. The budget was checked before the
// account's line and the failure counted after it, so every attempt queued
// at once passed the check before any was counted: 33 of 40 were checked
// against a budget of 5 (found by a review playing a hostile player).
func TestSignInFailuresInParallelAreBounded(t *testing.T) {
	t.Parallel()
	// A password check that takes a few milliseconds, as a real one takes
	// tens: the attempts wait in the account's line together.
	env := apitest.Start(t, apitest.WithHasher(accounts.NewHasher(8*1024, 2, 1, 8)), apitest.WithConfig(func(c *settings.Config) {
		trustLoopback(c)
		c.LoginPerIP = settings.Rate{N: 1000, Period: time.Minute}
		c.LoginPerAccountIP = settings.Rate{N: 1000, Period: 15 * time.Minute}
		c.LoginFailuresPerAccount = settings.Rate{N: 5, Period: time.Hour}
	}))
	from(env, "198.51.100.1").Register("owner")
	const n = 40
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			statuses[i] = signIn(from(env, fmt.Sprintf("203.0.113.%d", i+1)), "owner", "guess").Status
		})
	}
	wg.Wait()
	counts := map[int]int{}
	for _, s := range statuses {
		counts[s]++
	}
	if counts[401] > 5 || counts[401]+counts[429] != n {
		t.Fatalf("%d wrong passwords at once answered %v: want at most the budget's 5 checked (401), the rest 429", n, counts)
	}
}

// The sign-in limits do not tell which email address is a username's. They
// once counted a username and its account's email address as one: ten
// attempts through the username (each with a bot token that failed, so free)
// filled the budget, and the next attempt through an email address was
// refused 429 exactly when the address was that account's — a way to learn a
// player's email address (usernames are public in the live feed) from a list
// of candidates. Found by a review playing a hostile player. Now each login
// counts as typed, and an attempt that fails the bot check counts only
// against its address.
func TestSignInLimitsDoNotLinkAUsernameToItsEmail(t *testing.T) {
	t.Parallel()
	env := signInServer(t, 1000, 3, 5)
	from(env, "198.51.100.1").Register("victim")
	from(env, "198.51.100.2").Register("bystander")
	// What a probe of each candidate answers, from client c: the victim's
	// own address must answer as the others do.
	probe := func(c func() *apitest.Client) []string {
		var seen []string
		for _, email := range []string{"victim@example.com", "bystander@example.com", "nobody@example.com"} {
			res := signIn(c(), email, "guess")
			seen = append(seen, fmt.Sprintf("%d %s", res.Status, res.Message()))
		}
		return seen
	}
	same := func(what string, seen []string) {
		t.Helper()
		for _, s := range seen {
			if s != "401 Invalid username or password" {
				t.Fatalf("%s: the candidates answered %q, want each 401 as a wrong password", what, seen)
			}
		}
	}

	// The budget of a login from one address, filled through the username.
	a := from(env, "203.0.113.10")
	for i := range 3 {
		if res := signIn(a, "victim", "guess"+strconv.Itoa(i)); res.Status != 401 {
			t.Fatalf("attempt %d: %d %s", i+1, res.Status, res.Raw)
		}
	}
	expectRateLimited(t, signIn(a, "victim", "guess"), "the username past its budget from A")
	same("from A, the username's budget spent", probe(func() *apitest.Client { return a }))

	// The failures of a login from anywhere (five: A's three and two more
	// addresses'), spent through the username; each candidate probed from a
	// fresh address.
	for i := range 2 {
		if res := signIn(from(env, fmt.Sprintf("203.0.114.%d", i+1)), "victim", "guess"); res.Status != 401 {
			t.Fatalf("failure %d: %d %s", i+1, res.Status, res.Raw)
		}
	}
	expectRateLimited(t, signIn(from(env, "203.0.114.99"), "victim", "guess"), "the username past its failures")
	n := 0
	same("the username's failures spent", probe(func() *apitest.Client {
		n++
		return from(env, fmt.Sprintf("203.0.115.%d", n))
	}))

	// Attempts that fail the bot check spend no login's budget: twenty of
	// them, then the owner signs in from the same address.
	c := from(env, "203.0.116.1")
	for i := range 20 {
		res := c.Do("POST", "/api/auth/login", map[string]any{"username": "bystander", "password": "guess", "turnstileToken": "junk"})
		if res.Status != 400 || res.Message() != "Please complete the Turnstile verification" {
			t.Fatalf("attempt %d without a bot token: %d %s", i+1, res.Status, res.Raw)
		}
	}
	if res := signIn(c, "bystander", "secret123"); res.Status != 200 {
		t.Fatalf("the owner after twenty attempts that failed the bot check: %d %s", res.Status, res.Raw)
	}
}

// X-Forwarded-For's lines are one list. A proxy that appends a header line
// of its own (HAProxy's option forwardfor) instead of extending the one the
// client sent leaves the client's own line first; reading only that line
// believed whatever address the client wrote, which bought a fresh
// per-address budget for every attempt and let anyone name another player's
// address to spend theirs. Found by a review playing a hostile player.
func TestForwardedForLinesAreOneList(t *testing.T) {
	t.Parallel()
	env := signInServer(t, 3, 100, 100)
	from(env, "198.51.100.30").Register("proxied")

	// The proxy saw 203.0.113.5; the client wrote a new address each time.
	forged := func(i int) *apitest.Client {
		return from(env, fmt.Sprintf("192.0.2.%d\n203.0.113.5", i+1))
	}
	res := signIn(forged(0), "proxied", "secret123")
	if res.Status != 200 {
		t.Fatalf("sign-in through the proxy: %d %s", res.Status, res.Raw)
	}
	c := env.Client()
	c.Token = res.Str("token")
	list := c.Do("GET", "/api/auth/sessions", nil)
	var seen []any
	sessions, _ := list.Body["sessions"].([]any)
	for _, s := range sessions {
		seen = append(seen, s.(map[string]any)["ipAddress"])
	}
	if !slices.Contains(seen, any("203.0.113.5")) || slices.Contains(seen, any("192.0.2.1")) {
		t.Fatalf("sessions' addresses %v: want the proxy's 203.0.113.5, not the client's own 192.0.2.1", seen)
	}
	for i := 1; i < 3; i++ {
		if res := signIn(forged(i), "proxied", "guess"); res.Status != 401 {
			t.Fatalf("attempt %d: %d %s", i+1, res.Status, res.Raw)
		}
	}
	expectRateLimited(t, signIn(forged(3), "proxied", "guess"), "a 4th attempt from one address that wrote another each time")
}
