package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/postgres/pgtest"
)

// pumpState is the params and state of the tests' running game: how many
// steps it has taken.
type pumpState struct {
	Pumps int `json:"pumps"`
}

// startPump starts a pump game of p's staking 10 dollars through store
// (the batch path, which gives the store its copy of the game).
func startPump(t testing.TB, store *postgres.PlayStore, p batchPlayer) uuid.UUID {
	t.Helper()
	b := start(p, 1, play.Pump, false)
	b.Draw.Params, b.Draw.State = []byte(`{"pumps":0}`), []byte(`{"pumps":0}`)
	if _, _, err := store.PlaceBetAt(context.Background(), b.Bet, b.Pair, b.Draw); err != nil {
		t.Fatalf("start: %v", err)
	}
	return b.Bet.ID
}

// step is one action on the tests' game: one more pump, taking an extra
// stake, and, when end, settling with payout (dollars). seen, when set,
// gets the pumps each call of apply was given, and the balance.
type step struct {
	stake, payout int64
	end           bool
	seen          func(pumps int, balance money.Amount)
	// counted makes it an action that names the moves its caller saw.
	counted bool
	// stakes makes it an action that may stake (GameAction.Stakes); funds,
	// when set, gets what each call of apply was given and may refuse.
	stakes bool
	funds  func(play.Funds) error
}

func (s step) run(ctx context.Context, store *postgres.PlayStore, p batchPlayer, id uuid.UUID) (play.Placed, error) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	a := play.GameAction{UserID: p.user, SessionID: p.session, LiveSince: now.Add(-time.Hour), BetID: id, Game: play.Pump, At: now,
		Counted: s.counted, Stakes: s.stakes}
	return store.PlayOn(ctx, a, func(b play.BetWithSeeds, f play.Funds) (play.Change, error) {
		if b.Status != play.StatusActive {
			return play.Change{}, play.ErrGameOver
		}
		if s.funds != nil {
			if err := s.funds(f); err != nil {
				return play.Change{}, err
			}
		}
		return s.change(b.Bet, f.Balance, now)
	})
}

// change is the step decided on the game b (the player's balance then) at
// now: one more pump, the extra stake, and the payout if it ends the game.
func (s step) change(b play.Bet, balance money.Amount, now time.Time) (play.Change, error) {
	var st pumpState
	if err := json.Unmarshal(b.Params, &st); err != nil {
		return play.Change{}, err
	}
	if s.seen != nil {
		s.seen(st.Pumps, balance)
	}
	st.Pumps++
	raw, err := json.Marshal(st)
	if err != nil {
		return play.Change{}, err
	}
	nb := b
	nb.Params, nb.State = raw, raw
	nb.Amount += money.Amount(s.stake * 1e8)
	c := play.Change{Bet: nb, Stake: money.Amount(s.stake * 1e8)}
	if s.end {
		nb.Status, nb.Payout, nb.SettledAt = play.StatusSettled, money.Amount(s.payout*1e8), &now
		c.Bet, c.Payout = nb, nb.Payout
	}
	return c, nil
}

// gameRow is what the tests read back of a game's row.
type gameRow struct {
	status         string
	amount, payout int64
	pumps          int
}

func readGame(t *testing.T, pool *pgxpool.Pool, id uuid.UUID) gameRow {
	t.Helper()
	var (
		g      gameRow
		params []byte
		st     pumpState
	)
	if err := pool.QueryRow(context.Background(), `SELECT status, amount, payout, params FROM bets WHERE id = $1`, id).
		Scan(&g.status, &g.amount, &g.payout, &params); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(params, &st); err != nil {
		t.Fatal(err)
	}
	g.pumps = st.Pumps
	return g
}

func checkActions(t *testing.T, store *postgres.PlayStore, cached, locked int64) {
	t.Helper()
	if c, l := store.GameActions(); c != cached || l != locked {
		t.Errorf("actions saved from the copy %d, locking %d; want %d and %d", c, l, cached, locked)
	}
}

// TestGameActionFromTheReplicasCopy plays a game on the replica that
// started it: every action is decided from its copy and saved in one
// statement, which moves the money with its ledger entries and the play
// counts as the locking path does.
func TestGameActionFromTheReplicasCopy(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	store := postgres.NewPlayStore(pool)
	p := newBatchPlayer(t, pool, "copy", 1000e8)
	id := startPump(t, store, p)
	var seen []int
	record := func(pumps int, balance money.Amount) {
		seen = append(seen, pumps)
		if balance != 990e8 && balance != 980e8 {
			t.Errorf("apply given balance %s", balance)
		}
	}
	if placed, err := (step{seen: record}).run(ctx, store, p, id); err != nil || placed.Balance != 990e8 || placed.Username != "copy" {
		t.Fatalf("pump: %+v, %v", placed, err)
	}
	if placed, err := (step{stake: 10, seen: record}).run(ctx, store, p, id); err != nil || placed.Balance != 980e8 {
		t.Fatalf("double: %+v, %v", placed, err)
	}
	placed, err := (step{payout: 55, end: true, seen: record}).run(ctx, store, p, id)
	if err != nil || placed.Balance != 1035e8 {
		t.Fatalf("cash out: %+v, %v", placed, err)
	}
	if want := []int{0, 1, 2}; !equalInts(seen, want) {
		t.Errorf("apply saw pumps %v, want %v", seen, want)
	}
	checkActions(t, store, 3, 0)
	if g := readGame(t, pool, id); g != (gameRow{status: play.StatusSettled, amount: 20e8, payout: 55e8, pumps: 3}) {
		t.Errorf("game row %+v", g)
	}
	s := stateOf(t, pool, p.user)
	// start, double, payout.
	if s.balance != 1035e8 || s.ledgerSum != 35e8 || s.entries != 3 || s.dayWagered != 20e8 || s.dayLost != -35e8 {
		t.Errorf("player after the game: %+v", s)
	}
	// A settled game is no longer held: another action reads the row.
	if _, err := (step{}).run(ctx, store, p, id); !errors.Is(err, play.ErrGameOver) {
		t.Errorf("action on the settled game: %v, want ErrGameOver", err)
	}
	checkActions(t, store, 3, 1)
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGameActionWithoutACopy acts on a game another replica (or this one
// before a restart) started: the first action locks the row, the next is
// decided from the copy that one left.
func TestGameActionWithoutACopy(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	p := newBatchPlayer(t, pool, "nocopy", 1000e8)
	id := startPump(t, postgres.NewPlayStore(pool), p)
	other := postgres.NewPlayStore(pool)
	if placed, err := (step{}).run(ctx, other, p, id); err != nil || placed.Balance != 990e8 {
		t.Fatalf("first action: %+v, %v", placed, err)
	}
	checkActions(t, other, 0, 1)
	if placed, err := (step{payout: 20, end: true}).run(ctx, other, p, id); err != nil || placed.Balance != 1010e8 {
		t.Fatalf("second action: %+v, %v", placed, err)
	}
	checkActions(t, other, 1, 1)
	if g := readGame(t, pool, id); g != (gameRow{status: play.StatusSettled, amount: 10e8, payout: 20e8, pumps: 2}) {
		t.Errorf("game row %+v", g)
	}
}

// TestGameActionOnAnOvertakenCopy acts on a game from a replica whose copy
// another replica has overtaken: the one-statement save changes nothing,
// and the action is decided again from the row as the other left it.
func TestGameActionOnAnOvertakenCopy(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	p := newBatchPlayer(t, pool, "overtaken", 1000e8)
	first := postgres.NewPlayStore(pool)
	id := startPump(t, first, p)
	if _, err := (step{}).run(ctx, first, p, id); err != nil {
		t.Fatal(err)
	}
	second := postgres.NewPlayStore(pool)
	if _, err := (step{stake: 10}).run(ctx, second, p, id); err != nil {
		t.Fatal(err)
	}
	before := stateOf(t, pool, p.user)
	var seen []int
	placed, err := (step{payout: 40, end: true, seen: func(pumps int, _ money.Amount) { seen = append(seen, pumps) }}).run(ctx, first, p, id)
	if err != nil || placed.Balance != 1020e8 {
		t.Fatalf("action on the overtaken copy: %+v, %v", placed, err)
	}
	// From the copy (1 pump), then from the row (2: the other replica's).
	if want := []int{1, 2}; !equalInts(seen, want) {
		t.Errorf("apply saw pumps %v, want %v", seen, want)
	}
	checkActions(t, first, 1, 1)
	if g := readGame(t, pool, id); g != (gameRow{status: play.StatusSettled, amount: 20e8, payout: 40e8, pumps: 3}) {
		t.Errorf("game row %+v", g)
	}
	after := stateOf(t, pool, p.user)
	if after.balance != before.balance+40e8 || after.entries != before.entries+1 || after.ledgerSum != after.balance-1000e8 {
		t.Errorf("player before %+v, after %+v", before, after)
	}
}

// TestCountedGameActionLocksTheRow: an action that names the moves its
// caller saw is decided on the locked row, never on the replica's copy,
// even when the copy is current; so an overtaken copy is never drawn from.
func TestCountedGameActionLocksTheRow(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	p := newBatchPlayer(t, pool, "counted", 1000e8)
	first := postgres.NewPlayStore(pool)
	id := startPump(t, first, p)
	var seen []int
	record := func(pumps int, _ money.Amount) { seen = append(seen, pumps) }
	if _, err := (step{counted: true, seen: record}).run(ctx, first, p, id); err != nil {
		t.Fatal(err)
	}
	checkActions(t, first, 0, 1)
	// Another replica moves the game on; the first's copy (1 pump) is overtaken.
	if _, err := (step{}).run(ctx, postgres.NewPlayStore(pool), p, id); err != nil {
		t.Fatal(err)
	}
	if _, err := (step{counted: true, seen: record}).run(ctx, first, p, id); err != nil {
		t.Fatal(err)
	}
	// Only ever the row: 0 pumps, then 2 (the other replica's), never the copy's 1.
	if want := []int{0, 2}; !equalInts(seen, want) {
		t.Errorf("apply saw pumps %v, want %v", seen, want)
	}
	checkActions(t, first, 0, 2)
	// An action without moves still plays from the copy the locked path left.
	if _, err := (step{seen: record}).run(ctx, first, p, id); err != nil {
		t.Fatal(err)
	}
	checkActions(t, first, 1, 2)
	if g := readGame(t, pool, id); g.pumps != 4 {
		t.Errorf("game row %+v", g)
	}
}

// TestGameActionDoubleRefusedByALimitFromTheCopy: an extra stake decided
// from the copy that passes the player's wager limit is refused by the
// statement with the limit's message, changing nothing; the game goes on.
func TestGameActionDoubleRefusedByALimitFromTheCopy(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	store := postgres.NewPlayStore(pool)
	p := newBatchPlayer(t, pool, "limited", 1000e8)
	id := startPump(t, store, p)
	mustExec(t, pool, `UPDATE users SET wager_limit_day = 15e8 WHERE id = $1`, p.user)
	before := stateOf(t, pool, p.user)
	// refused doubles past the limit through s, which saves it from its copy
	// (cached) or on the locking path: refused, and nothing changes.
	refused := func(path string, s *postgres.PlayStore, cached, locked int64) {
		t.Helper()
		const want = "This bet would take your wagers past your daily wager limit of 15.00"
		if _, err := (step{stake: 10}).run(ctx, s, p, id); err == nil || err.Error() != want {
			t.Fatalf("double past the limit (%s): %v, want %q", path, err, want)
		}
		checkActions(t, s, cached, locked)
		if after := stateOf(t, pool, p.user); after != before {
			t.Errorf("a refused double (%s) changed the player: before %+v, after %+v", path, before, after)
		}
		if g := readGame(t, pool, id); g != (gameRow{status: play.StatusActive, amount: 10e8, pumps: 0}) {
			t.Errorf("game row after the refusal (%s) %+v", path, g)
		}
	}
	refused("from the copy", store, 1, 0)
	// A replica without a copy (the locking path) refuses it the same way.
	refused("locking", postgres.NewPlayStore(pool), 0, 1)
	// The balance short: refused the same way.
	mustExec(t, pool, `UPDATE users SET wager_limit_day = NULL, balance = 5e8 WHERE id = $1`, p.user)
	if _, err := (step{stake: 10}).run(ctx, store, p, id); !errors.Is(err, play.ErrInsufficientBalance) {
		t.Fatalf("double above the balance: %v, want ErrInsufficientBalance", err)
	}
	if placed, err := (step{payout: 0, end: true}).run(ctx, store, p, id); err != nil || placed.Balance != 5e8 {
		t.Fatalf("the game goes on: %+v, %v", placed, err)
	}
	checkActions(t, store, 3, 0)
}

// TestSimultaneousGameActionsOnTwoReplicas ends one game with many actions
// at once, from two replicas that both hold a copy, one of them stale:
// exactly one goes through, once, and the rest find the game over.
func TestSimultaneousGameActionsOnTwoReplicas(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	p := newBatchPlayer(t, pool, "race", 1000e8)
	stores := []*postgres.PlayStore{postgres.NewPlayStore(pool), postgres.NewPlayStore(pool)}
	id := startPump(t, stores[0], p)
	// Both replicas act, so one holds the game as it is and the other a
	// copy the first has overtaken.
	if _, err := (step{}).run(ctx, stores[1], p, id); err != nil {
		t.Fatal(err)
	}
	if _, err := (step{}).run(ctx, stores[0], p, id); err != nil {
		t.Fatal(err)
	}
	if _, err := (step{}).run(ctx, stores[1], p, id); err != nil {
		t.Fatal(err)
	}
	const n = 16
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins int
	)
	for i := range n {
		wg.Go(func() {
			_, err := (step{payout: 30, end: true}).run(ctx, stores[i%2], p, id)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, play.ErrGameOver):
				t.Errorf("action %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d actions ended the game, want 1", wins)
	}
	if g := readGame(t, pool, id); g != (gameRow{status: play.StatusSettled, amount: 10e8, payout: 30e8, pumps: 4}) {
		t.Errorf("game row %+v", g)
	}
	if s := stateOf(t, pool, p.user); s.balance != 1020e8 || s.ledgerSum != 20e8 || s.entries != 2 {
		t.Errorf("player after the race: %+v", s)
	}
}

// BenchmarkGameAction times one action on a running game, one after
// another: decided from the replica's copy and saved in one round trip
// (cached), and on the two-round-trip path that locks the row first
// (locked: a replica without a copy).
func BenchmarkGameAction(b *testing.B) {
	pool := pgtest.New(b)
	ctx := context.Background()
	for _, path := range []string{"cached", "locked"} {
		b.Run(path, func(b *testing.B) {
			store := postgres.NewPlayStore(pool)
			p := newBatchPlayer(b, pool, "bench_"+uuid.NewString()[:8], 1000e8)
			id := startPump(b, store, p)
			for b.Loop() {
				if path == "locked" {
					store = postgres.NewPlayStore(pool)
				}
				if _, err := (step{}).run(ctx, store, p, id); err != nil {
					b.Fatal(err)
				}
			}
			cached, locked := store.GameActions()
			if path == "cached" && locked != 0 || path == "locked" && cached != 0 {
				b.Fatalf("actions from the copy %d, locking %d", cached, locked)
			}
		})
	}
}

// TestActionSameSQLMovesNoMoney: actionSameSQL (a reveal, a pump, a hit
// saved from the replica's copy) has no update of the player and no ledger
// insert, and the server takes it only when no money moves. Given a stake
// or a payout all the same, it saves nothing and answers that the money did
// not move: a wrong choice could never pay or charge, nor save a bet whose
// money was not moved.
func TestActionSameSQLMovesNoMoney(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	ctx := context.Background()
	store := postgres.NewPlayStore(pool)
	p := newBatchPlayer(t, pool, "quiet", 1000e8)
	id := startPump(t, store, p)
	var (
		amount        int64
		params, state []byte
	)
	if err := pool.QueryRow(ctx, `SELECT amount, params, state FROM bets WHERE id = $1`, id).Scan(&amount, &params, &state); err != nil {
		t.Fatal(err)
	}
	before := stateOf(t, pool, p.user)
	now := time.Now().UTC().Truncate(time.Microsecond)
	next := []byte(`{"pumps":1}`)
	for _, m := range []struct{ stake, payout int64 }{{1e8, 0}, {0, 5e8}, {1e8, 5e8}} {
		var (
			live, held, moved, kept bool
			after                   int64
			refusal                 *string
			username                string
			hidden                  bool
		)
		if err := pool.QueryRow(ctx, postgres.ActionSameSQL, p.user, m.stake, m.payout, id, "active", amount, int64(0),
			int64(0), next, next, now, nil, p.session, now.Add(-time.Hour), "pump", amount, params, state).
			Scan(&live, &held, &after, &moved, &kept, &refusal, &username, &hidden); err != nil {
			t.Fatal(err)
		}
		if !live || !held || moved || kept || refusal != nil || after != before.balance {
			t.Errorf("stake %d, payout %d: live %v, copy held %v, moved %v, saved %v, refusal %v, balance %d; want the copy held, nothing moved or saved, balance %d",
				m.stake, m.payout, live, held, moved, kept, refusal, after, before.balance)
		}
		if got := stateOf(t, pool, p.user); got != before {
			t.Errorf("stake %d, payout %d: the player's state went from %+v to %+v", m.stake, m.payout, before, got)
		}
		var nowParams []byte
		if err := pool.QueryRow(ctx, `SELECT params FROM bets WHERE id = $1`, id).Scan(&nowParams); err != nil {
			t.Fatal(err)
		}
		if string(nowParams) != string(params) {
			t.Errorf("stake %d, payout %d: the bet was saved: params %s, want %s", m.stake, m.payout, nowParams, params)
		}
	}
}

// TestStakingActionDecidedOnTheLockedPlayer: an action that may stake (a
// blackjack double, split or insurance) is decided on the locking path even
// when the replica holds a copy, with the player's row locked from the first
// round trip and their stake headroom: apply refuses a stake above it before
// drawing, with the rule's own message, and nothing can tighten a rule
// between that decision and the save (which would refuse after the draw).
func TestStakingActionDecidedOnTheLockedPlayer(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	store := postgres.NewPlayStore(pool)
	p := newBatchPlayer(t, pool, "staker", 1000e8)
	id := startPump(t, store, p) // stakes 10 dollars, counted in today's wagers
	var got []play.Funds
	record := func(f play.Funds) error { got = append(got, f); return nil }
	if _, err := (step{stake: 5, stakes: true, funds: record}).run(ctx, store, p, id); err != nil {
		t.Fatalf("a stake with no rules: %v", err)
	}
	if len(got) != 1 || got[0] != (play.Funds{Balance: 990e8, Locked: true}) {
		t.Errorf("apply given %+v, want the balance, locked, and no cap", got)
	}
	checkActions(t, store, 0, 1)

	mustExec(t, pool, `UPDATE users SET wager_limit_day = 25e8 WHERE id = $1`, p.user)
	got = nil
	locked := func(f play.Funds) error {
		got = append(got, f)
		// The player's row is locked while the action decides.
		_, err := pool.Exec(ctx, `SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE NOWAIT`, p.user)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
			t.Errorf("the player's row was not locked while the action decided its stake: %v", err)
		}
		return &play.OverLimitsError{Stake: 11e8}
	}
	before := stateOf(t, pool, p.user)
	_, err := (step{stake: 11, stakes: true, funds: locked}).run(ctx, store, p, id)
	if want := "This bet would take your wagers past your daily wager limit of 25.00"; err == nil || err.Error() != want {
		t.Errorf("a stake over the limit: %v, want %q", err, want)
	}
	if len(got) != 1 || got[0] != (play.Funds{Balance: 985e8, Locked: true, Capped: true, Headroom: 10e8}) {
		t.Errorf("apply given %+v, want a headroom of 10 (25 less the 15 wagered today)", got)
	}
	if after := stateOf(t, pool, p.user); after != before {
		t.Errorf("a refused stake changed %+v into %+v", before, after)
	}
	if _, err := (step{stake: 10, stakes: true}).run(ctx, store, p, id); err != nil {
		t.Fatalf("a stake at the headroom: %v", err)
	}
	checkActions(t, store, 0, 3)
	if g := readGame(t, pool, id); g != (gameRow{status: play.StatusActive, amount: 25e8, pumps: 2}) {
		t.Errorf("game row %+v", g)
	}

	mustExec(t, pool, `UPDATE users SET break_until = now() + interval '1 hour' WHERE id = $1`, p.user)
	got = nil
	_, err = (step{stake: 10, stakes: true, funds: func(f play.Funds) error {
		got = append(got, f)
		return &play.OverLimitsError{Stake: 10e8}
	}}).run(ctx, store, p, id)
	if err == nil || !strings.HasPrefix(err.Error(), "You are taking a break from betting until ") {
		t.Errorf("a stake on a break: %v", err)
	}
	if len(got) != 1 || !got[0].Capped || got[0].Headroom >= 0 {
		t.Errorf("apply given %+v on a break, want no headroom", got)
	}
	// An action that stakes nothing still plays on a break, from the copy.
	if _, err := (step{}).run(ctx, store, p, id); err != nil {
		t.Errorf("a pump on a break: %v", err)
	}
	checkActions(t, store, 1, 4)
	// A staked action's apply is never given a copy's funds: without
	// a.Stakes the store decides from the copy, unlocked.
	mustExec(t, pool, `UPDATE users SET break_until = NULL, wager_limit_day = NULL WHERE id = $1`, p.user)
	got = nil
	if _, err := (step{stake: 1, funds: record}).run(ctx, store, p, id); err != nil {
		t.Fatalf("an unmarked stake: %v", err)
	}
	if len(got) != 1 || got[0].Locked {
		t.Errorf("apply given %+v from the copy, want unlocked funds", got)
	}
}

// TestRefusalOfAGoneSessionIsHeld: the session that last found a game live
// is decided from the replica's copy, and may be ended after (a logout). Its
// next action is drawn from the copy before the statement finds the session
// gone, and that work differs by outcome, so the refusal is held to a fixed
// time from the action's start (goneHold) and the copy dropped: one probe per
// sign-in, whose answer's time does not depend on the draw. A live session's
// action, a refusal on the locking path (decided before any draw) and the
// next action of the gone session are not held.
func TestRefusalOfAGoneSessionIsHeld(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	store := postgres.NewPlayStore(pool)
	var holds []time.Time
	postgres.SetHold(store, func(_ context.Context, start time.Time) { holds = append(holds, start) })
	p := newBatchPlayer(t, pool, "gone", 1000e8)
	id := startPump(t, store, p)
	if _, err := (step{}).run(ctx, store, p, id); err != nil {
		t.Fatalf("a pump of a live session: %v", err)
	}
	checkActions(t, store, 1, 0)
	mustExec(t, pool, `UPDATE sessions SET revoked_at = now() WHERE id = $1`, p.session)
	drawn := 0
	var drawnAt time.Time
	gone := step{seen: func(int, money.Amount) { drawn, drawnAt = drawn+1, time.Now() }}
	before := time.Now()
	if _, err := gone.run(ctx, store, p, id); !errors.Is(err, play.ErrUserGone) {
		t.Fatalf("a pump of the ended session: %v, want ErrUserGone", err)
	}
	if drawn != 1 {
		t.Errorf("apply ran %d times: want once, on the copy", drawn)
	}
	// Held from a start before the draw: the hold covers its work.
	if len(holds) != 1 || holds[0].Before(before) || holds[0].After(drawnAt) {
		t.Fatalf("held from %v: want once, from between %v and the draw at %v", holds, before, drawnAt)
	}
	// The copy is gone: the next probe takes the locking path, which
	// refuses the session before anything is drawn, and is not held.
	if _, err := gone.run(ctx, store, p, id); !errors.Is(err, play.ErrUserGone) {
		t.Fatalf("the second pump of the ended session: %v, want ErrUserGone", err)
	}
	if drawn != 1 || len(holds) != 1 {
		t.Errorf("the second probe: apply ran %d times in all, held %d times; want 1 and 1", drawn, len(holds))
	}
}

// An action decided from the copy that the statement finds stale goes on
// to the locking path; a session ended in between is refused there, before
// anything is drawn, but the answer's time still holds the draw on the
// copy, so it is held from the same start. The ending is made while apply
// runs on the copy: the copy refused (as a stale one is) and the session
// revoked before the locking path checks it.
func TestRefusalAfterAStaleCopyIsHeld(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	store := postgres.NewPlayStore(pool)
	var holds []time.Time
	postgres.SetHold(store, func(_ context.Context, start time.Time) { holds = append(holds, start) })
	p := newBatchPlayer(t, pool, "stalegone", 1000e8)
	id := startPump(t, store, p)
	if _, err := (step{}).run(ctx, store, p, id); err != nil {
		t.Fatalf("a pump of a live session: %v", err)
	}
	calls := 0
	var firstAt time.Time
	ending := step{funds: func(play.Funds) error {
		calls++
		if calls > 1 {
			t.Errorf("apply ran again (call %d): the locking path must refuse the ended session first", calls)
			return nil
		}
		firstAt = time.Now()
		mustExec(t, pool, `UPDATE sessions SET revoked_at = now() WHERE id = $1`, p.session)
		return errors.New("the copy is stale")
	}}
	before := time.Now()
	if _, err := ending.run(ctx, store, p, id); !errors.Is(err, play.ErrUserGone) {
		t.Fatalf("a pump whose session ended after the copy was decided: %v, want ErrUserGone", err)
	}
	if calls != 1 {
		t.Fatalf("apply ran %d times: want once, on the copy", calls)
	}
	if len(holds) != 1 || holds[0].Before(before) || holds[0].After(firstAt) {
		t.Fatalf("held from %v: want once, from between %v and the decision on the copy at %v", holds, before, firstAt)
	}
	// Without a copy there is no draw to hide: the next refusal is not held.
	if _, err := ending.run(ctx, store, p, id); !errors.Is(err, play.ErrUserGone) {
		t.Fatalf("the next pump: %v, want ErrUserGone", err)
	}
	if len(holds) != 1 {
		t.Errorf("held %d times: want once", len(holds))
	}
}

// The held answer goes out at the first whole multiple of goneHold from the
// start that has not passed: a statement slower than goneHold moves it to
// the next multiple, never to the statement's own time.
func TestHeldUntilIsAWholeMultiple(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	h := postgres.GoneHold
	for _, c := range []struct{ after, want time.Duration }{
		{0, h}, {time.Microsecond, h}, {h - time.Nanosecond, h}, {h, 2 * h}, {h + 3*time.Millisecond, 2 * h},
		{5*h + time.Microsecond, 6 * h},
	} {
		if got := postgres.HeldUntil(start, start.Add(c.after)).Sub(start); got != c.want {
			t.Errorf("%s after the start: held until %s, want %s", c.after, got, c.want)
		}
	}
}

// TestSavedWhenTheCallerGivesUpAfterTheDraw: an action whose caller gives
// up while it is drawn (apply cancels the context, as a player's deadline
// or hang-up may) is saved, from the replica's copy and on the locking
// path; a bet whose caller gave up after its draw, before it reached the
// store, is placed (drawnContext).
func TestSavedWhenTheCallerGivesUpAfterTheDraw(t *testing.T) {
	pool := pgtest.New(t)
	store := postgres.NewPlayStore(pool)
	p := newBatchPlayer(t, pool, "quitter", 1000e8)
	id := startPump(t, store, p)
	// The replica that started the game has its copy; another has none.
	other := postgres.NewPlayStore(pool)
	for i, s := range []*postgres.PlayStore{store, other} {
		ctx, cancel := context.WithCancel(context.Background())
		if _, err := (step{funds: func(play.Funds) error { cancel(); return nil }}).run(ctx, s, p, id); err != nil {
			t.Fatalf("action %d, its caller gone during the draw: %v", i+1, err)
		}
		if g := readGame(t, pool, id); g.pumps != i+1 {
			t.Fatalf("action %d: the game has %d pumps, want %d", i+1, g.pumps, i+1)
		}
	}
	checkActions(t, store, 1, 0) // from the copy
	checkActions(t, other, 0, 1) // locking
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := p.bet(2, 10, 0, "50.00")
	if placed, _, err := store.PlaceBetAt(ctx, b.Bet, b.Pair, b.Draw); err != nil || placed.Balance != 980e8 {
		t.Fatalf("a bet whose caller is gone: %+v, %v", placed, err)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM bets WHERE user_id = $1`, p.user); n != 2 {
		t.Fatalf("%d bets, want the game and the dice bet", n)
	}
}
