package api_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/test/apitest"
)

// topUpEnv starts a server whose players start with start and whose
// top-up credits amount.
func topUpEnv(t *testing.T, start, amount string) *apitest.Env {
	t.Helper()
	parse := func(s string) money.Amount {
		a, err := money.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	return apitest.Start(t, apitest.WithConfig(func(c *settings.Config) {
		c.StartingBalance, c.TopUpAmount = parse(start), parse(amount)
	}))
}

// The daily top-up: refused at or above the minimum bet, credited below
// it as a ledger entry, then refused until the interval has passed.
func TestTopUp(t *testing.T) {
	t.Parallel()
	e := topUpEnv(t, "1000", "100")
	c := e.Client()
	c.Register("rich")
	st := c.Do("GET", "/api/wallet/top-up", nil)
	if st.Status != 200 || st.Body["available"] != false || fmt.Sprint(st.Body["amount"]) != "100" ||
		fmt.Sprint(st.Body["threshold"]) != "0.1" || st.Body["nextAt"] != nil {
		t.Fatalf("top-up of a rich player: %d %s", st.Status, st.Raw)
	}
	expect(t, c.Do("POST", "/api/wallet/top-up", nil), 409, "Top-up available when your balance is below 0.10")
	expect(t, e.Client().Do("GET", "/api/wallet/top-up", nil), 401, "No authentication token, access denied")
	expect(t, e.Client().Do("POST", "/api/wallet/top-up", nil), 401, "No authentication token, access denied")

	// A player with nothing left claims once.
	e = topUpEnv(t, "0", "100")
	c = e.Client()
	c.Register("broke")
	if st := c.Do("GET", "/api/wallet/top-up", nil); st.Body["available"] != true {
		t.Fatalf("top-up of a broke player: %s", st.Raw)
	}
	claim := c.Do("POST", "/api/wallet/top-up", nil)
	next := e.Clock.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	if claim.Status != 200 || fmt.Sprint(claim.Body["newBalance"]) != "100" || fmt.Sprint(claim.Body["amount"]) != "100" ||
		claim.Body["nextAt"] != next {
		t.Fatalf("claim: %d %s (want nextAt %s)", claim.Status, claim.Raw, next)
	}
	if balance(t, c) != money.Dollars(100) {
		t.Fatal("the claim did not credit the balance")
	}
	ledgerClean(t, e)
	var kind string
	var entry int64
	if err := e.App.Postgres.QueryRow(t.Context(), `SELECT kind, amount FROM ledger_entries l JOIN users u ON u.id = l.user_id
		WHERE u.username = 'broke' ORDER BY l.id DESC LIMIT 1`).Scan(&kind, &entry); err != nil || kind != "top_up" ||
		money.Amount(entry) != money.Dollars(100) {
		t.Fatalf("ledger entry of the claim: %s %d %v", kind, entry, err)
	}
	expect(t, c.Do("POST", "/api/wallet/top-up", nil), 409, "Top-up available when your balance is below 0.10")
}

// With a top-up below the threshold the balance stays low, so only the
// interval refuses a second claim; it is allowed again once it has passed.
func TestTopUpInterval(t *testing.T) {
	t.Parallel()
	e := topUpEnv(t, "0", "0.05")
	c := e.Client()
	c.Register("poor")
	first := c.Do("POST", "/api/wallet/top-up", nil)
	if first.Status != 200 {
		t.Fatalf("claim: %d %s", first.Status, first.Raw)
	}
	next := first.Str("nextAt")
	expect(t, c.Do("POST", "/api/wallet/top-up", nil), 409, "Next top-up available at "+next)
	if st := c.Do("GET", "/api/wallet/top-up", nil); st.Body["available"] != false || st.Str("nextAt") != next {
		t.Fatalf("status before the interval: %s", st.Raw)
	}
	if balance(t, c) != money.FromCents(5) {
		t.Fatal("a refused claim changed the balance")
	}
	e.Clock.Advance(24*time.Hour - time.Second)
	c.Login("poor", "secret123") // the access token has expired meanwhile
	expect(t, c.Do("POST", "/api/wallet/top-up", nil), 409, "Next top-up available at "+next)
	e.Clock.Advance(time.Second)
	if st := c.Do("GET", "/api/wallet/top-up", nil); st.Body["available"] != true || st.Body["nextAt"] != nil {
		t.Fatalf("status after the interval: %s", st.Raw)
	}
	if res := c.Do("POST", "/api/wallet/top-up", nil); res.Status != 200 || fmt.Sprint(res.Body["newBalance"]) != "0.1" {
		t.Fatalf("claim after the interval: %d %s", res.Status, res.Raw)
	}
	ledgerClean(t, e)
}

// Two claims at once credit once: the claim locks the player's row.
func TestTopUpRace(t *testing.T) {
	t.Parallel()
	e := topUpEnv(t, "0", "0.05")
	c := e.Client()
	c.Register("racer")
	const n = 20
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range n {
		wg.Go(func() { statuses[i] = c.Do("POST", "/api/wallet/top-up", nil).Status })
	}
	wg.Wait()
	won := 0
	for _, s := range statuses {
		switch s {
		case 200:
			won++
		case 409:
		default:
			t.Fatalf("a racing claim answered %d", s)
		}
	}
	if won != 1 || balance(t, c) != money.FromCents(5) {
		t.Fatalf("%d of %d racing claims credited; balance %s", won, n, balance(t, c))
	}
	ledgerClean(t, e)
}

// A running game's stake counts as balance: a player who put everything
// into a Mines game cannot claim, then cash out and keep both.
func TestTopUpCountsRunningGames(t *testing.T) {
	t.Parallel()
	e := topUpEnv(t, "0.1", "100")
	c := e.Client()
	c.Register("gambler")
	ok(t, c.Do("POST", "/api/games/mines/start", `{"betAmount": 0.1, "mineCount": 1}`))
	if balance(t, c) != 0 {
		t.Fatal("the game did not take the whole balance")
	}
	if st := c.Do("GET", "/api/wallet/top-up", nil); st.Body["available"] != false {
		t.Fatalf("top-up available with a running game: %s", st.Raw)
	}
	expect(t, c.Do("POST", "/api/wallet/top-up", nil), 409,
		"Finish your running game first: its stake still counts toward your balance")
	ledgerClean(t, e)
}

// FAIRPLAY_TOPUP_AMOUNT=0 turns top-ups off.
func TestTopUpOff(t *testing.T) {
	t.Parallel()
	e := topUpEnv(t, "0", "0")
	c := e.Client()
	c.Register("nobody")
	if st := c.Do("GET", "/api/wallet/top-up", nil); st.Status != 200 || st.Body["available"] != false || fmt.Sprint(st.Body["amount"]) != "0" {
		t.Fatalf("status with top-ups off: %s", st.Raw)
	}
	expect(t, c.Do("POST", "/api/wallet/top-up", nil), 409, "Top-ups are turned off on this casino")
}

// The privacy preference: set and cleared by its owner, shown in every
// User, and a bad value changes nothing.
func TestPreferences(t *testing.T) {
	t.Parallel()
	e := apitest.Start(t)
	c := e.Client()
	reg := c.Register("shy")
	if reg.Get("user.hideUsername") != false {
		t.Fatalf("register: %s", reg.Raw)
	}
	res := c.Do("POST", "/api/auth/preferences", map[string]any{"hideUsername": true})
	if res.Status != 200 || res.Get("user.hideUsername") != true || res.Str("user.username") != "shy" {
		t.Fatalf("preferences: %d %s", res.Status, res.Raw)
	}
	if u := c.Do("GET", "/api/auth/user", nil); u.Get("user.hideUsername") != true {
		t.Fatalf("user after the change: %s", u.Raw)
	}
	if l := e.Client().Login("shy", "secret123"); l.Get("user.hideUsername") != true {
		t.Fatalf("login after the change: %s", l.Raw)
	}
	// Fields left out stay as they are.
	if res := c.Do("POST", "/api/auth/preferences", map[string]any{}); res.Status != 200 || res.Get("user.hideUsername") != true {
		t.Fatalf("empty preferences: %d %s", res.Status, res.Raw)
	}
	for _, body := range []string{`{"hideUsername": "yes"}`, `{"hideUsername": 1}`, `{"hideUsername": [true]}`} {
		expect(t, c.Do("POST", "/api/auth/preferences", body), 400, "Invalid request: hideUsername must be true or false")
	}
	expect(t, c.Do("POST", "/api/auth/preferences", `{"hideUsername": tru`), 400, "Invalid JSON body")
	if u := c.Do("GET", "/api/auth/user", nil); u.Get("user.hideUsername") != true {
		t.Fatalf("a bad request changed the preference: %s", u.Raw)
	}
	expect(t, e.Client().Do("POST", "/api/auth/preferences", map[string]any{"hideUsername": false}), 401, "")
	if res := c.Do("POST", "/api/auth/preferences", map[string]any{"hideUsername": false}); res.Get("user.hideUsername") != false {
		t.Fatalf("clearing: %s", res.Raw)
	}
}

// GET /api/games/bets?game= keeps one game's bets; an unknown game is a
// clear 400.
func TestBetHistoryByGame(t *testing.T) {
	t.Parallel()
	e := apitest.Start(t)
	c := e.Client()
	c.Register("filter")
	for range 3 {
		c.Do("POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50})
	}
	for range 2 {
		c.Do("POST", "/api/games/plinko", map[string]any{"betAmount": 1, "rows": 8, "risk": "low"})
	}
	for game, want := range map[string]int{"dice": 3, "plinko": 2, "keno": 0, "": 5} {
		res := c.Do("GET", "/api/games/bets?limit=2&game="+game, nil)
		bets, _ := res.Get("bets").([]any)
		pages := (want + 1) / 2
		if res.Status != 200 || len(bets) != min(2, want) || fmt.Sprint(res.Get("totalPages")) != fmt.Sprint(max(1, pages)) {
			t.Fatalf("game %q: %d %s", game, res.Status, res.Raw)
		}
		for _, b := range bets {
			if g := b.(map[string]any)["game"]; game != "" && g != game {
				t.Fatalf("game %q lists a %v bet", game, g)
			}
		}
	}
	for _, bad := range []string{"poker", "DICE", "dice%00"} {
		res := c.Do("GET", "/api/games/bets?game="+bad, nil)
		if res.Status != 400 || (!strings.Contains(res.Message(), "Game must be one of") && !strings.Contains(res.Message(), "NUL")) {
			t.Fatalf("game %q: %d %s", bad, res.Status, res.Raw)
		}
	}
}
