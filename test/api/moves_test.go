package api_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/test/apitest"
)

// movedOn is the refusal of an action whose moves the game has gone past.
const movedOn = "This game has moved on. Reload it to continue."

// TestActionsWithMovesActOnce: an action that names the moves its caller
// saw (a client retrying a request whose answer it lost) is refused with
// 409 and changes nothing once the game has gone past them; without moves
// an action acts as before.
func TestActionsWithMovesActOnce(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("retrier")
	bal := balance(t, c)

	// Pump: a retried pump pumps once.
	rig(t, env, c, games.Pump, games.Params{Difficulty: "easy"}, func(o games.Outcome) bool { return o.Pump.SafePumps >= 4 })
	start := ok(t, c.Do("POST", "/api/games/pump/start", `{"betAmount": 1, "difficulty": "easy"}`))
	id := start.Str("gameId")
	bal -= money.Dollars(1)
	expect(t, c.Do("POST", "/api/games/pump/pump", map[string]any{"gameId": id, "moves": -1}), 400, "moves must be 0 or more")
	if res := ok(t, c.Do("POST", "/api/games/pump/pump", map[string]any{"gameId": id, "moves": 0})); fmt.Sprint(res.Body["pumpCount"]) != "1" {
		t.Fatalf("pump with moves 0: %s", res.Raw)
	}
	expect(t, c.Do("POST", "/api/games/pump/pump", map[string]any{"gameId": id, "moves": 0}), 409, movedOn)
	expect(t, c.Do("POST", "/api/games/pump/cashout", map[string]any{"gameId": id, "moves": 2}), 409, movedOn)
	if a := c.Do("GET", "/api/games/active", nil); fmt.Sprint(a.Get("pump.pumpCount")) != "1" || balance(t, c) != bal {
		t.Fatalf("a refused action changed the game or the balance: %s", a.Raw)
	}
	// Without moves, as before: a second pump.
	if res := ok(t, c.Do("POST", "/api/games/pump/pump", map[string]any{"gameId": id})); fmt.Sprint(res.Body["pumpCount"]) != "2" {
		t.Fatalf("pump without moves: %s", res.Raw)
	}
	cash := ok(t, c.Do("POST", "/api/games/pump/cashout", map[string]any{"gameId": id, "moves": 2}))
	bal += amount(t, cash.Body["winAmount"])
	// A retried cash-out finds the game over.
	expect(t, c.Do("POST", "/api/games/pump/cashout", map[string]any{"gameId": id, "moves": 2}), 409, "This game is already over")

	// Mines: a retried click of another tile is refused.
	start = ok(t, c.Do("POST", "/api/games/mines/start", `{"betAmount": 1, "mineCount": 3}`))
	id = start.Str("gameId")
	bal -= money.Dollars(1)
	safe := safeTiles(layout(t, env, c, games.Mines, start, games.Params{Mines: 3}).Mines.MineTiles)
	click := func(tile, moves int) apitest.Response {
		body := map[string]any{"gameId": id, "moves": moves}
		for k, v := range rowCol(tile) {
			body[k] = v
		}
		return c.Do("POST", "/api/games/mines/click", body)
	}
	ok(t, click(safe[0], 0))
	expect(t, click(safe[1], 0), 409, movedOn)
	expect(t, c.Do("POST", "/api/games/mines/cashout", map[string]any{"gameId": id, "moves": 0}), 409, movedOn)
	if res := ok(t, click(safe[1], 1)); len(res.Body["revealed"].([]any)) != 2 {
		t.Fatalf("second click: %s", res.Raw)
	}
	cash = ok(t, c.Do("POST", "/api/games/mines/cashout", map[string]any{"gameId": id, "moves": 2}))
	bal += amount(t, cash.Body["winAmount"])

	// Blackjack: every answer counts the actions; each action sends the
	// count it saw, and the same request again is refused.
	for range 5 {
		res := ok(t, c.Do("POST", "/api/games/blackjack/start", `{"betAmount": 1}`))
		id := res.Str("gameId")
		bal -= money.Dollars(1)
		for want := 0; res.Body["gameOver"] != true; want++ {
			if got := fmt.Sprint(res.Get("hands.moves")); got != fmt.Sprint(want) {
				t.Fatalf("hands.moves %s after %d actions: %s", got, want, res.Raw)
			}
			path, body := "/api/games/blackjack/hit", map[string]any{"gameId": id, "moves": want}
			switch {
			case res.Get("hands.insurance") == "offered":
				path, body["accept"] = "/api/games/blackjack/insurance", false
			case atoi(t, res.Body["playerValue"]) >= 17:
				path = "/api/games/blackjack/stand"
			}
			res = ok(t, c.Do("POST", path, body))
			if res.Body["gameOver"] == true {
				expect(t, c.Do("POST", path, body), 409, "This game is already over")
			} else {
				expect(t, c.Do("POST", path, body), 409, movedOn)
			}
		}
		bal += amount(t, res.Body["winAmount"])
	}
	if got := balance(t, c); got != bal {
		t.Fatalf("balance %s, want %s", got, bal)
	}
	ledgerClean(t, env)
	verifyAll(t, c)
}

func atoi(t *testing.T, v any) int {
	t.Helper()
	n, err := strconv.Atoi(fmt.Sprint(v))
	if err != nil {
		t.Fatalf("%v is not a whole number", v)
	}
	return n
}
