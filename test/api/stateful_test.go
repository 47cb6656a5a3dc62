package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/games/mines"
	"github.com/fairplay/fairplay/internal/games/pump"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/test/apitest"
)

// The stateful games are tested as the player who already knows the hidden
// layout: the test reads the active server seed from the database and
// replays the next bet offline with games.Replay (the public verifier),
// choosing a client seed (set through the API) that deals the situation it
// wants. Nothing is mocked: the server draws everything itself.

// activePair returns the caller's active seed pair, server seed included.
func activePair(t *testing.T, env *apitest.Env, c *apitest.Client) (server, client string, nonce int64) {
	t.Helper()
	if res := c.Do("GET", "/api/fair/seeds", nil); res.Status != 200 {
		t.Fatalf("seeds: %d %s", res.Status, res.Raw)
	}
	user := c.Do("GET", "/api/auth/user", nil).Str("user._id")
	err := env.App.Postgres.QueryRow(context.Background(), `
		SELECT p.server_seed, p.client_seed, u.seed_nonce FROM seed_pairs p JOIN users u ON u.seed_pair = p.id
		WHERE p.user_id = $1 AND p.revealed_at IS NULL`, user).
		Scan(&server, &client, &nonce)
	if err != nil {
		t.Fatalf("active seed pair: %v", err)
	}
	return server, client, nonce
}

// rig sets the caller's client seed so that their next bet, replayed with p,
// is one that want accepts, and returns that replay.
func rig(t *testing.T, env *apitest.Env, c *apitest.Client, game games.Name, p games.Params, want func(games.Outcome) bool) games.Outcome {
	t.Helper()
	server, _, nonce := activePair(t, env, c)
	for i := range 50_000 {
		seed := fmt.Sprintf("rig-%d", i)
		o, err := games.Replay(game, fair.NewStream(server, seed, uint64(nonce+1)), p)
		if err != nil || !want(o) {
			continue
		}
		if res := c.Do("POST", "/api/fair/client-seed", map[string]any{"clientSeed": seed}); res.Status != 200 {
			t.Fatalf("set client seed: %d %s", res.Status, res.Raw)
		}
		return o
	}
	t.Fatalf("no client seed deals the wanted %s game", game)
	return games.Outcome{}
}

// layout replays a started game's hidden layout from its fairness data.
func layout(t *testing.T, env *apitest.Env, c *apitest.Client, game games.Name, started apitest.Response, p games.Params) games.Outcome {
	t.Helper()
	server, _, _ := activePair(t, env, c)
	nonce, err := json.Number(fmt.Sprint(started.Get("fairness.nonce"))).Int64()
	if err != nil {
		t.Fatalf("nonce in %s", started.Raw)
	}
	o, err := games.Replay(game, fair.NewStream(server, started.Str("fairness.clientSeed"), uint64(nonce)), p)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func mult(t *testing.T, v any) money.Multiplier {
	t.Helper()
	m, err := money.ParseMultiplier(fmt.Sprint(v))
	if err != nil {
		t.Fatalf("multiplier %v: %v", v, err)
	}
	return m
}

func mulFloor(t *testing.T, a money.Amount, m money.Multiplier) money.Amount {
	t.Helper()
	p, err := money.MulFloor(a, m)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func rowCol(tile int) map[string]int {
	return map[string]int{"row": tile / mines.Size, "col": tile % mines.Size}
}

// safeTiles are the tiles of the board that are not mines, in order.
func safeTiles(mineTiles []int) []int {
	var out []int
	for t := range mines.Tiles {
		if !slices.Contains(mineTiles, t) {
			out = append(out, t)
		}
	}
	return out
}

func expect(t *testing.T, res apitest.Response, status int, msg string) {
	t.Helper()
	if res.Status != status || msg != "" && res.Message() != msg {
		t.Fatalf("got %d %s, want %d %q", res.Status, res.Raw, status, msg)
	}
}

func ok(t *testing.T, res apitest.Response) apitest.Response {
	t.Helper()
	if res.Status != 200 || res.Body["success"] != true {
		t.Fatalf("got %d %s", res.Status, res.Raw)
	}
	return res
}

// verifyAll rotates the caller's seed pair and verifies every settled bet.
func verifyAll(t *testing.T, c *apitest.Client) {
	t.Helper()
	if res := c.Do("POST", "/api/fair/rotate", map[string]any{}); res.Status != 200 {
		t.Fatalf("rotate: %d %s", res.Status, res.Raw)
	}
	h := c.Do("GET", "/api/games/bets?limit=100", nil)
	bets, _ := h.Body["bets"].([]any)
	if len(bets) == 0 {
		t.Fatalf("no bets: %s", h.Raw)
	}
	for _, b := range bets {
		bet := b.(map[string]any)
		v := c.Do("GET", "/api/fair/verify/"+bet["_id"].(string), nil)
		if v.Status != 200 || v.Body["matches"] != true {
			t.Fatalf("verify %s bet %v: %d %s", bet["game"], bet["params"], v.Status, v.Raw)
		}
	}
}

// payoutEntries counts each bet's payout ledger entries.
func payoutEntries(t *testing.T, env *apitest.Env) map[string]int {
	t.Helper()
	rows, err := env.App.Postgres.Query(context.Background(), `
		SELECT b.id::text, count(l.id) FROM bets b
		LEFT JOIN ledger_entries l ON l.ref_id = b.id AND l.kind = 'payout' GROUP BY b.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		out[id] = n
	}
	return out
}

func TestMinesGame(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("miner")
	bal := balance(t, c)
	bet := money.Dollars(2)

	expect(t, c.Do("POST", "/api/games/mines/start", `{"betAmount": 0, "mineCount": 3}`), 400, "Please enter a valid bet amount")
	expect(t, c.Do("POST", "/api/games/mines/start", `{"betAmount": 1, "mineCount": 0}`), 400, "Mine count must be between 1 and 24")
	expect(t, c.Do("POST", "/api/games/mines/start", `{"betAmount": 1, "mineCount": 25}`), 400, "Mine count must be between 1 and 24")
	expect(t, c.Do("POST", "/api/games/mines/start", `{"betAmount": 1001, "mineCount": 3}`), 400, "Insufficient balance")
	expect(t, env.Client().Do("POST", "/api/games/mines/start", `{"betAmount": 1, "mineCount": 3}`), 401, "")

	start := ok(t, c.Do("POST", "/api/games/mines/start", `{"betAmount": 2, "mineCount": 3}`))
	id := start.Str("gameId")
	if amount(t, start.Body["newBalance"]) != bal-bet || balance(t, c) != bal-bet {
		t.Fatalf("start did not debit the stake: %s", start.Raw)
	}
	board := layout(t, env, c, games.Mines, start, games.Params{Mines: 3}).Mines
	safe := safeTiles(board.MineTiles)

	// One game at a time: a second start is refused and debits nothing.
	expect(t, c.Do("POST", "/api/games/mines/start", `{"betAmount": 2, "mineCount": 3}`), 409, "You already have a game in progress")
	if balance(t, c) != bal-bet {
		t.Fatal("a refused start changed the balance")
	}
	// The running game can be resumed, without its mines.
	active := c.Do("GET", "/api/games/active", nil)
	if active.Status != 200 || active.Str("mines.gameId") != id || fmt.Sprint(active.Get("mines.mineCount")) != "3" ||
		active.Body["pump"] != nil || active.Body["blackjack"] != nil || !strings.Contains(string(active.Raw), `"pump":null`) {
		t.Fatalf("active games: %d %s", active.Status, active.Raw)
	}
	for _, secret := range []string{"mineTiles", "minePositions", "hitTile"} {
		if strings.Contains(string(active.Raw), secret) {
			t.Fatalf("active game leaks %s: %s", secret, active.Raw)
		}
	}
	if res := c.Do("GET", "/api/games/bets/"+id, nil); res.Str("bet.status") != "active" || res.Str("bet.outcome") != "" {
		t.Fatalf("running game in the history: %s", res.Raw)
	}
	expect(t, c.Do("POST", "/api/fair/rotate", map[string]any{}), 409, "Finish your running game before rotating the seed pair")
	// A new client seed applies to later bets; this game keeps the seeds it was dealt with.
	if res := c.Do("POST", "/api/fair/client-seed", map[string]any{"clientSeed": "changed mid-game"}); res.Status != 200 {
		t.Fatalf("client seed during a game: %d %s", res.Status, res.Raw)
	}

	// Refused actions change nothing.
	expect(t, c.Do("POST", "/api/games/mines/cashout", map[string]any{"gameId": id}), 400, "Reveal at least one tile before cashing out")
	expect(t, c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": id, "row": 5, "col": 0}), 400, "Tile must be on the 5x5 board")
	expect(t, c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": id, "row": 0, "col": -1}), 400, "Tile must be on the 5x5 board")
	expect(t, c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": id, "row": 0}), 400, "Tile must be on the 5x5 board")
	expect(t, c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": "nope", "row": 0, "col": 0}), 400, "Invalid game id")
	other := env.Client()
	other.Register("snooper")
	expect(t, other.Do("POST", "/api/games/mines/click", map[string]any{"gameId": id, "row": 0, "col": 0}), 404, "Game not found")
	expect(t, other.Do("POST", "/api/games/mines/cashout", map[string]any{"gameId": id}), 404, "Game not found")
	expect(t, c.Do("POST", "/api/games/pump/pump", map[string]any{"gameId": id}), 404, "Game not found")

	// Two gems, each raising the multiplier; the mines stay hidden.
	for d, tile := range safe[:2] {
		body := rowCol(tile)
		res := ok(t, c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": id, "row": body["row"], "col": body["col"]}))
		want, _ := mines.Multiplier(3, d+1)
		if res.Body["isSafe"] != true || res.Body["hitMine"] != false || res.Body["gameOver"] != false ||
			mult(t, res.Body["multiplier"]) != want || amount(t, res.Body["potentialWin"]) != mulFloor(t, bet, want) ||
			len(res.Body["minePositions"].([]any)) != 0 || amount(t, res.Body["newBalance"]) != bal-bet {
			t.Fatalf("gem %d: %s", d+1, res.Raw)
		}
	}
	expect(t, c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": id, "row": safe[0] / 5, "col": safe[0] % 5}), 400, "Tile is already revealed")
	if got := fmt.Sprint(c.Do("GET", "/api/games/active", nil).Get("mines.revealed")); got != fmt.Sprint([]string{mines.Position(safe[0]), mines.Position(safe[1])}) {
		t.Fatalf("resumed reveals %s", got)
	}

	// 3 mines, 2 gems: 0.99 × 25·24/(22·21) = 1.2857… shown and paid as 1.29.
	cash := ok(t, c.Do("POST", "/api/games/mines/cashout", map[string]any{"gameId": id}))
	if fmt.Sprint(cash.Body["multiplier"]) != "1.29" || fmt.Sprint(cash.Body["winAmount"]) != "2.58" ||
		amount(t, cash.Body["newBalance"]) != bal-bet+money.FromCents(258) || balance(t, c) != bal-bet+money.FromCents(258) {
		t.Fatalf("cash out: %s", cash.Raw)
	}
	if got, want := fmt.Sprint(cash.Body["minePositions"]), fmt.Sprint(board.Positions); got != want {
		t.Fatalf("mine positions %s, want %s", got, want)
	}
	expect(t, c.Do("POST", "/api/games/mines/cashout", map[string]any{"gameId": id}), 409, "This game is already over")
	expect(t, c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": id, "row": safe[2] / 5, "col": safe[2] % 5}), 409, "This game is already over")
	if active := c.Do("GET", "/api/games/active", nil); active.Body["mines"] != nil || !strings.Contains(string(active.Raw), `"mines":null`) {
		t.Fatalf("settled game still active: %s", active.Raw)
	}
	h := c.Do("GET", "/api/games/bets/"+id, nil)
	if h.Str("bet.status") != "settled" || fmt.Sprint(h.Get("bet.amount")) != "2" || fmt.Sprint(h.Get("bet.payout")) != "2.58" ||
		fmt.Sprint(h.Get("bet.multiplier")) != "1.29" || !strings.Contains(h.Str("bet.outcome"), `"status": "won"`) {
		t.Fatalf("settled game in the history: %s", h.Raw)
	}
	bal = bal - bet + money.FromCents(258)

	// A mine loses the stake and reveals the board.
	start = ok(t, c.Do("POST", "/api/games/mines/start", `{"betAmount": 1, "mineCount": 5}`))
	board = layout(t, env, c, games.Mines, start, games.Params{Mines: 5}).Mines
	safe = safeTiles(board.MineTiles)
	ok(t, c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": start.Str("gameId"), "row": safe[3] / 5, "col": safe[3] % 5}))
	boom := ok(t, c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": start.Str("gameId"),
		"row": board.MineTiles[2] / 5, "col": board.MineTiles[2] % 5}))
	if boom.Body["hitMine"] != true || boom.Body["isSafe"] != false || boom.Body["gameOver"] != true ||
		fmt.Sprint(boom.Body["winAmount"]) != "0" || fmt.Sprint(boom.Body["multiplier"]) != "0" ||
		fmt.Sprint(boom.Body["minePositions"]) != fmt.Sprint(board.Positions) || amount(t, boom.Body["newBalance"]) != bal-money.Dollars(1) {
		t.Fatalf("mine: %s", boom.Raw)
	}
	bal -= money.Dollars(1)

	// With 24 mines the one gem cashes out by itself at 24.75x.
	start = ok(t, c.Do("POST", "/api/games/mines/start", `{"betAmount": 0.4, "mineCount": 24}`))
	board = layout(t, env, c, games.Mines, start, games.Params{Mines: 24}).Mines
	gem := safeTiles(board.MineTiles)[0]
	won := ok(t, c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": start.Str("gameId"), "row": gem / 5, "col": gem % 5}))
	if won.Body["isSafe"] != true || won.Body["gameOver"] != true || fmt.Sprint(won.Body["multiplier"]) != "24.75" ||
		fmt.Sprint(won.Body["winAmount"]) != "9.9" || amount(t, won.Body["newBalance"]) != bal+money.FromCents(950) ||
		len(won.Body["minePositions"].([]any)) != 24 {
		t.Fatalf("last gem: %s", won.Raw)
	}
	ledgerClean(t, env)
	verifyAll(t, c)
}

// Cashing out after d gems with m mines pays the stake times the displayed
// multiplier, which is the exact formula 0.99·C(25,d)/C(25−m,d) to 2 decimals.
func TestMinesPayoutsFollowTheFormula(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("formula")
	bet := money.FromCents(1337)
	for _, tc := range []struct{ m, d int }{{1, 1}, {1, 24}, {2, 3}, {3, 1}, {3, 10}, {5, 5}, {10, 5}, {20, 2}} {
		before := balance(t, c)
		start := ok(t, c.Do("POST", "/api/games/mines/start", map[string]any{"betAmount": 13.37, "mineCount": tc.m}))
		board := layout(t, env, c, games.Mines, start, games.Params{Mines: tc.m}).Mines
		var last apitest.Response
		for _, tile := range safeTiles(board.MineTiles)[:tc.d] {
			last = ok(t, c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": start.Str("gameId"), "row": tile / 5, "col": tile % 5}))
		}
		if last.Body["gameOver"] != true {
			last = ok(t, c.Do("POST", "/api/games/mines/cashout", map[string]any{"gameId": start.Str("gameId")}))
		}
		shown := mult(t, last.Body["multiplier"])
		exact := mines.ExactMultiplier(tc.m, tc.d)
		diff := new(big.Rat).Sub(big.NewRat(int64(shown), money.MultiplierScale), exact)
		if diff.Abs(diff).Cmp(big.NewRat(1, 200)) > 0 {
			t.Errorf("m=%d d=%d: shown %s, formula %s", tc.m, tc.d, shown, exact.FloatString(6))
		}
		if win := amount(t, last.Body["winAmount"]); win != mulFloor(t, bet, shown) || balance(t, c) != before-bet+win {
			t.Errorf("m=%d d=%d: paid %s for %s × %s", tc.m, tc.d, win, bet, shown)
		}
	}
	ledgerClean(t, env)
}

func TestPumpGame(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("pumper")
	bal := balance(t, c)

	expect(t, c.Do("POST", "/api/games/pump/start", `{"betAmount": 1, "difficulty": "insane"}`), 400, "Difficulty must be easy, medium, hard or expert")
	expect(t, c.Do("POST", "/api/games/pump/start", `{"betAmount": -1, "difficulty": "easy"}`), 400, "Please enter a valid bet amount")

	// Medium, three safe pumps, then cash out.
	rig(t, env, c, games.Pump, games.Params{Difficulty: "medium"}, func(o games.Outcome) bool { return o.Pump.SafePumps >= 3 })
	start := ok(t, c.Do("POST", "/api/games/pump/start", `{"betAmount": 3, "difficulty": "medium"}`))
	id := start.Str("gameId")
	if amount(t, start.Body["newBalance"]) != bal-money.Dollars(3) || start.Str("difficulty") != "medium" {
		t.Fatalf("start: %s", start.Raw)
	}
	expect(t, c.Do("POST", "/api/games/pump/start", `{"betAmount": 3, "difficulty": "easy"}`), 409, "You already have a game in progress")
	expect(t, c.Do("POST", "/api/games/pump/cashout", map[string]any{"gameId": id}), 400, "Pump at least once before cashing out")
	table, _ := pump.Table(pump.Medium)
	for k := 1; k <= 3; k++ {
		res := ok(t, c.Do("POST", "/api/games/pump/pump", map[string]any{"gameId": id}))
		if res.Body["burst"] != false || fmt.Sprint(res.Body["pumpCount"]) != fmt.Sprint(k) || mult(t, res.Body["multiplier"]) != table[k] ||
			len(res.Body["pops"].([]any)) != 0 || amount(t, res.Body["newBalance"]) != bal-money.Dollars(3) {
			t.Fatalf("pump %d: %s", k, res.Raw)
		}
	}
	if a := c.Do("GET", "/api/games/active", nil); fmt.Sprint(a.Get("pump.pumpCount")) != "3" || strings.Contains(string(a.Raw), "pops") {
		t.Fatalf("active pump: %s", a.Raw)
	}
	cash := ok(t, c.Do("POST", "/api/games/pump/cashout", map[string]any{"gameId": id}))
	// 3 pumps on medium: 1.46x of 3 = 4.38.
	if fmt.Sprint(cash.Body["winAmount"]) != "4.38" || amount(t, cash.Body["newBalance"]) != bal+money.FromCents(138) {
		t.Fatalf("cash out: %s", cash.Raw)
	}
	expect(t, c.Do("POST", "/api/games/pump/pump", map[string]any{"gameId": id}), 409, "This game is already over")
	bal += money.FromCents(138)

	// A burst on the second pump loses the stake.
	rig(t, env, c, games.Pump, games.Params{Difficulty: "hard"}, func(o games.Outcome) bool { return o.Pump.BurstAt == 2 })
	start = ok(t, c.Do("POST", "/api/games/pump/start", `{"betAmount": 1, "difficulty": "hard"}`))
	ok(t, c.Do("POST", "/api/games/pump/pump", map[string]any{"gameId": start.Str("gameId")}))
	burst := ok(t, c.Do("POST", "/api/games/pump/pump", map[string]any{"gameId": start.Str("gameId")}))
	if burst.Body["burst"] != true || burst.Body["gameOver"] != true || fmt.Sprint(burst.Body["pumpCount"]) != "1" ||
		fmt.Sprint(burst.Body["winAmount"]) != "0" || amount(t, burst.Body["newBalance"]) != bal-money.Dollars(1) ||
		len(burst.Body["pops"].([]any)) != 5 {
		t.Fatalf("burst: %s", burst.Raw)
	}
	expect(t, c.Do("POST", "/api/games/pump/cashout", map[string]any{"gameId": start.Str("gameId")}), 409, "This game is already over")
	bal -= money.Dollars(1)

	// Easy with the pop on position 25: the 24th pump cashes out by itself at 24.5x.
	rig(t, env, c, games.Pump, games.Params{Difficulty: "easy"}, func(o games.Outcome) bool { return o.Pump.BurstAt == 25 })
	start = ok(t, c.Do("POST", "/api/games/pump/start", `{"betAmount": 0.5, "difficulty": "easy"}`))
	var last apitest.Response
	for range 24 {
		last = ok(t, c.Do("POST", "/api/games/pump/pump", map[string]any{"gameId": start.Str("gameId")}))
	}
	if last.Body["gameOver"] != true || last.Body["burst"] != false || fmt.Sprint(last.Body["multiplier"]) != "24.5" ||
		fmt.Sprint(last.Body["winAmount"]) != "12.25" || amount(t, last.Body["newBalance"]) != bal+money.FromCents(1175) {
		t.Fatalf("last pump: %s", last.Raw)
	}

	// Cashing out after k pumps pays the table, for several difficulties and k.
	for _, tc := range []struct {
		d pump.Difficulty
		k int
	}{{pump.Easy, 5}, {pump.Medium, 1}, {pump.Hard, 4}, {pump.Expert, 2}} {
		rig(t, env, c, games.Pump, games.Params{Difficulty: string(tc.d)}, func(o games.Outcome) bool { return o.Pump.SafePumps >= tc.k })
		start := ok(t, c.Do("POST", "/api/games/pump/start", map[string]any{"betAmount": 7.77, "difficulty": tc.d}))
		for range tc.k {
			ok(t, c.Do("POST", "/api/games/pump/pump", map[string]any{"gameId": start.Str("gameId")}))
		}
		cash := ok(t, c.Do("POST", "/api/games/pump/cashout", map[string]any{"gameId": start.Str("gameId")}))
		want, _ := pump.Multiplier(tc.d, tc.k)
		if mult(t, cash.Body["multiplier"]) != want || amount(t, cash.Body["winAmount"]) != mulFloor(t, money.FromCents(777), want) {
			t.Errorf("%s k=%d: %s", tc.d, tc.k, cash.Raw)
		}
	}
	ledgerClean(t, env)
	verifyAll(t, c)
}

// card is a card as the API sends it.
func card(v any) map[string]any { m, _ := v.(map[string]any); return m }

func hand(res apitest.Response, key string) []any { h, _ := res.Body[key].([]any); return h }

func TestBlackjackRules(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("dealer_fan")
	bet := money.Dollars(10)
	bj := func(actions string, want func(*games.BlackjackReplay) bool) *games.BlackjackReplay {
		t.Helper()
		return rig(t, env, c, games.Blackjack, games.Params{Actions: actions, Rules: 1}, func(o games.Outcome) bool { return want(o.Blackjack) }).Blackjack
	}
	startBJ := func() apitest.Response {
		t.Helper()
		return ok(t, c.Do("POST", "/api/games/blackjack/start", `{"betAmount": 10}`))
	}
	for _, tc := range []struct {
		name   string
		result string
		win    money.Amount
	}{
		{"player natural pays 3:2", "Blackjack! You win", money.Dollars(25)},
		{"dealer natural", "Dealer has Blackjack! Dealer wins", 0},
		{"both naturals push", "Push", money.Dollars(10)},
	} {
		bal := balance(t, c)
		bj("", func(r *games.BlackjackReplay) bool { return r.Result == tc.result })
		res := startBJ()
		if res.Body["gameOver"] != true || res.Str("result") != tc.result || amount(t, res.Body["winAmount"]) != tc.win ||
			amount(t, res.Body["newBalance"]) != bal-bet+tc.win || len(hand(res, "dealerHand")) != 2 ||
			card(hand(res, "dealerHand")[1])["hidden"] != false || fmt.Sprint(res.Body["dealerValue"]) == "0" {
			t.Fatalf("%s: %s", tc.name, res.Raw)
		}
		if a := c.Do("GET", "/api/games/active", nil); a.Body["blackjack"] != nil {
			t.Fatalf("%s: a natural left the game running: %s", tc.name, a.Raw)
		}
	}

	// While the game runs the hole card is {hidden: true} and nothing else.
	bal := balance(t, c)
	want := bj("s", func(r *games.BlackjackReplay) bool {
		return strings.Contains(r.Result, "You win") && r.Result != "Blackjack! You win"
	})
	res := startBJ()
	id := res.Str("gameId")
	hole := card(hand(res, "dealerHand")[1])
	if res.Body["gameOver"] != false || res.Str("result") != "" || len(hole) != 1 || hole["hidden"] != true || res.Body["canDouble"] != true {
		t.Fatalf("running deal: %s", res.Raw)
	}
	up := card(hand(res, "dealerHand")[0])
	if up["hidden"] != false || up["value"] == nil || up["suit"] == nil || fmt.Sprint(res.Body["dealerValue"]) != fmt.Sprint(up["numericValue"]) {
		t.Fatalf("up card: %s", res.Raw)
	}
	if a := c.Do("GET", "/api/games/active", nil); a.Str("blackjack.gameId") != id || len(card(a.Get("blackjack.dealerHand").([]any)[1])) != 1 {
		t.Fatalf("active blackjack: %s", a.Raw)
	}
	expect(t, c.Do("POST", "/api/games/blackjack/start", `{"betAmount": 10}`), 409, "You already have a game in progress")
	stand := ok(t, c.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id}))
	if stand.Str("result") != want.Result || amount(t, stand.Body["winAmount"]) != money.Dollars(20) ||
		amount(t, stand.Body["newBalance"]) != bal+bet || card(hand(stand, "dealerHand")[1])["hidden"] != false {
		t.Fatalf("stand: %s (want %s, dealer %s)", stand.Raw, want.Result, want.Dealer)
	}
	expect(t, c.Do("POST", "/api/games/blackjack/hit", map[string]any{"gameId": id}), 409, "This game is already over")

	// Hit to a bust: lost at once, the dealer's hand shown.
	bal = balance(t, c)
	bj("h", func(r *games.BlackjackReplay) bool { return r.Result == "Bust! Dealer wins" })
	id = startBJ().Str("gameId")
	hit := ok(t, c.Do("POST", "/api/games/blackjack/hit", map[string]any{"gameId": id}))
	if hit.Body["gameOver"] != true || hit.Str("result") != "Bust! Dealer wins" || len(hand(hit, "playerHand")) != 3 ||
		fmt.Sprint(hit.Body["winAmount"]) != "0" || amount(t, hit.Body["newBalance"]) != bal-bet || len(card(hand(hit, "dealerHand")[1])) == 1 {
		t.Fatalf("bust: %s", hit.Raw)
	}

	// Hit, still in play; then Double is refused; then stand settles.
	bal = balance(t, c)
	want = bj("hs", func(r *games.BlackjackReplay) bool { return r.Result == "Push" })
	id = startBJ().Str("gameId")
	hit = ok(t, c.Do("POST", "/api/games/blackjack/hit", map[string]any{"gameId": id}))
	if hit.Body["gameOver"] != false || hit.Str("result") != "" || len(card(hand(hit, "dealerHand")[1])) != 1 {
		t.Fatalf("hit in play: %s", hit.Raw)
	}
	expect(t, c.Do("POST", "/api/games/blackjack/double", map[string]any{"gameId": id}), 400, "You can only double down on your first two cards")
	stand = ok(t, c.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id}))
	if stand.Str("result") != "Push" || amount(t, stand.Body["winAmount"]) != bet || amount(t, stand.Body["newBalance"]) != bal ||
		stand.Body["playerValue"] != stand.Body["dealerValue"] {
		t.Fatalf("push: %s (dealer %s, player %s)", stand.Raw, want.Dealer, want.Player)
	}

	// Double: a second stake on the same bet, paid on the total.
	bal = balance(t, c)
	bj("d", func(r *games.BlackjackReplay) bool { return r.Multiplier == 2*money.One })
	id = startBJ().Str("gameId")
	dbl := ok(t, c.Do("POST", "/api/games/blackjack/double", map[string]any{"gameId": id}))
	if len(hand(dbl, "playerHand")) != 3 || !strings.Contains(dbl.Str("result"), "You win") || amount(t, dbl.Body["winAmount"]) != money.Dollars(40) ||
		amount(t, dbl.Body["newBalance"]) != bal+money.Dollars(20) || fmt.Sprint(dbl.Body["betAmount"]) != "20" || fmt.Sprint(dbl.Body["playerValue"]) == "0" {
		t.Fatalf("double: %s", dbl.Raw)
	}
	if h := c.Do("GET", "/api/games/bets/"+id, nil); fmt.Sprint(h.Get("bet.amount")) != "20" || fmt.Sprint(h.Get("bet.payout")) != "40" {
		t.Fatalf("doubled bet in the history: %s", h.Raw)
	}
	var stakes int
	if err := env.App.Postgres.QueryRow(context.Background(), `SELECT count(*) FROM ledger_entries WHERE ref_id = $1 AND kind = 'bet' AND amount = -1000000000`, id).Scan(&stakes); err != nil || stakes != 2 {
		t.Fatalf("doubled bet has %d stake entries (%v)", stakes, err)
	}

	// Double needs the balance for the second stake.
	poor := env.Client()
	poor.Register("short_stack")
	rig(t, env, poor, games.Blackjack, games.Params{Rules: 1}, func(o games.Outcome) bool {
		return o.Blackjack.Result == "" && o.Blackjack.Insurance == ""
	})
	id = ok(t, poor.Do("POST", "/api/games/blackjack/start", `{"betAmount": 600}`)).Str("gameId")
	expect(t, poor.Do("POST", "/api/games/blackjack/double", map[string]any{"gameId": id}), 400, "Insufficient balance to double down")
	if b := balance(t, poor); b != money.Dollars(400) {
		t.Fatalf("refused double changed the balance to %s", b)
	}
	if a := poor.Do("GET", "/api/games/active", nil); a.Str("blackjack.gameId") != id || a.Get("blackjack.canDouble") != true {
		t.Fatalf("refused double changed the game: %s", a.Raw)
	}
	ok(t, poor.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": id}))

	ledgerClean(t, env)
	verifyAll(t, c)
	verifyAll(t, poor)
}

// Dealing with any seed: every running deal hides the hole card, every hand
// total matches its cards, and every game ends with a package result text.
func TestBlackjackPlaysOut(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("grinder")
	results := map[string]int{}
	for i := range 40 {
		res := ok(t, c.Do("POST", "/api/games/blackjack/start", `{"betAmount": 1}`))
		id := res.Str("gameId")
		for res.Body["gameOver"] != true {
			if hole := card(hand(res, "dealerHand")[1]); len(hole) != 1 || hole["hidden"] != true {
				t.Fatalf("hole card shown while in play: %s", res.Raw)
			}
			if res.Get("hands.insurance") == "offered" {
				// Take it (or even money) in every other game, decline in the rest.
				res = ok(t, c.Do("POST", "/api/games/blackjack/insurance", map[string]any{"gameId": id, "accept": i%2 == 0}))
				continue
			}
			if res.Get("hands.canSplit") == true {
				res = ok(t, c.Do("POST", "/api/games/blackjack/split", map[string]any{"gameId": id}))
				continue
			}
			action := "hit"
			value := res.Body["playerValue"]
			if fmt.Sprint(res.Get("hands.activeHand")) == "1" {
				value = res.Get("hands.secondValue")
			}
			if v, _ := json.Number(fmt.Sprint(value)).Int64(); v >= 17 || i%3 == 0 {
				action = "stand"
			}
			res = ok(t, c.Do("POST", "/api/games/blackjack/"+action, map[string]any{"gameId": id}))
		}
		var total int64
		for _, cv := range hand(res, "playerHand") {
			n, _ := json.Number(fmt.Sprint(card(cv)["numericValue"])).Int64()
			total += n
		}
		for aces := strings.Count(fmt.Sprint(res.Body["playerHand"]), "value:A"); total > 21 && aces > 0; aces-- {
			total -= 10
		}
		if fmt.Sprint(res.Body["playerValue"]) != fmt.Sprint(total) {
			t.Fatalf("player total %v for %s", res.Body["playerValue"], res.Raw)
		}
		results[res.Str("result")]++
	}
	for r := range results {
		// A split game names both hands; a won insurance says so.
		text := strings.TrimSuffix(r, ". Insurance pays 2:1")
		parts := []string{text}
		if first, second, split := strings.Cut(strings.TrimPrefix(text, "Hand 1: "), ". Hand 2: "); split {
			parts = []string{first, second}
		}
		for _, p := range parts {
			switch p {
			case "Blackjack! You win", "Dealer busts! You win", "You win", "Push", "Dealer wins", "Dealer has Blackjack! Dealer wins",
				"Bust! Dealer wins", "Even money! You win":
			default:
				t.Fatalf("unknown result %q", r)
			}
		}
	}
	t.Logf("results: %v", results)
	ledgerClean(t, env)
	verifyAll(t, c)
}

// Kinds run side by side; each kind allows one game, even to racing starts.
func TestOneRunningGamePerKind(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("greedy")
	bal := balance(t, c)
	const n = 12
	statuses := make([]int, 3*n)
	var wg sync.WaitGroup
	for i := range 3 * n {
		wg.Go(func() {
			switch i % 3 {
			case 0:
				statuses[i] = c.Do("POST", "/api/games/mines/start", `{"betAmount": 1, "mineCount": 3}`).Status
			case 1:
				statuses[i] = c.Do("POST", "/api/games/pump/start", `{"betAmount": 1, "difficulty": "easy"}`).Status
			case 2:
				// Naturals settle at once, so several blackjack deals may succeed.
				statuses[i] = c.Do("POST", "/api/games/blackjack/start", `{"betAmount": 1}`).Status
			}
		})
	}
	wg.Wait()
	started := map[int]int{}
	for i, s := range statuses {
		if s != 200 && s != 409 {
			t.Fatalf("start %d: status %d", i, s)
		}
		if s == 200 {
			started[i%3]++
		}
	}
	var settledBJ int
	if err := env.App.Postgres.QueryRow(context.Background(), `SELECT count(*) FROM bets WHERE game = 'blackjack' AND status = 'settled'`).Scan(&settledBJ); err != nil {
		t.Fatal(err)
	}
	if started[0] != 1 || started[1] != 1 || started[2] != 1+settledBJ {
		t.Fatalf("started %v (%d blackjack naturals): %v", started, settledBJ, statuses)
	}
	var stakes money.Amount
	if err := env.App.Postgres.QueryRow(context.Background(), `SELECT coalesce(-sum(amount), 0) FROM ledger_entries WHERE kind = 'bet'`).Scan(&stakes); err != nil {
		t.Fatal(err)
	}
	if stakes != money.Dollars(int64(3+settledBJ)) {
		t.Fatalf("debited %s for %d games", stakes, 3+settledBJ)
	}
	a := c.Do("GET", "/api/games/active", nil)
	if a.Get("mines") == nil || a.Get("pump") == nil || a.Get("blackjack") == nil {
		t.Fatalf("active games: %s", a.Raw)
	}
	if b := balance(t, c); b > bal {
		t.Fatalf("balance grew to %s", b)
	}
	ledgerClean(t, env)

	// The same over Connect.
	client := fairplayv1connect.NewGameServiceClient(http.DefaultClient, env.URL, connect.WithProtoJSON())
	req := connect.NewRequest(&fairplayv1.GetActiveGamesRequest{})
	req.Header().Set("Authorization", "Bearer "+c.Token)
	res, err := client.GetActiveGames(context.Background(), req)
	if err != nil || res.Msg.GetMines().GetGameId() != a.Str("mines.gameId") || res.Msg.GetPump().GetDifficulty() != "easy" ||
		len(res.Msg.GetBlackjack().GetDealerHand()) != 2 || !res.Msg.GetBlackjack().GetDealerHand()[1].GetHidden() ||
		res.Msg.GetBlackjack().GetDealerHand()[1].Value != nil {
		t.Fatalf("GetActiveGames over connect: %v %v", res, err)
	}
	_, err = client.CashOutMines(context.Background(), connect.NewRequest(&fairplayv1.CashOutMinesRequest{GameId: a.Str("mines.gameId")}))
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("connect cash out without token: %v", err)
	}
}

// Racing actions on one game settle it exactly once: 30 rounds, each racing
// cash-outs against clicks (Mines), pumps against cash-outs (Pump) and
// stand/double/hit (Blackjack), all three games at once.
func TestRacingActionsSettleOnce(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("racer2")
	type call struct {
		path string
		body map[string]any
	}
	const rounds = 30
	for round := range rounds {
		var calls []call
		// Mines: one gem found, then 4 cash-outs race 2 clicks on other gems.
		ms := ok(t, c.Do("POST", "/api/games/mines/start", `{"betAmount": 1, "mineCount": 3}`))
		mid := ms.Str("gameId")
		safe := safeTiles(layout(t, env, c, games.Mines, ms, games.Params{Mines: 3}).Mines.MineTiles)
		ok(t, c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": mid, "row": safe[0] / 5, "col": safe[0] % 5}))
		for i := range 4 {
			calls = append(calls, call{"/api/games/mines/cashout", map[string]any{"gameId": mid}})
			if i < 2 {
				calls = append(calls, call{"/api/games/mines/click", map[string]any{"gameId": mid, "row": safe[i+1] / 5, "col": safe[i+1] % 5}})
			}
		}
		// Pump: one safe pump (when the balloon allows), then 3 pumps race 4 cash-outs.
		ps := ok(t, c.Do("POST", "/api/games/pump/start", `{"betAmount": 1, "difficulty": "medium"}`))
		pid := ps.Str("gameId")
		if ok(t, c.Do("POST", "/api/games/pump/pump", map[string]any{"gameId": pid})).Body["gameOver"] != true {
			for i := range 4 {
				calls = append(calls, call{"/api/games/pump/cashout", map[string]any{"gameId": pid}})
				if i < 3 {
					calls = append(calls, call{"/api/games/pump/pump", map[string]any{"gameId": pid}})
				}
			}
		}
		// Blackjack: 3 stands, 2 doubles and a hit race (after an insurance
		// offer is declined: the decision races on its own in
		// TestRacingSplitAndInsuranceDebitOnce).
		bs := ok(t, c.Do("POST", "/api/games/blackjack/start", `{"betAmount": 1}`))
		bid := bs.Str("gameId")
		if bs.Get("hands.insurance") == "offered" {
			bs = ok(t, c.Do("POST", "/api/games/blackjack/insurance", map[string]any{"gameId": bid, "accept": false}))
		}
		if bs.Body["gameOver"] != true {
			for _, a := range []string{"stand", "double", "hit", "stand", "double", "stand"} {
				calls = append(calls, call{"/api/games/blackjack/" + a, map[string]any{"gameId": bid}})
			}
		}
		res := make([]apitest.Response, len(calls))
		var wg sync.WaitGroup
		for i, cl := range calls {
			wg.Go(func() { res[i] = c.Do("POST", cl.path, cl.body) })
		}
		wg.Wait()
		settledBy := map[string]int{}
		for i, r := range res {
			game := strings.Split(calls[i].path, "/")[3]
			switch {
			case r.Status == 200 && r.Body["success"] == true:
				if over, has := r.Body["gameOver"]; over == true || !has && strings.HasSuffix(calls[i].path, "/cashout") {
					settledBy[game]++
				}
			case r.Status == 409 && r.Message() == "This game is already over":
			case r.Status == 400 && (r.Message() == "You can only double down on your first two cards" || r.Message() == "Reveal at least one tile before cashing out"):
			default:
				t.Fatalf("round %d: %s: %d %s", round, calls[i].path, r.Status, r.Raw)
			}
		}
		for _, g := range []string{"mines", "pump", "blackjack"} {
			if n := settledBy[g]; n > 1 {
				t.Fatalf("round %d: %d actions settled the %s game", round, n, g)
			}
		}
		// Each game is over now, exactly once.
		if a := c.Do("GET", "/api/games/active", nil); a.Body["mines"] != nil || a.Body["pump"] != nil || a.Body["blackjack"] != nil {
			t.Fatalf("round %d: a game survived the race: %s", round, a.Raw)
		}
	}
	r := ledgerClean(t, env)
	entries := payoutEntries(t, env)
	if len(entries) != 3*rounds {
		t.Fatalf("%d bets, want %d", len(entries), 3*rounds)
	}
	var paid int
	for id, n := range entries {
		if n > 1 {
			t.Fatalf("bet %s has %d payout entries", id, n)
		}
		paid += n
	}
	var wrong int
	if err := env.App.Postgres.QueryRow(context.Background(), `
		SELECT count(*) FROM bets b WHERE status <> 'settled'
		   OR (payout > 0) <> EXISTS (SELECT 1 FROM ledger_entries l WHERE l.ref_id = b.id AND l.kind = 'payout')`).Scan(&wrong); err != nil || wrong != 0 {
		t.Fatalf("%d bets unsettled or paid inconsistently (%v)", wrong, err)
	}
	t.Logf("%d games, %d paid; ledger %+v", len(entries), paid, r.Totals)
	verifyAll(t, c)
}

// A game started on one server goes on and settles on another: the state is
// in Postgres, not in a process. Racing cash-outs on both still pay once.
func TestGameAcrossReplicas(t *testing.T) {
	t.Parallel()
	a := apitest.Start(t)
	b := a.Replica()
	ca := a.Client()
	ca.Register("roamer")
	cb := ca.Via(b)
	bal := balance(t, cb)

	ms := ok(t, ca.Do("POST", "/api/games/mines/start", `{"betAmount": 5, "mineCount": 2}`))
	id := ms.Str("gameId")
	safe := safeTiles(layout(t, a, ca, games.Mines, ms, games.Params{Mines: 2}).Mines.MineTiles)
	if got := cb.Do("GET", "/api/games/active", nil).Str("mines.gameId"); got != id {
		t.Fatalf("replica B does not see the game: %q", got)
	}
	ok(t, cb.Do("POST", "/api/games/mines/click", map[string]any{"gameId": id, "row": safe[0] / 5, "col": safe[0] % 5}))
	ok(t, ca.Do("POST", "/api/games/mines/click", map[string]any{"gameId": id, "row": safe[1] / 5, "col": safe[1] % 5}))
	expect(t, cb.Do("POST", "/api/games/mines/click", map[string]any{"gameId": id, "row": safe[0] / 5, "col": safe[0] % 5}), 400, "Tile is already revealed")
	var res [2]apitest.Response
	var wg sync.WaitGroup
	for i, cl := range []*apitest.Client{ca, cb} {
		wg.Go(func() { res[i] = cl.Do("POST", "/api/games/mines/cashout", map[string]any{"gameId": id}) })
	}
	wg.Wait()
	if res[0].Status+res[1].Status != 200+409 {
		t.Fatalf("racing cash-outs on two replicas: %d %s / %d %s", res[0].Status, res[0].Raw, res[1].Status, res[1].Raw)
	}
	m, _ := mines.Multiplier(2, 2)
	if balance(t, ca) != bal-money.Dollars(5)+mulFloor(t, money.Dollars(5), m) {
		t.Fatalf("balance after cross-replica game: %s", balance(t, ca))
	}

	ps := ok(t, cb.Do("POST", "/api/games/pump/start", `{"betAmount": 1, "difficulty": "easy"}`))
	if ok(t, ca.Do("POST", "/api/games/pump/pump", map[string]any{"gameId": ps.Str("gameId")})).Body["gameOver"] != true {
		ok(t, cb.Do("POST", "/api/games/pump/cashout", map[string]any{"gameId": ps.Str("gameId")}))
	}
	bs := ok(t, ca.Do("POST", "/api/games/blackjack/start", `{"betAmount": 1}`))
	bid := bs.Str("gameId")
	if bs.Get("hands.insurance") == "offered" {
		// A dealer's ace (one deal in 13): insurance is answered first, on
		// the other replica too.
		bs = ok(t, cb.Do("POST", "/api/games/blackjack/insurance", map[string]any{"gameId": bid, "accept": false}))
	}
	if bs.Body["gameOver"] != true {
		ok(t, cb.Do("POST", "/api/games/blackjack/stand", map[string]any{"gameId": bid}))
	}
	if act := ca.Do("GET", "/api/games/active", nil); act.Body["mines"] != nil || act.Body["pump"] != nil || act.Body["blackjack"] != nil {
		t.Fatalf("games left running: %s", act.Raw)
	}
	for id, n := range payoutEntries(t, a) {
		if n > 1 {
			t.Fatalf("bet %s paid %d times", id, n)
		}
	}
	ledgerClean(t, a)
	verifyAll(t, cb)
}

func TestStatefulMetrics(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("measured")
	ms := ok(t, c.Do("POST", "/api/games/mines/start", `{"betAmount": 2, "mineCount": 1}`))
	board := layout(t, env, c, games.Mines, ms, games.Params{Mines: 1}).Mines
	tile := safeTiles(board.MineTiles)[0]
	ok(t, c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": ms.Str("gameId"), "row": tile / 5, "col": tile % 5}))
	res, err := http.Get(env.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(res)
	res.Body.Close()
	if !strings.Contains(body, `fairplay_bets_total{game="mines"} 0`) {
		t.Fatal("a running game was counted as settled")
	}
	ok(t, c.Do("POST", "/api/games/mines/cashout", map[string]any{"gameId": ms.Str("gameId")}))
	res, err = http.Get(env.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body = readAll(res)
	// 1 mine, 1 gem: 1.03125 shown as 1.03, so 2 pays 2.06. The click and
	// the cash-out were decided from the copy of the game this server kept
	// when it started it: one round trip each.
	for _, want := range []string{`fairplay_bets_total{game="mines"} 1`, `fairplay_wagered_dollars_total{game="mines"} 2`, `fairplay_paid_out_dollars_total{game="mines"} 2.06`,
		`fairplay_game_actions_total{path="cached"} 2`, `fairplay_game_actions_total{path="locked"} 0`} {
		if !strings.Contains(body, want) {
			t.Fatalf("metrics lack %s", want)
		}
	}
}
