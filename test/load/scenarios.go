package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// stake is every bet's amount: the minimum bet, against the starting balance (1000 by
// default), so no run comes near going broke. A player that does anyway gets
// 400 Insufficient balance, which counts as an error like any other.
const stake = 0.1

// mineCount is the number of mines of every Mines round.
const mineCount = 3

// protocolError is a 2xx answer that breaks the API's rules.
type protocolError string

func (e protocolError) Error() string { return string(e) }

func protocolErrorf(format string, args ...any) error {
	return protocolError(fmt.Sprintf(format, args...))
}

// worker drives one player through a run.
type worker struct {
	p   *player
	rng *rand.Rand
	rec *recorder
}

// call sends one request and, when name is set, records it under that name
// (the endpoints of stateful rounds; a one-request operation is recorded as
// the operation instead).
func (w *worker) call(ctx context.Context, name, method, path string, body, out any) error {
	t0 := time.Now()
	err := w.p.do(ctx, method, path, body, out)
	w.rec.calls++
	if name != "" {
		if err != nil {
			w.rec.fail(name, err)
		} else {
			w.rec.ok(name, time.Since(t0))
		}
	}
	return err
}

// op is one kind of workload operation.
type op struct {
	name   string
	weight int
	// calls names the endpoints of a stateful round, recorded one by one as
	// well as the whole round.
	calls []string
	fn    func(ctx context.Context, w *worker) error
}

// scenario is a named workload: a weighted choice of operations.
type scenario struct {
	name string
	ops  []op
}

func (s scenario) stateful() bool {
	return slices.ContainsFunc(s.ops, func(o op) bool { return len(o.calls) > 0 })
}

func (s scenario) pick(rng *rand.Rand) op {
	total := 0
	for _, o := range s.ops {
		total += o.weight
	}
	n := rng.IntN(total)
	for _, o := range s.ops {
		if n < o.weight {
			return o
		}
		n -= o.weight
	}
	return s.ops[len(s.ops)-1]
}

// The instant games' bodies, encoded once.
var (
	diceBody   = mustJSON(map[string]any{"betAmount": stake, "rollTarget": 50})
	plinkoBody = mustJSON(map[string]any{"betAmount": stake, "rows": 12, "risk": "medium"})
	kenoBody   = mustJSON(map[string]any{"betAmount": stake, "selectedNumbers": []int{3, 7, 11, 19, 23}, "riskLevel": "classic"})
)

func mustJSON(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return raw
}

var (
	opDice = op{name: "dice", weight: 2, fn: func(ctx context.Context, w *worker) error {
		return w.call(ctx, "", "POST", "/api/games/dice", diceBody, nil)
	}}
	opPlinko = op{name: "plinko", weight: 1, fn: func(ctx context.Context, w *worker) error {
		return w.call(ctx, "", "POST", "/api/games/plinko", plinkoBody, nil)
	}}
	opKeno = op{name: "keno", weight: 1, fn: func(ctx context.Context, w *worker) error {
		return w.call(ctx, "", "POST", "/api/games/keno", kenoBody, nil)
	}}
	opBalance = op{name: "balance", weight: 1, fn: func(ctx context.Context, w *worker) error {
		var out struct {
			User *struct {
				Balance *float64 `json:"balance"`
			} `json:"user"`
		}
		if err := w.call(ctx, "", "GET", "/api/auth/user", nil, &out); err != nil {
			return err
		}
		if out.User == nil || out.User.Balance == nil {
			return protocolErrorf("GET /api/auth/user: no user.balance in the response")
		}
		return nil
	}}
	opLogin = op{name: "login", weight: 1, fn: func(ctx context.Context, w *worker) error {
		return w.call(ctx, "", "POST", "/api/auth/login", map[string]any{"username": w.p.name, "password": password,
			"turnstileToken": botToken}, nil)
	}}
	opMines = op{name: "mines", weight: 1, calls: []string{"mines/start", "mines/click", "mines/cashout"},
		fn: func(ctx context.Context, w *worker) error { return w.playMines(ctx) }}
	opBlackjack = op{name: "blackjack", weight: 1,
		calls: []string{"blackjack/start", "blackjack/insurance", "blackjack/hit", "blackjack/stand", "blackjack/double"},
		fn:    func(ctx context.Context, w *worker) error { return w.playBlackjack(ctx) }}
	opPump = op{name: "pump", weight: 1, calls: []string{"pump/start", "pump/pump", "pump/cashout"},
		fn: func(ctx context.Context, w *worker) error { return w.playPump(ctx) }}
)

// scenarioNames lists the scenarios in the order -help shows them.
var scenarioNames = []string{"login", "user", "balance", "dice", "plinko", "keno", "mines", "blackjack", "pump", "mix", "pwflood"}

func scenarioFor(name string) (scenario, error) {
	one := func(o op) scenario { return scenario{name: name, ops: []op{o}} }
	switch name {
	case "login":
		return one(opLogin), nil
	case "user", "balance":
		return one(opBalance), nil
	case "dice":
		return one(opDice), nil
	case "plinko":
		return one(opPlinko), nil
	case "keno":
		return one(opKeno), nil
	case "mines":
		return one(opMines), nil
	case "blackjack":
		return one(opBlackjack), nil
	case "pump":
		return one(opPump), nil
	case "mix":
		return scenario{name: name, ops: []op{opDice, opPlinko, opKeno, opMines, opPump, opBlackjack, opBalance}}, nil
	case "pwflood":
		// Two phases of its own (runPwflood), no weighted operations.
		return scenario{name: name}, nil
	}
	return scenario{}, fmt.Errorf("unknown scenario %q (want one of %s)", name, strings.Join(scenarioNames, ", "))
}

// playMines plays one full round: start, reveal 1 to 3 unrevealed tiles, and
// cash out unless a mine ended it.
func (w *worker) playMines(ctx context.Context) error {
	var st struct {
		GameID string `json:"gameId"`
	}
	if err := w.call(ctx, "mines/start", "POST", "/api/games/mines/start",
		map[string]any{"betAmount": stake, "mineCount": mineCount}, &st); err != nil {
		return err
	}
	if st.GameID == "" {
		return protocolErrorf("POST /api/games/mines/start: no gameId")
	}
	return w.finishMines(ctx, st.GameID, nil, 1+w.rng.IntN(3))
}

// finishMines reveals unrevealed tiles until gems gems are found, then cashes
// out; a mine (or the last gem) ends the game on its own.
func (w *worker) finishMines(ctx context.Context, id string, revealed []string, gems int) error {
	for len(revealed) < gems {
		var hidden []string
		for r := range 5 {
			for c := range 5 {
				if t := fmt.Sprintf("%d,%d", r, c); !slices.Contains(revealed, t) {
					hidden = append(hidden, t)
				}
			}
		}
		tile := hidden[w.rng.IntN(len(hidden))]
		var row, col int
		_, _ = fmt.Sscanf(tile, "%d,%d", &row, &col)
		var r struct {
			HitMine  bool     `json:"hitMine"`
			GameOver bool     `json:"gameOver"`
			Revealed []string `json:"revealed"`
		}
		if err := w.call(ctx, "mines/click", "POST", "/api/games/mines/click",
			map[string]any{"gameId": id, "row": row, "col": col}, &r); err != nil {
			return err
		}
		if r.HitMine || r.GameOver {
			return nil
		}
		if !slices.Contains(r.Revealed, tile) || len(r.Revealed) != len(revealed)+1 {
			return protocolErrorf("POST /api/games/mines/click %s: revealed %v after %v", tile, r.Revealed, revealed)
		}
		revealed = r.Revealed
	}
	var c struct {
		Success bool `json:"success"`
	}
	if err := w.call(ctx, "mines/cashout", "POST", "/api/games/mines/cashout", map[string]any{"gameId": id}, &c); err != nil {
		return err
	}
	if !c.Success {
		return protocolErrorf("POST /api/games/mines/cashout: success false")
	}
	return nil
}

// blackjackHand is what the blackjack calls answer, as far as the strategy
// needs it.
type blackjackHand struct {
	GameID      string `json:"gameId"`
	GameOver    bool   `json:"gameOver"`
	PlayerValue int    `json:"playerValue"`
	CanDouble   bool   `json:"canDouble"`
	Hands       struct {
		Insurance string `json:"insurance"`
		CanDouble bool   `json:"canDouble"`
	} `json:"hands"`
}

// playBlackjack plays one full hand: deal (a natural settles at once), decline
// insurance when the dealer shows an ace, then double on a first-two-card 10
// or 11, else hit below 17 and stand on 17 or more. It never splits.
func (w *worker) playBlackjack(ctx context.Context) error {
	var h blackjackHand
	if err := w.call(ctx, "blackjack/start", "POST", "/api/games/blackjack/start", map[string]any{"betAmount": stake}, &h); err != nil {
		return err
	}
	if h.GameOver {
		return nil
	}
	if h.GameID == "" {
		return protocolErrorf("POST /api/games/blackjack/start: no gameId")
	}
	return w.finishBlackjack(ctx, h.GameID, h.PlayerValue, h.CanDouble, h.Hands.Insurance == "offered")
}

func (w *worker) finishBlackjack(ctx context.Context, id string, value int, canDouble, insurance bool) error {
	body := map[string]any{"gameId": id}
	if insurance {
		var r blackjackHand
		decline := map[string]any{"gameId": id, "accept": false}
		if err := w.call(ctx, "blackjack/insurance", "POST", "/api/games/blackjack/insurance", decline, &r); err != nil {
			return err
		}
		if r.GameOver {
			return nil
		}
		value, canDouble = r.PlayerValue, r.Hands.CanDouble
	}
	for range 12 {
		var end string
		switch {
		case canDouble && (value == 10 || value == 11):
			end = "double"
		case value >= 17:
			end = "stand"
		}
		if end != "" {
			var r blackjackHand
			if err := w.call(ctx, "blackjack/"+end, "POST", "/api/games/blackjack/"+end, body, &r); err != nil {
				return err
			}
			if !r.GameOver {
				return protocolErrorf("POST /api/games/blackjack/%s: gameOver false", end)
			}
			return nil
		}
		var r blackjackHand
		if err := w.call(ctx, "blackjack/hit", "POST", "/api/games/blackjack/hit", body, &r); err != nil {
			return err
		}
		if r.GameOver {
			return nil
		}
		if r.PlayerValue >= 21 || r.PlayerValue < 4 {
			// a bust ends the game and 21 stands by itself
			return protocolErrorf("POST /api/games/blackjack/hit: playerValue %d and the game runs on", r.PlayerValue)
		}
		value, canDouble = r.PlayerValue, false
	}
	return protocolErrorf("blackjack game %s: not over after 12 hits", id)
}

// playPump plays one full game: start, pump 1 to 3 times, cash out unless
// the balloon burst.
func (w *worker) playPump(ctx context.Context) error {
	var st struct {
		GameID string `json:"gameId"`
	}
	if err := w.call(ctx, "pump/start", "POST", "/api/games/pump/start",
		map[string]any{"betAmount": stake, "difficulty": "medium"}, &st); err != nil {
		return err
	}
	if st.GameID == "" {
		return protocolErrorf("POST /api/games/pump/start: no gameId")
	}
	return w.finishPump(ctx, st.GameID, 0, 1+w.rng.IntN(3))
}

func (w *worker) finishPump(ctx context.Context, id string, pumps, target int) error {
	body := map[string]any{"gameId": id}
	for pumps < target {
		var r struct {
			Burst     bool `json:"burst"`
			GameOver  bool `json:"gameOver"`
			PumpCount int  `json:"pumpCount"`
		}
		if err := w.call(ctx, "pump/pump", "POST", "/api/games/pump/pump", body, &r); err != nil {
			return err
		}
		if r.Burst || r.GameOver {
			return nil
		}
		if r.PumpCount != pumps+1 {
			return protocolErrorf("POST /api/games/pump/pump: pumpCount %d after %d", r.PumpCount, pumps)
		}
		pumps = r.PumpCount
	}
	var c struct {
		Success bool `json:"success"`
	}
	if err := w.call(ctx, "pump/cashout", "POST", "/api/games/pump/cashout", body, &c); err != nil {
		return err
	}
	if !c.Success {
		return protocolErrorf("POST /api/games/pump/cashout: success false")
	}
	return nil
}

// resume finishes the player's running games (GET /api/games/active), so a
// round a failure (or an earlier run) left open does not block the next one
// with 409 "You already have a game in progress".
func (w *worker) resume(ctx context.Context) error {
	var a struct {
		Mines *struct {
			GameID   string   `json:"gameId"`
			Revealed []string `json:"revealed"`
		} `json:"mines"`
		Pump *struct {
			GameID    string `json:"gameId"`
			PumpCount int    `json:"pumpCount"`
		} `json:"pump"`
		Blackjack *struct {
			GameID      string `json:"gameId"`
			PlayerValue int    `json:"playerValue"`
			CanDouble   bool   `json:"canDouble"`
			Hands       struct {
				Insurance string `json:"insurance"`
			} `json:"hands"`
		} `json:"blackjack"`
	}
	if err := w.call(ctx, "", "GET", "/api/games/active", nil, &a); err != nil {
		return err
	}
	var errs []error
	if g := a.Mines; g != nil {
		errs = append(errs, w.finishMines(ctx, g.GameID, g.Revealed, max(len(g.Revealed), 1)))
	}
	if g := a.Pump; g != nil {
		errs = append(errs, w.finishPump(ctx, g.GameID, g.PumpCount, max(g.PumpCount, 1)))
	}
	if g := a.Blackjack; g != nil {
		errs = append(errs, w.finishBlackjack(ctx, g.GameID, g.PlayerValue, g.CanDouble, g.Hands.Insurance == "offered"))
	}
	return errors.Join(errs...)
}
