package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/wallet"
	"github.com/fairplay/fairplay/test/apitest"
)

// balance reads the user's balance through the API.
func balance(t *testing.T, c *apitest.Client) money.Amount {
	t.Helper()
	res := c.Do("GET", "/api/auth/user", nil)
	a, err := money.Parse(fmt.Sprint(res.Get("user.balance")))
	if err != nil {
		t.Fatalf("balance %v: %v", res.Get("user.balance"), err)
	}
	return a
}

func amount(t *testing.T, v any) money.Amount {
	t.Helper()
	a, err := money.Parse(fmt.Sprint(v))
	if err != nil {
		t.Fatalf("amount %v: %v", v, err)
	}
	return a
}

func ledgerClean(t *testing.T, env *apitest.Env) wallet.Report {
	t.Helper()
	return env.LedgerClean(t)
}

func TestInstantGames(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("player1")
	bal := balance(t, c)

	dice := c.Do("POST", "/api/games/dice", map[string]any{"betAmount": 2.5, "rollTarget": 49.5})
	if dice.Status != 200 {
		t.Fatalf("dice: %d %s", dice.Status, dice.Raw)
	}
	for _, k := range []string{"result", "isWin", "winAmount", "newBalance"} {
		if _, ok := dice.Body[k]; !ok {
			t.Fatalf("dice response lacks %s: %s", k, dice.Raw)
		}
	}
	if fmt.Sprint(dice.Body["multiplier"]) != "2" {
		t.Fatalf("99/49.5 = 2: %s", dice.Raw)
	}
	win := amount(t, dice.Body["winAmount"])
	if dice.Body["isWin"] == true && win != money.Dollars(5) || dice.Body["isWin"] == false && win != 0 {
		t.Fatalf("dice payout %s for %s", win, dice.Raw)
	}
	want := bal - money.FromCents(250) + win
	if got := amount(t, dice.Body["newBalance"]); got != want || balance(t, c) != want {
		t.Fatalf("balance after dice %s, want %s", got, want)
	}
	bal = want

	pl := c.Do("POST", "/api/games/plinko", map[string]any{"betAmount": 1, "rows": 12, "risk": "high"})
	if pl.Status != 200 {
		t.Fatalf("plinko: %d %s", pl.Status, pl.Raw)
	}
	decisions := pl.Body["decisions"].([]any)
	rights := 0
	for _, d := range decisions {
		if fmt.Sprint(d) == "1" {
			rights++
		}
	}
	if len(decisions) != 12 || fmt.Sprint(pl.Body["finalBucket"]) != fmt.Sprint(rights) {
		t.Fatalf("plinko decisions vs bucket: %s", pl.Raw)
	}
	bal = bal - money.Dollars(1) + amount(t, pl.Body["winAmount"])
	if amount(t, pl.Body["newBalance"]) != bal {
		t.Fatalf("plinko balance: %s", pl.Raw)
	}

	k := c.Do("POST", "/api/games/keno", map[string]any{"betAmount": 0.1, "selectedNumbers": []int{1, 2, 3, 40}, "riskLevel": "classic"})
	if k.Status != 200 || k.Body["success"] != true || len(k.Body["drawnNumbers"].([]any)) != 10 {
		t.Fatalf("keno: %d %s", k.Status, k.Raw)
	}
	for _, m := range k.Body["matches"].([]any) {
		if !strings.Contains(" 1 2 3 40 ", " "+fmt.Sprint(m)+" ") {
			t.Fatalf("keno match %v not picked", m)
		}
	}
	bal = bal - money.FromCents(10) + amount(t, k.Body["winAmount"])
	if amount(t, k.Body["newBalance"]) != bal || balance(t, c) != bal {
		t.Fatalf("keno balance: %s", k.Raw)
	}

	// History: newest first, with fairness data, the server seed still secret.
	h := c.Do("GET", "/api/games/bets?page=1&limit=2", nil)
	bets := h.Body["bets"].([]any)
	if h.Status != 200 || len(bets) != 2 || fmt.Sprint(h.Body["totalPages"]) != "2" {
		t.Fatalf("history: %d %s", h.Status, h.Raw)
	}
	first := bets[0].(map[string]any)
	if first["game"] != "keno" || first["fairness"].(map[string]any)["serverSeed"] != "" {
		t.Fatalf("history order or secret seed leaked: %v", first)
	}
	if fmt.Sprint(first["fairness"].(map[string]any)["nonce"]) != "3" {
		t.Fatalf("third bet has nonce %v, want 3", first["fairness"])
	}
	one := c.Do("GET", "/api/games/bets/"+first["_id"].(string), nil)
	if one.Status != 200 || one.Str("bet.game") != "keno" {
		t.Fatalf("get bet: %d %s", one.Status, one.Raw)
	}
	other := env.Client()
	other.Register("player2")
	if res := other.Do("GET", "/api/games/bets/"+first["_id"].(string), nil); res.Status != 404 {
		t.Fatalf("someone else's bet: %d", res.Status)
	}
	for q, want := range map[string]int{"page=0&limit=2": 400, "page=1&limit=101": 400, "page=x": 400, "page=-1": 400} {
		if res := c.Do("GET", "/api/games/bets?"+q, nil); res.Status != want {
			t.Fatalf("history %s: %d %s", q, res.Status, res.Raw)
		}
	}
	ledgerClean(t, env)
}

func TestBetValidation(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("validator")
	before := balance(t, c)
	cases := []struct {
		path string
		body string
		msg  string
	}{
		{"/api/games/dice", `{"betAmount": 0, "rollTarget": 50}`, "Please enter a valid bet amount"},
		{"/api/games/dice", `{"betAmount": -1, "rollTarget": 50}`, "Please enter a valid bet amount"},
		{"/api/games/dice", `{"betAmount": 0.000000001, "rollTarget": 50}`, "Please enter a valid bet amount"},
		{"/api/games/dice", `{"betAmount": 1e400, "rollTarget": 50}`, "Please enter a valid bet amount"},
		{"/api/games/dice", `{"betAmount": "abc", "rollTarget": 50}`, "Please enter a valid bet amount"},
		{"/api/games/dice", `{"rollTarget": 50}`, "Please enter a valid bet amount"},
		{"/api/games/dice", `{"betAmount": 1001, "rollTarget": 50}`, "Insufficient balance"},
		{"/api/games/dice", `{"betAmount": 1, "rollTarget": 1.9}`, "Roll target must be between 2 and 98 in steps of 0.1"},
		{"/api/games/dice", `{"betAmount": 1, "rollTarget": 98.1}`, "Roll target must be between 2 and 98 in steps of 0.1"},
		{"/api/games/dice", `{"betAmount": 1, "rollTarget": 50.05}`, "Roll target must be between 2 and 98 in steps of 0.1"},
		{"/api/games/plinko", `{"betAmount": 1, "rows": 7, "risk": "low"}`, "Rows must be between 8 and 16"},
		{"/api/games/plinko", `{"betAmount": 1, "rows": 17, "risk": "low"}`, "Rows must be between 8 and 16"},
		{"/api/games/plinko", `{"betAmount": 1, "rows": 8, "risk": "extreme"}`, "Risk must be low, medium or high"},
		{"/api/games/plinko", `{"betAmount": 1, "rows": 8.5, "risk": "low"}`, "Invalid request: rows must be a whole number"},
		{"/api/games/keno", `{"betAmount": 0, "selectedNumbers": [], "riskLevel": "low"}`, "Please select at least one number"},
		{"/api/games/keno", `{"betAmount": 0, "selectedNumbers": [1], "riskLevel": "low"}`, "Please enter a valid bet amount"},
		{"/api/games/keno", `{"betAmount": 5000, "selectedNumbers": [1], "riskLevel": "low"}`, "Insufficient balance"},
		{"/api/games/keno", `{"betAmount": 1, "selectedNumbers": [0], "riskLevel": "low"}`, "Numbers must be between 1 and 40"},
		{"/api/games/keno", `{"betAmount": 1, "selectedNumbers": [41], "riskLevel": "low"}`, "Numbers must be between 1 and 40"},
		{"/api/games/keno", `{"betAmount": 1, "selectedNumbers": [3, 3], "riskLevel": "low"}`, "Each number can only be picked once"},
		{"/api/games/keno", `{"betAmount": 1, "selectedNumbers": [1,2,3,4,5,6,7,8,9,10,11], "riskLevel": "low"}`, "You can select at most 10 numbers"},
		{"/api/games/keno", `{"betAmount": 1, "selectedNumbers": [1], "riskLevel": "wild"}`, "Invalid risk level"},
	}
	for _, tc := range cases {
		res := c.Do("POST", tc.path, tc.body)
		if res.Status != http.StatusBadRequest || res.Message() != tc.msg {
			t.Errorf("%s %s: got %d %q, want 400 %q", tc.path, tc.body, res.Status, res.Message(), tc.msg)
		}
	}
	if balance(t, c) != before {
		t.Fatal("a refused bet changed the balance")
	}
	seeds := c.Do("GET", "/api/fair/seeds", nil)
	if fmt.Sprint(seeds.Get("seeds.nonce")) != "0" {
		t.Fatalf("a refused bet took a nonce: %s", seeds.Raw)
	}
	anon := env.Client().Do("POST", "/api/games/dice", `{"betAmount": 1, "rollTarget": 50}`)
	if anon.Status != 401 {
		t.Fatalf("anonymous bet: %d", anon.Status)
	}
	var bets int
	if err := env.App.Postgres.QueryRow(context.Background(), `SELECT count(*) FROM bets`).Scan(&bets); err != nil || bets != 0 {
		t.Fatalf("refused bets recorded: %d %v", bets, err)
	}
}

// Fifty concurrent bets from one player whose balance covers exactly ten.
func TestConcurrentBetsNeverOverdraw(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("racer")
	// 1000 dollars covers exactly ten bets of 100; rolling target 2 almost always loses,
	// and a win would only pay more, so count what the balance allowed.
	const n = 50
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = c.Do("POST", "/api/games/dice", `{"betAmount": 100, "rollTarget": 2}`).Status
		}()
	}
	wg.Wait()
	ok, poor := 0, 0
	for _, s := range statuses {
		switch s {
		case 200:
			ok++
		case 400:
			poor++
		}
	}
	var won int
	if err := env.App.Postgres.QueryRow(context.Background(), `SELECT count(*) FROM bets WHERE payout > 0`).Scan(&won); err != nil {
		t.Fatal(err)
	}
	if won == 0 && ok != 10 || ok+poor != n {
		t.Fatalf("%d succeeded, %d refused (%d won): %v", ok, poor, won, statuses)
	}
	if b := balance(t, c); b < 0 || won == 0 && b != 0 {
		t.Fatalf("balance %s", b)
	}
	r := ledgerClean(t, env)
	var nonces int64
	if err := env.App.Postgres.QueryRow(context.Background(), `SELECT max(seed_nonce) FROM users`).Scan(&nonces); err != nil || nonces != int64(ok) {
		t.Fatalf("nonce %d after %d bets (%v)", nonces, ok, err)
	}
	t.Logf("ledger: %+v", r.Totals)
}

// A bet that fails inside its transaction leaves balance, nonce and ledger untouched.
func TestFailedBetChangesNothing(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ctx := context.Background()
	// Make the database refuse one specific bet after the debit and the nonce were taken.
	_, err := env.App.Postgres.Exec(ctx, `
		CREATE FUNCTION refuse_bet() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'injected failure'; END $$;
		CREATE TRIGGER refuse_bet BEFORE INSERT ON bets FOR EACH ROW
		WHEN (NEW.params->>'target' = '66.6') EXECUTE FUNCTION refuse_bet();`)
	if err != nil {
		t.Fatal(err)
	}
	c := env.Client()
	c.Register("unlucky")
	c.Do("POST", "/api/games/dice", `{"betAmount": 1, "rollTarget": 50}`)
	bal := balance(t, c)
	var entries int
	_ = env.App.Postgres.QueryRow(ctx, `SELECT count(*) FROM ledger_entries`).Scan(&entries)

	res := c.Do("POST", "/api/games/dice", `{"betAmount": 1, "rollTarget": 66.6}`)
	if res.Status != 500 || res.Message() != "Something went wrong. Please try again." {
		t.Fatalf("injected failure: %d %s", res.Status, res.Raw)
	}
	if strings.Contains(string(res.Raw), "injected") {
		t.Fatal("the database error leaked to the client")
	}
	if balance(t, c) != bal {
		t.Fatal("failed bet changed the balance")
	}
	var after int
	_ = env.App.Postgres.QueryRow(ctx, `SELECT count(*) FROM ledger_entries`).Scan(&after)
	if after != entries {
		t.Fatalf("failed bet wrote ledger entries: %d -> %d", entries, after)
	}
	if n := c.Do("GET", "/api/fair/seeds", nil).Get("seeds.nonce"); fmt.Sprint(n) != "1" {
		t.Fatalf("failed bet consumed a nonce: %v", n)
	}
	ledgerClean(t, env)
}

func TestFairnessRotateAndVerify(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("skeptic")
	seeds := c.Do("GET", "/api/fair/seeds", nil)
	hash := seeds.Str("seeds.serverSeedHash")
	if seeds.Status != 200 || len(hash) != 64 || fmt.Sprint(seeds.Get("seeds.nonce")) != "0" {
		t.Fatalf("seeds: %s", seeds.Raw)
	}
	if res := c.Do("POST", "/api/fair/client-seed", map[string]any{"clientSeed": "my lucky seed"}); res.Status != 200 || res.Str("seeds.clientSeed") != "my lucky seed" {
		t.Fatalf("set client seed: %d %s", res.Status, res.Raw)
	}
	for _, bad := range []string{"", strings.Repeat("x", 65), "tab\there"} {
		if res := c.Do("POST", "/api/fair/client-seed", map[string]any{"clientSeed": bad}); res.Status != 400 {
			t.Fatalf("client seed %q: %d", bad, res.Status)
		}
	}
	bet := c.Do("POST", "/api/games/keno", map[string]any{"betAmount": 1, "selectedNumbers": []int{5, 10, 15}, "riskLevel": "high"})
	betID := bet.Str("betId")
	if bet.Str("fairness.serverSeedHash") != hash || bet.Str("fairness.clientSeed") != "my lucky seed" || fmt.Sprint(bet.Get("fairness.nonce")) != "1" {
		t.Fatalf("bet fairness: %s", bet.Raw)
	}
	if res := c.Do("GET", "/api/fair/verify/"+betID, nil); res.Status != 409 {
		t.Fatalf("verify before reveal: %d %s", res.Status, res.Raw)
	}
	rot := c.Do("POST", "/api/fair/rotate", map[string]any{})
	revealed := rot.Str("revealedServerSeed")
	if rot.Status != 200 || fair.HashServerSeed(revealed) != hash || rot.Str("previousServerSeedHash") != hash ||
		fmt.Sprint(rot.Get("previousNonce")) != "1" || rot.Str("seeds.serverSeedHash") == hash || fmt.Sprint(rot.Get("seeds.nonce")) != "0" {
		t.Fatalf("rotate: %d %s", rot.Status, rot.Raw)
	}
	v := c.Do("GET", "/api/fair/verify/"+betID, nil)
	if v.Status != 200 || v.Body["matches"] != true || v.Str("serverSeed") != revealed {
		t.Fatalf("verify: %d %s", v.Status, v.Raw)
	}
	// The player can recompute it with the public engine too.
	out, err := games.Replay(games.Keno, fair.NewStream(revealed, "my lucky seed", 1), games.Params{Picks: []int{5, 10, 15}, Risk: "high"})
	if err != nil {
		t.Fatal(err)
	}
	drawn, _ := json.Marshal(out.Keno.Drawn)
	got, _ := json.Marshal(bet.Body["drawnNumbers"])
	if string(drawn) != string(got) {
		t.Fatalf("independent replay %s, bet drew %s", drawn, got)
	}
	// History now shows the revealed seed.
	if res := c.Do("GET", "/api/games/bets/"+betID, nil); res.Str("bet.fairness.serverSeed") != revealed {
		t.Fatalf("history after reveal: %s", res.Raw)
	}
}

func TestBetMetrics(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("counted")
	c.Do("POST", "/api/games/dice", `{"betAmount": 1.5, "rollTarget": 50}`)
	c.Do("POST", "/api/games/dice", `{"betAmount": 1.5, "rollTarget": 50}`)
	res, err := http.Get(env.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body := readAll(res)
	for _, want := range []string{`fairplay_bets_total{game="dice"} 2`, `fairplay_wagered_dollars_total{game="dice"} 3`, `fairplay_paid_out_dollars_total{game="dice"}`} {
		if !strings.Contains(body, want) {
			t.Fatalf("metrics lack %s", want)
		}
	}
}

func TestLedgerVerifyDetectsDrift(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("auditee")
	c.Do("POST", "/api/games/dice", `{"betAmount": 1, "rollTarget": 50}`)
	ledgerClean(t, env)
	if _, err := env.App.Postgres.Exec(context.Background(), `UPDATE users SET balance = balance + 1`); err != nil {
		t.Fatal(err)
	}
	r, err := wallet.Verify(context.Background(), postgres.NewLedgerStore(env.App.Postgres))
	if err != nil || r.Clean() || len(r.Drifts) != 1 {
		t.Fatalf("drift not detected: %+v %v", r, err)
	}
}

// Each server remembers a player's seed pair and draws the next bet from it
// before asking Postgres (one round trip). Bets alternating between two
// replicas, a client seed changed on one and a rotation on the other must
// still use every nonce once, in order, with the client seed of the moment,
// and verify afterwards.
func TestRememberedSeedPairsAcrossReplicas(t *testing.T) {
	t.Parallel()
	a := apitest.Start(t)
	b := a.Replica()
	ca := a.Client()
	ca.Register("hopper")
	cb := ca.Via(b)
	type placed struct {
		id, clientSeed string
		nonce          int
		roll           any
	}
	var bets []placed
	bet := func(c *apitest.Client, wantNonce int, wantSeed string) {
		t.Helper()
		res := c.Do("POST", "/api/games/dice", `{"betAmount": 1, "rollTarget": 50}`)
		if res.Status != 200 {
			t.Fatalf("bet: %d %s", res.Status, res.Raw)
		}
		n, seed := fmt.Sprint(res.Get("fairness.nonce")), res.Str("fairness.clientSeed")
		if n != fmt.Sprint(wantNonce) || (wantSeed != "" && seed != wantSeed) {
			t.Fatalf("bet %d: nonce %s client seed %q, want %d %q: %s", len(bets)+1, n, seed, wantNonce, wantSeed, res.Raw)
		}
		bets = append(bets, placed{id: res.Str("betId"), clientSeed: seed, nonce: wantNonce, roll: res.Get("result")})
	}
	bet(ca, 1, "")
	bet(ca, 2, "") // a remembers the pair now
	bet(cb, 3, "") // b learns it the long way
	bet(ca, 4, "") // a's guess (3) is stale: the pair as it is now comes back, and the retry places it
	bet(cb, 5, "")
	bet(cb, 6, "")
	if res := cb.Do("POST", "/api/fair/client-seed", map[string]any{"clientSeed": "changed on b"}); res.Status != 200 {
		t.Fatalf("client seed: %d %s", res.Status, res.Raw)
	}
	bet(ca, 7, "changed on b") // a still remembers the old client seed
	bet(cb, 8, "changed on b")
	rot := ca.Do("POST", "/api/fair/rotate", map[string]any{})
	if rot.Status != 200 || fmt.Sprint(rot.Get("previousNonce")) != "8" {
		t.Fatalf("rotate: %d %s", rot.Status, rot.Raw)
	}
	bet(cb, 1, "changed on b") // b remembers the revealed pair
	bet(ca, 2, "changed on b")
	ca.Do("POST", "/api/fair/rotate", map[string]any{})
	for i, p := range bets {
		v := ca.Do("GET", "/api/fair/verify/"+p.id, nil)
		if v.Status != 200 || v.Body["matches"] != true {
			t.Fatalf("bet %d (nonce %d) does not verify: %d %s", i+1, p.nonce, v.Status, v.Raw)
		}
	}
	var gaps int
	if err := a.App.Postgres.QueryRow(context.Background(), `
		SELECT count(*) FROM seed_pairs p JOIN users u ON u.id = p.user_id
		WHERE u.username = 'hopper'
		  AND CASE WHEN u.seed_pair = p.id THEN u.seed_nonce ELSE p.nonce END <> (SELECT count(*) FROM bets b WHERE b.seed_pair_id = p.id)`).Scan(&gaps); err != nil || gaps != 0 {
		t.Fatalf("pairs whose nonce is not their bet count: %d %v", gaps, err)
	}
}
