package play

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/games/blackjack"
	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/games/mines"
	"github.com/fairplay/fairplay/internal/games/pump"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/problem"
)

// These tests play the stateful games through the code a game's start and
// its actions run inside their transactions (open and step, with the
// actions the Service's methods pass to act), from random seed pairs, with
// random moves, legal or not, and the row handed back as the store would.
// Two properties, against a hostile player:
//
//   - Whether a move is refused, and how, is decided by what the player
//     sees (the board, the hands with the hole card hidden, the balance
//     and what the player's limits let them stake,
//     the number of moves made, which a request may name),
//     never by the hidden mines, pops or cards: across all the games played,
//     one view and one move always get one answer.
//   - A move the rules accept never fails afterwards: the settlement's
//     replay, the blackjack base stake and the state's encoding hold for
//     every outcome, so no answer can be an error (a 500) that only some
//     hidden layouts produce.

// chooser picks the random choices of one game: from a PRNG in the property
// test, from the fuzzer's bytes in the fuzz test.
type chooser interface {
	// pick returns a number in [0, n); ok is false when the choices ran out.
	pick(n int) (v int, ok bool)
}

type rngChooser struct{ *rand.Rand }

func (c rngChooser) pick(n int) (int, bool) { return c.IntN(n), true }

type byteChooser struct{ b []byte }

func (c *byteChooser) pick(n int) (int, bool) {
	if len(c.b) == 0 {
		return 0, false
	}
	v := int(c.b[0]) % n
	c.b = c.b[1:]
	return v, true
}

// move is one of a game's moves as the test plays it: its name and the
// action the Service would pass to act.
type move[G any] struct {
	name   string
	action func(r *Round[G]) error
}

// table is one stateful game to the test: its kind, a start drawn from the
// chooser (params, deal, a description of them for the answers' keys), the
// moves open to a player, and the player's view of a running game.
type table[G any] struct {
	kind  kind[G]
	start func(c chooser) (games.Params, func(event.Source) (*G, error), string, bool)
	moves func(c chooser) (move[G], bool)
	view  func(r *Round[G]) string
}

var minesTable = table[mines.Game]{
	kind: minesKind,
	start: func(c chooser) (games.Params, func(event.Source) (*mines.Game, error), string, bool) {
		n, ok := c.pick(mines.MaxMines - mines.MinMines + 1)
		n += mines.MinMines
		return games.Params{Mines: n}, func(src event.Source) (*mines.Game, error) { return mines.New(src, n) },
			fmt.Sprint(n, " mines"), ok
	},
	moves: func(c chooser) (move[mines.Game], bool) {
		t, ok := c.pick(mines.Tiles + 3)
		if t >= mines.Tiles {
			return move[mines.Game]{"cash out", cashOutMines}, ok
		}
		var hit bool
		return move[mines.Game]{fmt.Sprint("reveal ", t), revealTile(t, &hit)}, ok
	},
	view: func(r *Round[mines.Game]) string {
		return fmt.Sprint(slices.Sorted(slices.Values(r.Game.Revealed)))
	},
}

var pumpTable = table[pump.Game]{
	kind: pumpKind,
	start: func(c chooser) (games.Params, func(event.Source) (*pump.Game, error), string, bool) {
		ds := pump.Difficulties
		i, ok := c.pick(len(ds))
		d := ds[i]
		return games.Params{Difficulty: string(d)}, func(src event.Source) (*pump.Game, error) { return pump.New(src, d) },
			string(d), ok
	},
	moves: func(c chooser) (move[pump.Game], bool) {
		i, ok := c.pick(4)
		if i == 0 {
			return move[pump.Game]{"cash out", cashOutPump}, ok
		}
		var burst bool
		return move[pump.Game]{"pump", pumpOnce(&burst)}, ok
	},
	view: func(r *Round[pump.Game]) string { return fmt.Sprint(r.Game.Pumps, " pumps") },
}

var blackjackTable = table[blackjack.Game]{
	kind: blackjackKind,
	start: func(chooser) (games.Params, func(event.Source) (*blackjack.Game, error), string, bool) {
		return games.Params{Rules: int(blackjack.RulesSplit)}, func(src event.Source) (*blackjack.Game, error) {
			return blackjack.Deal(blackjack.NewDeck(src), blackjack.RulesSplit)
		}, "split rules", true
	},
	moves: func(c chooser) (move[blackjack.Game], bool) {
		moves := []move[blackjack.Game]{{"hit", blackjackHit}, {"stand", blackjackStand},
			{"double", blackjackDouble}, {"split", blackjackSplit}, {"insure", blackjackInsure},
			{"decline", blackjackDecline}}
		i, ok := c.pick(len(moves))
		return moves[i], ok
	},
	view: func(r *Round[blackjack.Game]) string {
		v, err := json.Marshal(r.Game.View())
		if err != nil {
			panic(err)
		}
		return string(v)
	},
}

// playout plays one game of t and checks every answer; answers maps each
// view and move seen so far to the answer it got.
func playout[G any](t testing.TB, c chooser, tb table[G], answers map[string]string) {
	t.Helper()
	l := DefaultLimits()
	params, deal, desc, ok := tb.start(c)
	if !ok {
		return
	}
	seed := make([]byte, 32)
	for i := range seed {
		b, _ := c.pick(256)
		seed[i] = byte(b)
	}
	cents, _ := c.pick(4)
	stake := []money.Amount{l.MinBet, money.FromCents(137), money.Dollars(25), l.MaxBet}[cents]
	if err := l.check(stake); err != nil {
		t.Fatalf("stake %s: %v", stake, err)
	}
	nonce, _ := c.pick(1 << 20)
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	pair := SeedPair{ID: uuid.New(), ServerSeed: hex.EncodeToString(seed), ClientSeed: fmt.Sprintf("client-%x", seed[:4]),
		Nonce: int64(nonce) + 1}
	bet := Bet{ID: uuid.New(), UserID: uuid.New(), Game: tb.kind.game, Status: StatusActive, Amount: stake, CreatedAt: now}
	what := fmt.Sprintf("%s (%s), server seed %s, client seed %s, nonce %d, stake %s", tb.kind.game, desc,
		pair.ServerSeed, pair.ClientSeed, pair.Nonce, stake)
	r, err := open(tb.kind, l, bet, params, pair, now, deal)
	if err != nil {
		t.Fatalf("%s: the start failed: %v", what, err)
	}
	checkSaved(t, what, l, r.Bet)
	checkStateSize(t, what, tb.kind, r.Bet)
	row := BetWithSeeds{Bet: r.Bet, Pair: pair}
	view := tb.view(r)
	// A balance the player can see: none, half the stake, the stake, plenty.
	balances := []money.Amount{0, stake / 2, stake, 100 * stake}
	// What the player's own rules let them stake: no cap, a break, half
	// the stake, the stake, plenty.
	headrooms := []money.Amount{-2, -1, stake / 2, stake, 100 * stake}
	for played := 0; played < 40; played++ {
		m, ok := tb.moves(c)
		if !ok {
			return
		}
		bi, _ := c.pick(len(balances))
		hi, _ := c.pick(len(headrooms))
		funds := Funds{Balance: balances[bi], Locked: true, Capped: headrooms[hi] > -2, Headroom: headrooms[hi]}
		// The moves the request says it saw: none, the game's, or one off.
		si, _ := c.pick(4)
		var seen *int
		if si > 0 {
			n := tb.kind.moves(games.Params{}) // 0 for a game that cannot be read
			if p, err := paramsOf(row.Params); err == nil {
				n = tb.kind.moves(p)
			}
			n += []int{0, 0, 1, -1}[si]
			seen = &n
		}
		key := fmt.Sprintf("%s|%s|%s|balance %d|headroom %d|seen %d|%s", tb.kind.game, desc, view, bi, hi, si, m.name)
		if row.Status != StatusActive {
			key = fmt.Sprintf("%s|over|%s", tb.kind.game, m.name)
		}
		r, ch, err := step(tb.kind, l, row, funds, now, seen, m.action)
		answer := "accepted"
		var over *OverLimitsError
		switch {
		case errors.As(err, &over):
			answer = overLimits
			if !funds.Capped || over.Stake <= funds.Headroom {
				t.Fatalf("%s: %s refused a stake of %s as over the limits, with %+v", what, m.name, over.Stake, funds)
			}
		case err != nil:
			var p *problem.Error
			if !errors.As(err, &p) || (p.Kind != problem.KindInvalid && p.Kind != problem.KindConflict) {
				t.Fatalf("%s: after %q, %s failed with an internal error: %v", what, row.Params, m.name, err)
			}
			answer = err.Error()
		}
		if err == nil && funds.Capped && ch.Stake > 0 && ch.Stake > funds.Headroom {
			t.Fatalf("%s: %s took %s past a headroom of %s", what, m.name, ch.Stake, funds.Headroom)
		}
		if prev, seen := answers[key]; seen && prev != answer {
			t.Fatalf("%s: %s: %q here, %q in another game with the same view (%s): the answer depends on what "+
				"the player cannot see", what, m.name, answer, prev, key)
		}
		answers[key] = answer
		if err != nil {
			continue // the transaction rolls back: the row is as it was
		}
		if ch.Stake < 0 || ch.Bet.Amount != row.Amount+ch.Stake {
			t.Fatalf("%s: %s took %s on a total stake of %s, now %s", what, m.name, ch.Stake, row.Amount,
				ch.Bet.Amount)
		}
		if r.Over() != (ch.Bet.Status == StatusSettled) || (!r.Over() && ch.Payout != 0) {
			t.Fatalf("%s: %s: over %v, saved status %s, payout %s", what, m.name, r.Over(), ch.Bet.Status, ch.Payout)
		}
		if r.Over() && ch.Payout != ch.Bet.Payout {
			t.Fatalf("%s: %s credits %s, the bet says %s", what, m.name, ch.Payout, ch.Bet.Payout)
		}
		checkSaved(t, what, l, ch.Bet)
		checkStateSize(t, what, tb.kind, ch.Bet)
		row = BetWithSeeds{Bet: ch.Bet, Pair: pair}
		view = tb.view(r)
	}
}

// overLimits is the answer to a stake refused as above the player's
// headroom (the store names the rule).
const overLimits = "over the limits"

// checkStateSize checks that a running game's state fits the buffer its
// kind encodes it into (encodeState), and a settled Blackjack game's outcome
// its own (marshalOutcome), so that their encoding allocates the same
// whatever the hidden layout.
func checkStateSize[G any](t testing.TB, what string, k kind[G], b Bet) {
	t.Helper()
	if b.Status == StatusActive && (len(b.State) > k.stateSize || cap(b.State) != k.stateSize) {
		t.Fatalf("%s: a state of %d bytes (capacity %d) for a buffer of %d", what, len(b.State), cap(b.State),
			k.stateSize)
	}
	if k.game == Blackjack && b.Status == StatusSettled &&
		(len(b.State) > blackjackOutcomeSize || cap(b.State) != blackjackOutcomeSize) {
		t.Fatalf("%s: an outcome of %d bytes (capacity %d) for a buffer of %d", what, len(b.State), cap(b.State),
			blackjackOutcomeSize)
	}
}

// paramsOf reads a bet's params.
func paramsOf(raw json.RawMessage) (games.Params, error) {
	var p games.Params
	err := json.Unmarshal(raw, &p)
	return p, err
}

// checkSaved checks a bet as it is about to be saved: a running game's
// state reads back; a settled one pays 0 … MaxPayout, stake × multiplier
// rounded down unless capped.
func checkSaved(t testing.TB, what string, l Limits, b Bet) {
	t.Helper()
	if b.Status == StatusActive {
		if b.Payout != 0 || b.SettledAt != nil {
			t.Fatalf("%s: a running game pays %s", what, b.Payout)
		}
		return
	}
	if b.Status != StatusSettled || b.SettledAt == nil {
		t.Fatalf("%s: saved as %q", what, b.Status)
	}
	if b.Payout < 0 || b.Payout > l.MaxPayout {
		t.Fatalf("%s: pays %s", what, b.Payout)
	}
	if b.Game != Blackjack && b.Payout != l.payout(b.Amount, b.Multiplier) {
		t.Fatalf("%s: pays %s on %s at %sx", what, b.Payout, b.Amount, b.Multiplier)
	}
}

// TestStatefulAnswersFollowTheView plays thousands of random games of each
// stateful kind (see the top of the file).
func TestStatefulAnswersFollowTheView(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261127, 18))
	n := 3000
	if testing.Short() {
		n = 300
	}
	answers := map[string]string{}
	for range n {
		playout(t, rngChooser{rng}, minesTable, answers)
		playout(t, rngChooser{rng}, pumpTable, answers)
		playout(t, rngChooser{rng}, blackjackTable, answers)
	}
	// The test saw the refusals it is about, each under many views.
	refused := map[string]int{}
	for _, a := range answers {
		refused[a]++
	}
	if refused[overLimits] < 3 {
		t.Errorf("a stake over the limits was refused under %d views: the random games did not reach it", refused[overLimits])
	}
	for _, want := range []error{ErrGameOver, mines.ErrAlreadyRevealed, mines.ErrNothingToCashOut,
		pump.ErrNothingToCashOut, ErrCannotDouble, ErrCannotSplit, ErrInsuranceFirst, ErrNoInsurance,
		ErrInsufficientBalance, ErrGameMovedOn} {
		if refused[want.Error()] < 3 {
			t.Errorf("%q was answered under %d views: the random games did not reach it", want, refused[want.Error()])
		}
	}
	t.Logf("%d distinct views and moves; answers: %v", len(answers), refused)
}

// FuzzStatefulGame plays one game of the fuzzer's choosing: which game, its
// seeds, stake and moves.
func FuzzStatefulGame(f *testing.F) {
	f.Add(byte(0), []byte{3, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
		25, 26, 27, 28, 29, 30, 31, 32, 2, 7, 7, 0, 1, 1, 2, 2, 3, 3, 4, 4, 25, 0})
	f.Add(byte(1), []byte{2, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
		9, 9, 9, 1, 5, 1, 0, 1, 3, 1, 3, 0, 3})
	f.Add(byte(2), []byte{200, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
		25, 26, 27, 28, 29, 30, 31, 3, 4, 77, 4, 0, 3, 3, 2, 2, 0, 3, 0, 3, 1, 3})
	f.Fuzz(func(t *testing.T, which byte, choices []byte) {
		c := &byteChooser{choices}
		answers := map[string]string{}
		switch which % 3 {
		case 0:
			playout(t, c, minesTable, answers)
		case 1:
			playout(t, c, pumpTable, answers)
		default:
			playout(t, c, blackjackTable, answers)
		}
	})
}
