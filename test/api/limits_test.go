package api_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/test/apitest"
)

// Responsible gambling (issue 19 point 5) over /api: the rules run in the
// bet's own statement (fairplay_play_refusal, migration 00015), so these
// tests place real bets; rigDice picks the outcome of the next one, to show
// a refusal never depends on it.

const (
	msgLossDay   = "This bet could take your net loss past your daily loss limit of 10.00"
	msgWagerWeek = "This bet would take your wagers past your weekly wager limit of 12.00"
)

// rigDice sets the caller's client seed so that the next dice bet at
// roll-under 50 wins (or loses).
func rigDice(t *testing.T, env *apitest.Env, c *apitest.Client, win bool) {
	t.Helper()
	rig(t, env, c, games.Dice, games.Params{Target: "50"}, func(o games.Outcome) bool { return o.Dice.Win == win })
}

func diceBet(c *apitest.Client, stake string) apitest.Response {
	return c.Do("POST", "/api/games/dice", fmt.Sprintf(`{"betAmount": %s, "rollTarget": 50}`, stake))
}

// nonceOf reads the caller's active pair's nonce.
func nonceOf(t *testing.T, env *apitest.Env, c *apitest.Client) int64 {
	t.Helper()
	_, _, n := activePair(t, env, c)
	return n
}

// refused checks that a bet was refused with msg and changed nothing.
func refused(t *testing.T, env *apitest.Env, c *apitest.Client, res apitest.Response, msg string, bal money.Amount, nonce int64) {
	t.Helper()
	expect(t, res, 400, msg)
	if got := balance(t, c); got != bal {
		t.Fatalf("a refused bet moved the balance: %s → %s", bal, got)
	}
	if got := nonceOf(t, env, c); got != nonce {
		t.Fatalf("a refused bet used nonce %d → %d", nonce, got)
	}
}

func TestLossAndWagerLimits(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("limited")

	st := ok200(t, c.Do("GET", "/api/limits", nil))
	if st.Get("limits.canBet") != true || st.Get("limits.pending") != nil || len(st.Get("limits.usage").([]any)) != 3 ||
		st.Get("limits.loss.day") != nil || str(st.Get("limits.realityCheckMinutes")) != "0" {
		t.Fatalf("no limits: %s", st.Raw)
	}

	// A loss limit applies at once.
	set := ok200(t, c.Do("POST", "/api/limits", `{"loss": {"day": 10}}`))
	if fmt.Sprint(set.Get("limits.loss.day")) != "10" || set.Get("limits.pending") != nil {
		t.Fatalf("set a loss limit: %s", set.Raw)
	}
	// A lost bet of 6 leaves 4 to lose today: a bet of 5 is refused whether
	// it would win or lose, a bet of 4 is placed.
	rigDice(t, env, c, false)
	if res := diceBet(c, "6"); res.Status != 200 || res.Body["isWin"] != false {
		t.Fatalf("losing bet: %d %s", res.Status, res.Raw)
	}
	bal, nonce := balance(t, c), nonceOf(t, env, c)
	for _, win := range []bool{true, false} {
		rigDice(t, env, c, win)
		refused(t, env, c, diceBet(c, "5"), msgLossDay, bal, nonce)
	}
	if res := diceBet(c, "4"); res.Status != 200 {
		t.Fatalf("a bet up to the limit: %d %s", res.Status, res.Raw)
	}
	use := ok200(t, c.Do("GET", "/api/limits", nil))
	if use.Get("limits.usage.0.period") != "day" || fmt.Sprint(use.Get("limits.usage.0.wagered")) != "10" ||
		fmt.Sprint(use.Get("limits.usage.1.netLoss")) != "10" {
		t.Fatalf("usage after two lost bets: %s", use.Raw)
	}

	// Looser waits 24 hours; the current limit still refuses meanwhile.
	loose := ok200(t, c.Do("POST", "/api/limits", `{"loss": {"day": 20}, "wager": {"week": 12}}`))
	from, err := time.Parse(time.RFC3339, loose.Str("limits.pending.from"))
	if err != nil || fmt.Sprint(loose.Get("limits.loss.day")) != "10" ||
		fmt.Sprint(loose.Get("limits.pending.loss.day")) != "20" || fmt.Sprint(loose.Get("limits.wager.week")) != "12" ||
		time.Until(from) < 23*time.Hour || time.Until(from) > 25*time.Hour {
		t.Fatalf("a looser limit: %v %s", err, loose.Raw)
	}
	bal, nonce = balance(t, c), nonceOf(t, env, c)
	refused(t, env, c, diceBet(c, "0.10"), msgLossDay, bal, nonce)
	// Asking again for the same keeps the time; asking for something else
	// restarts it; asking for no loosening clears it.
	again := ok200(t, c.Do("POST", "/api/limits", `{"loss": {"day": 20}, "wager": {"week": 12}}`))
	if again.Str("limits.pending.from") != loose.Str("limits.pending.from") {
		t.Fatalf("the same request again moved the wait: %s", again.Raw)
	}
	if cleared := ok200(t, c.Do("POST", "/api/limits", `{"loss": {"day": 10}, "wager": {"week": 12}}`)); cleared.Get("limits.pending") != nil {
		t.Fatalf("nothing looser is still pending: %s", cleared.Raw)
	}
	ok200(t, c.Do("POST", "/api/limits", `{"loss": {"day": 20}, "wager": {"week": 12}}`))
	// The 24 hours pass (the database's clock decides: move the time back).
	dbExec(t, env, `UPDATE users SET next_limits_from = now() - interval '1 second' WHERE username = 'limited'`)
	now := ok200(t, c.Do("GET", "/api/limits", nil))
	if fmt.Sprint(now.Get("limits.loss.day")) != "20" || now.Get("limits.pending") != nil {
		t.Fatalf("after 24 hours: %s", now.Raw)
	}
	// Wagered 10 this week with a weekly wager limit of 12: 2 more.
	bal, nonce = balance(t, c), nonceOf(t, env, c)
	refused(t, env, c, diceBet(c, "2.01"), msgWagerWeek, bal, nonce)
	rigDice(t, env, c, true)
	if res := diceBet(c, "2"); res.Status != 200 {
		t.Fatalf("a bet up to the wager limit: %d %s", res.Status, res.Raw)
	}
	bal, nonce = balance(t, c), nonceOf(t, env, c)
	refused(t, env, c, diceBet(c, "0.10"), msgWagerWeek, bal, nonce)

	// A new period starts from zero.
	dbExec(t, env, `UPDATE users SET play_day = play_day - interval '1 day', play_week = play_week - interval '7 days'
		WHERE username = 'limited'`)
	if res := diceBet(c, "1"); res.Status != 200 {
		t.Fatalf("a bet in a new week: %d %s", res.Status, res.Raw)
	}
	// The counts match the ledger: this week's one bet.
	week := ok200(t, c.Do("GET", "/api/limits", nil))
	if fmt.Sprint(week.Get("limits.usage.1.wagered")) != "1" {
		t.Fatalf("usage in the new week: %s", week.Raw)
	}
	ledgerClean(t, env)
}

func TestLimitsInput(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("careful")
	before := ok200(t, c.Do("GET", "/api/limits", nil)).Raw
	for _, tc := range []struct{ body, msg string }{
		{`{"loss": {"day": "abc"}}`, "A limit is an amount of at least 0.01 with at most two decimal places"},
		{`{"loss": {"day": 0.001}}`, "A limit is an amount of at least 0.01 with at most two decimal places"},
		{`{"wager": {"month": -5}}`, "A limit is an amount of at least 0.01 with at most two decimal places"},
		{`{"wager": {"month": 0}}`, "A limit is an amount of at least 0.01 with at most two decimal places"},
		{`{"wager": {"week": 10000000001}}`, "A limit is at most 10000000000.00"},
		{`{"realityCheckMinutes": 3}`, "The reality check is every 5 to 1440 minutes, or 0 for none"},
		{`{"realityCheckMinutes": 1441}`, "The reality check is every 5 to 1440 minutes, or 0 for none"},
	} {
		expect(t, c.Do("POST", "/api/limits", tc.body), 400, tc.msg)
	}
	for _, days := range []string{"0", "43", "-1"} {
		expect(t, c.Do("POST", "/api/limits/break", `{"days": `+days+`}`), 400, "A break lasts 1 to 42 days")
	}
	expect(t, c.Do("POST", "/api/limits/self-exclusion", `{"duration": "forever", "password": "secret123"}`), 400,
		`Self-exclusion is "six_months" or "permanent"`)
	expect(t, c.Do("POST", "/api/limits/self-exclusion", `{"duration": "permanent"}`), 400, "Current password is required")
	expect(t, c.Do("POST", "/api/limits/self-exclusion", `{"duration": "permanent", "password": "guess"}`), 400,
		"Current password is incorrect")
	if after := ok200(t, c.Do("GET", "/api/limits", nil)).Raw; string(after) != string(before) {
		t.Fatalf("bad input changed the settings:\n%s\n%s", before, after)
	}
	expect(t, env.Client().Do("GET", "/api/limits", nil), 401, "No authentication token, access denied")
	expect(t, env.Client().Do("POST", "/api/limits/break", `{"days": 1}`), 401, "No authentication token, access denied")
}

// A break and a self-exclusion refuse every stake — instant bets, new games
// and a running game's extra stake — while sign-in, history and cashing out
// still work; neither can be shortened, and an admin only sees them.
func TestBreakAndSelfExclusion(t *testing.T) {
	t.Parallel()
	env, admin, _ := startAdmin(t)
	c := env.Client()
	c.Register("resting")
	user := c.Do("GET", "/api/auth/user", nil).Str("user._id")

	// A Mines game running when the break starts can still be cashed out.
	rig(t, env, c, games.Mines, games.Params{Mines: 1, Reveals: []int{0}}, func(o games.Outcome) bool {
		return o.Mines.MineTiles[0] != 0
	})
	game := ok(t, c.Do("POST", "/api/games/mines/start", `{"betAmount": 1, "mineCount": 1}`)).Str("gameId")
	ok(t, c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": game, "row": 0, "col": 0}))

	week := ok200(t, c.Do("POST", "/api/limits/break", `{"days": 7}`))
	until, err := time.Parse(time.RFC3339, week.Str("limits.breakUntil"))
	if err != nil || week.Get("limits.canBet") != false || time.Until(until) < 6*24*time.Hour {
		t.Fatalf("a week's break: %v %s", err, week.Raw)
	}
	msg := "You are taking a break from betting until " + until.UTC().Format("2 January 2006, 15:04 UTC")
	bal, nonce := balance(t, c), nonceOf(t, env, c)
	refused(t, env, c, diceBet(c, "1"), msg, bal, nonce)
	refused(t, env, c, c.Do("POST", "/api/games/pump/start", `{"betAmount": 1, "difficulty": "easy"}`), msg, bal, nonce)
	if res := c.Do("POST", "/api/games/mines/cashout", map[string]any{"gameId": game}); res.Status != 200 {
		t.Fatalf("cash out during a break: %d %s", res.Status, res.Raw)
	}
	// A shorter break does not shorten it.
	if day := ok200(t, c.Do("POST", "/api/limits/break", `{"days": 1}`)); day.Str("limits.breakUntil") != week.Str("limits.breakUntil") {
		t.Fatalf("a shorter break moved the end: %s", day.Raw)
	}
	// Sign-in works.
	env.Client().Login("resting", "secret123")

	ex := ok200(t, c.Do("POST", "/api/limits/self-exclusion", `{"duration": "permanent", "password": "secret123"}`))
	if ex.Get("limits.excludedPermanently") != true || ex.Get("limits.excludedUntil") != nil {
		t.Fatalf("permanent self-exclusion: %s", ex.Raw)
	}
	const permanent = "You have excluded yourself from betting permanently"
	bal, nonce = balance(t, c), nonceOf(t, env, c)
	refused(t, env, c, diceBet(c, "1"), permanent, bal, nonce)
	if six := ok200(t, c.Do("POST", "/api/limits/self-exclusion", `{"duration": "six_months", "password": "secret123"}`)); six.Get("limits.excludedPermanently") != true {
		t.Fatalf("six months after permanent: %s", six.Raw)
	}
	// Limits can still be set (tighter only helps), history read.
	ok200(t, c.Do("POST", "/api/limits", `{"loss": {"day": 5}}`))
	if res := c.Do("GET", "/api/games/bets", nil); res.Status != 200 {
		t.Fatalf("history: %d %s", res.Status, res.Raw)
	}

	// An admin sees the settings and has no way to change them.
	seen := ok200(t, admin.Do("GET", "/api/auth/users/"+user+"/limits", nil))
	if seen.Get("limits.excludedPermanently") != true || seen.Str("limits.breakUntil") != week.Str("limits.breakUntil") ||
		fmt.Sprint(seen.Get("limits.loss.day")) != "5" {
		t.Fatalf("the admin's view: %s", seen.Raw)
	}
	for _, method := range []string{"POST", "PATCH", "PUT", "DELETE"} {
		if res := admin.Do(method, "/api/auth/users/"+user+"/limits", `{}`); res.Status != 404 && res.Status != 405 {
			t.Fatalf("%s on a player's limits: %d %s", method, res.Status, res.Raw)
		}
	}
	expect(t, c.Do("GET", "/api/auth/users/"+user+"/limits", nil), 403, "Admin access required")
	// An admin's credit does not lift it either.
	ok200(t, admin.Do("PATCH", "/api/auth/users/"+user+"/balance", `{"amount": 50, "reason": "goodwill"}`))
	bal, nonce = balance(t, c), nonceOf(t, env, c)
	refused(t, env, c, diceBet(c, "1"), permanent, bal, nonce)
	ledgerClean(t, env)
}

// A Blackjack double is a stake like any other: refused past a limit, with
// the hand left as it was.
func TestLimitsRefuseExtraStakes(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("doubler")
	ok200(t, c.Do("POST", "/api/limits", `{"wager": {"day": 15}}`))
	rigBJ(t, env, c, "d", func(r *games.BlackjackReplay) bool {
		return r.Result != "" && r.Insurance == "" && r.Stakes == 2*money.MultiplierScale
	})
	start := ok(t, c.Do("POST", blackjackStartPath, `{"betAmount": 10}`))
	id := start.Str("gameId")
	bal := balance(t, c)
	expect(t, c.Do("POST", "/api/games/blackjack/double", map[string]any{"gameId": id}), 400,
		"This bet would take your wagers past your daily wager limit of 15.00")
	if balance(t, c) != bal || len(betEntries(t, env, id)) != 1 {
		t.Fatal("a refused double moved money")
	}
	// The hand is still there to play out.
	if res := c.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id}); res.Status != 200 {
		t.Fatalf("stand after a refused double: %d %s", res.Status, res.Raw)
	}
	ledgerClean(t, env)
}

// The reality check counts this session's bets.
func TestRealityCheck(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("mindful")
	ok200(t, c.Do("POST", "/api/limits", `{"realityCheckMinutes": 30}`))
	rigDice(t, env, c, false)
	if res := diceBet(c, "3"); res.Status != 200 {
		t.Fatal(res.Raw)
	}
	rc := ok200(t, c.Do("GET", "/api/limits/reality-check", nil))
	signed, err := time.Parse(time.RFC3339, rc.Str("signedInAt"))
	if err != nil || !signed.Equal(env.Clock.Now().Truncate(time.Second)) && !signed.Before(env.Clock.Now()) || str(rc.Get("bets")) != "1" ||
		fmt.Sprint(rc.Get("net")) != "-3" || fmt.Sprint(rc.Get("wagered")) != "3" || str(rc.Get("intervalMinutes")) != "30" {
		t.Fatalf("reality check: %v %s", err, rc.Raw)
	}
	// A new session starts from zero.
	env.Clock.Advance(time.Second)
	other := env.Client()
	other.Login("mindful", "secret123")
	if rc := ok200(t, other.Do("GET", "/api/limits/reality-check", nil)); fmt.Sprint(rc.Get("net")) != "0" {
		t.Fatalf("a new session's reality check: %s", rc.Raw)
	}
}

// ok200 fails unless the call answered 200.
func ok200(t *testing.T, res apitest.Response) apitest.Response {
	t.Helper()
	if res.Status != 200 {
		t.Fatalf("got %d %s", res.Status, res.Raw)
	}
	return res
}
