package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/postgres/pgtest"
)

// pumpCopy is the copy of a pump game startPump started (10 dollars, no
// pump yet), as the replica holds it.
func pumpCopy(p batchPlayer, id uuid.UUID) play.Bet {
	return play.Bet{ID: id, UserID: p.user, Game: play.Pump, Status: play.StatusActive, Amount: 10e8,
		SeedPairID: p.pair.ID, ClientSeed: p.pair.ClientSeed, Nonce: 1,
		Params: []byte(`{"pumps":0}`), State: []byte(`{"pumps":0}`)}
}

// batchStep is s (as step.run decides it) on the copy old, as one action of
// a batch.
func batchStep(p batchPlayer, old play.Bet, s step) postgres.BatchAction {
	now := time.Now().UTC().Truncate(time.Microsecond)
	c, err := s.change(old, 0, now)
	if err != nil {
		panic(err)
	}
	return postgres.BatchAction{
		Action: play.GameAction{UserID: p.user, SessionID: p.session, LiveSince: now.Add(-time.Hour), BetID: old.ID,
			Game: play.Pump, At: now},
		Old: old, Change: c,
	}
}

// holdRow opens a transaction on its own connection that locks one row
// (sql names it with $1) until the returned function rolls it back.
func holdRow(t *testing.T, pool interface {
	Begin(context.Context) (pgx.Tx, error)
}, sql string, id uuid.UUID) func() {
	t.Helper()
	tx, err := pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(context.Background(), sql, id); err != nil {
		t.Fatal(err)
	}
	return func() { _ = tx.Rollback(context.Background()) }
}

// TestActionBatchAnswersEachAction saves one batch holding an action of
// every kind of answer, and the same actions each by the statement of its
// own that a busy action takes: every action gets the same answer on both
// paths, and only the saved ones change anything, the same on both (the
// cases of a row another transaction holds are the batch's own: the
// statement alone waits for it).
func TestActionBatchAnswersEachAction(t *testing.T) {
	for _, path := range []string{"batch", "alone"} {
		t.Run(path, func(t *testing.T) { testActionAnswers(t, path) })
	}
}

func testActionAnswers(t *testing.T, path string) {
	pool := pgtest.New(t)
	store := postgres.NewPlayStore(pool)
	type kase struct {
		name    string
		held    bool // a row held by another transaction: the batch's case only
		balance money.Amount
		setup   func(p batchPlayer, id uuid.UUID) // before the batch
		step    step
		old     func(b play.Bet) play.Bet // the copy, when not the row
		want    error                     // nil: saved
		refused bool
		// The player's balance after, in dollars, and the game's row.
		after int64
		game  gameRow
		// entries added to the ledger, and their sum (dollars).
		entries, ledger int64
	}
	var release []func()
	defer func() {
		for _, r := range release {
			r()
		}
	}()
	cases := []kase{
		{name: "pump", step: step{}, after: 990, game: gameRow{status: play.StatusActive, amount: 10e8, pumps: 1}},
		{name: "double", step: step{stake: 10}, after: 980, entries: 1, ledger: -10,
			game: gameRow{status: play.StatusActive, amount: 20e8, pumps: 1}},
		{name: "cashout", step: step{payout: 55, end: true}, after: 1045, entries: 1, ledger: 55,
			game: gameRow{status: play.StatusSettled, amount: 10e8, payout: 55e8, pumps: 1}},
		{name: "lost", step: step{end: true}, after: 990,
			game: gameRow{status: play.StatusSettled, amount: 10e8, pumps: 1}},
		{name: "limit", setup: func(p batchPlayer, _ uuid.UUID) {
			mustExec(t, pool, `UPDATE users SET wager_limit_day = 15e8 WHERE id = $1`, p.user)
		}, step: step{stake: 10}, want: errors.New("This bet would take your wagers past your daily wager limit of 15.00"),
			refused: true, after: 990, game: gameRow{status: play.StatusActive, amount: 10e8}},
		{name: "short", balance: 15e8, step: step{stake: 10}, want: play.ErrInsufficientBalance, refused: true, after: 5,
			game: gameRow{status: play.StatusActive, amount: 10e8}},
		{name: "gone", setup: func(p batchPlayer, _ uuid.UUID) {
			mustExec(t, pool, `UPDATE sessions SET revoked_at = now() WHERE id = $1`, p.session)
		}, step: step{payout: 20, end: true}, want: play.ErrUserGone, after: 990, game: gameRow{status: play.StatusActive, amount: 10e8}},
		{name: "deleted", setup: func(p batchPlayer, _ uuid.UUID) {
			mustExec(t, pool, `UPDATE users SET deleted_at = now() WHERE id = $1`, p.user)
		}, step: step{}, want: play.ErrUserGone, after: 990, game: gameRow{status: play.StatusActive, amount: 10e8}},
		{name: "stale", step: step{payout: 20, end: true}, old: func(b play.Bet) play.Bet {
			b.Params = []byte(`{"pumps":7}`)
			return b
		}, want: postgres.ErrStaleGame, after: 990, game: gameRow{status: play.StatusActive, amount: 10e8}},
		{name: "grown", step: step{payout: 20, end: true}, old: func(b play.Bet) play.Bet {
			b.Amount = 20e8
			return b
		}, want: postgres.ErrStaleGame, after: 990, game: gameRow{status: play.StatusActive, amount: 10e8}},
		{name: "game held", held: true, setup: func(_ batchPlayer, id uuid.UUID) {
			release = append(release, holdRow(t, pool, `SELECT 1 FROM bets WHERE id = $1 FOR UPDATE`, id))
		}, step: step{}, want: postgres.ErrStaleGame, after: 990, game: gameRow{status: play.StatusActive, amount: 10e8}},
		{name: "player held", held: true, setup: func(p batchPlayer, _ uuid.UUID) {
			release = append(release, holdRow(t, pool, `SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE`, p.user))
		}, step: step{payout: 20, end: true}, want: postgres.ErrPlayerBusy, after: 990,
			game: gameRow{status: play.StatusActive, amount: 10e8}},
		// No money moves, and the action is busy all the same (migration
		// 00023): whether an action moves money depends on what it drew.
		{name: "player held, pump", held: true, setup: func(p batchPlayer, _ uuid.UUID) {
			release = append(release, holdRow(t, pool, `SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE`, p.user))
		}, step: step{}, want: postgres.ErrPlayerBusy, after: 990, game: gameRow{status: play.StatusActive, amount: 10e8}},
		{name: "player held, lost", held: true, setup: func(p batchPlayer, _ uuid.UUID) {
			release = append(release, holdRow(t, pool, `SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE`, p.user))
		}, step: step{end: true}, want: postgres.ErrPlayerBusy, after: 990, game: gameRow{status: play.StatusActive, amount: 10e8}},
	}
	if path == "alone" {
		cases = slices.DeleteFunc(cases, func(c kase) bool { return c.held })
	}
	var (
		players []batchPlayer
		ids     []uuid.UUID
		before  []playerState
		actions []postgres.BatchAction
	)
	for i, c := range cases {
		bal := c.balance
		if bal == 0 {
			bal = 1000e8
		}
		p := newBatchPlayer(t, pool, fmt.Sprintf("act%d", i), bal)
		id := startPump(t, store, p)
		players, ids = append(players, p), append(ids, id)
	}
	for i, c := range cases {
		if c.setup != nil {
			c.setup(players[i], ids[i])
		}
		before = append(before, stateOf(t, pool, players[i].user))
		old := pumpCopy(players[i], ids[i])
		a := batchStep(players[i], old, c.step)
		if c.old != nil {
			a.Old = c.old(old)
		}
		actions = append(actions, a)
	}
	var got []postgres.ActionAnswer
	if path == "batch" {
		// The first player's second action in the same batch: busy, after
		// the first.
		second := batchStep(players[0], pumpCopy(players[0], ids[0]), step{payout: 5, end: true})
		got = postgres.ExecActionBatch(store, append(actions, second))
		if !errors.Is(got[len(cases)].Err, postgres.ErrPlayerBusy) {
			t.Errorf("the first player's second action: %+v, want busy", got[len(cases)])
		}
	} else {
		for _, a := range actions {
			got = append(got, postgres.SaveActionAlone(store, a))
		}
	}
	for _, r := range release {
		r()
	}
	release = nil
	for i, c := range cases {
		r, p := got[i], players[i]
		switch {
		case c.want == nil && r.Err != nil:
			t.Errorf("%s: %v", c.name, r.Err)
		case c.want != nil && (r.Err == nil || (!errors.Is(r.Err, c.want) && r.Err.Error() != c.want.Error())):
			t.Errorf("%s: %v, want %v", c.name, r.Err, c.want)
		}
		if r.Refused != c.refused {
			t.Errorf("%s: refused %v, want %v", c.name, r.Refused, c.refused)
		}
		if (c.want == nil || c.refused) && r.Placed.Balance != money.Amount(c.after*1e8) {
			t.Errorf("%s: answered balance %s, want %d", c.name, r.Placed.Balance, c.after)
		}
		if c.want == nil && r.Placed.Username != fmt.Sprintf("act%d", i) {
			t.Errorf("%s: answered username %q", c.name, r.Placed.Username)
		}
		s := stateOf(t, pool, p.user)
		if s.balance != c.after*1e8 || s.entries != before[i].entries+c.entries || s.ledgerSum != before[i].ledgerSum+c.ledger*1e8 {
			t.Errorf("%s: player %+v after, %+v before", c.name, s, before[i])
		}
		wagered := before[i].dayWagered
		if c.want == nil {
			wagered += c.step.stake * 1e8
		}
		if s.dayWagered != wagered {
			t.Errorf("%s: wagered today %d, want %d", c.name, s.dayWagered, wagered)
		}
		if g := readGame(t, pool, ids[i]); g != c.game {
			t.Errorf("%s: game %+v, want %+v", c.name, g, c.game)
		}
	}
	if statements, held, _ := store.ActionBatches(); statements != 0 || held != 0 {
		// ExecActionBatch runs a batcher of its own.
		t.Errorf("the store's batcher counted %d statements of %d actions", statements, held)
	}
}

// TestActionBatchTakesOnePerPlayer: a batch holds a player's oldest action
// only, up to its size, in the order they came.
func TestActionBatchTakesOnePerPlayer(t *testing.T) {
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	batch, queued := postgres.TakeActionBatch([]uuid.UUID{a, b, a, c, b, c}, 8)
	if !slices.Equal(batch, []int{0, 1, 3}) || !slices.Equal(queued, []int{2, 4, 5}) {
		t.Errorf("batch %v, queued %v", batch, queued)
	}
	batch, queued = postgres.TakeActionBatch([]uuid.UUID{a, b, c}, 2)
	if !slices.Equal(batch, []int{0, 1}) || !slices.Equal(queued, []int{2}) {
		t.Errorf("size 2: batch %v, queued %v", batch, queued)
	}
}

// TestConcurrentGameActionsInBatches plays many players' games at once
// through one store: their actions go out in shared statements, and every
// player ends with the money and the ledger the actions made, every game
// saved as its last action left it.
func TestConcurrentGameActionsInBatches(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	store := postgres.NewPlayStore(pool)
	const players, rounds = 24, 6
	var wg sync.WaitGroup
	errs := make(chan error, players)
	ps := make([]batchPlayer, players)
	for i := range players {
		ps[i] = newBatchPlayer(t, pool, fmt.Sprintf("many%d", i), 1000e8)
	}
	for i := range players {
		wg.Go(func() {
			p := ps[i]
			for r := range rounds {
				b := start(p, int64(r+1), play.Pump, false)
				b.Draw.Params, b.Draw.State = []byte(`{"pumps":0}`), []byte(`{"pumps":0}`)
				if _, _, err := store.PlaceBetAt(ctx, b.Bet, b.Pair, b.Draw); err != nil {
					errs <- fmt.Errorf("player %d round %d: start: %w", i, r, err)
					return
				}
				id := b.Bet.ID
				// pump, double, pump, cash out 1 dollar per round and player
				// index: every round stakes 20 and pays r+i+1.
				for _, s := range []step{{}, {stake: 10}, {}, {payout: int64(r + i + 1), end: true}} {
					if _, err := s.run(ctx, store, p, id); err != nil {
						errs <- fmt.Errorf("player %d round %d: %w", i, r, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, p := range ps {
		var paid int64
		for r := range rounds {
			paid += int64(r + i + 1)
		}
		want := (1000 - rounds*20 + paid) * 1e8
		s := stateOf(t, pool, p.user)
		// Each round: the start, the double, the payout.
		if s.balance != want || s.ledgerSum != want-1000e8 || s.entries != 3*rounds || s.dayWagered != rounds*20e8 {
			t.Errorf("player %d: %+v, want balance %d", i, s, want)
		}
		var running int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM bets WHERE user_id = $1 AND (status <> 'settled'
			OR params <> '{"pumps": 4}' OR amount <> 20e8)`, p.user).Scan(&running); err != nil || running != 0 {
			t.Errorf("player %d: %d games not saved as their last action left them (%v)", i, running, err)
		}
	}
	statements, actions, alone := store.ActionBatches()
	cached, locked := store.GameActions()
	t.Logf("%d actions in %d statements (%d alone afterwards); %d from the copy, %d locking",
		actions, statements, alone, cached, locked)
	if actions != cached || cached+locked != players*rounds*4 {
		t.Errorf("%d actions batched, %d from the copy, %d locking; want %d in all", actions, cached, locked, players*rounds*4)
	}
	if statements >= actions {
		t.Errorf("%d statements for %d actions: no batch held two", statements, actions)
	}
	if _, busy := store.BatchTime(); busy <= 0 {
		t.Errorf("the action statements took %v in all", busy)
	}
}

// actionRule is one case of the players' own limits on an extra stake: a
// double of 100 dollars on a pump game started with 10, after set (a SQL
// SET list for the player's row). refusal is the refusal's message (empty:
// the double goes through).
type actionRule struct {
	name, set, refusal string
	balance            money.Amount // zero: 1000 dollars
}

func actionRules() []actionRule {
	rules := []actionRule{
		{name: "a stake up to the limits", set: "wager_limit_day = 200e8, loss_limit_day = 200e8"},
		{name: "a looser limit still waiting", set: "loss_limit_day = 50e8, next_loss_limit_day = 500e8, next_limits_from = now() + interval '1 hour'",
			refusal: "This bet could take your net loss past your daily loss limit of 50.00"},
		{name: "a looser limit after its wait", set: "loss_limit_day = 50e8, next_loss_limit_day = 500e8, next_limits_from = now() - interval '1 second'"},
		{name: "on a break", set: "break_until = '2099-01-02 03:04:05+00'",
			refusal: "You are taking a break from betting until 2 January 2099, 03:04 UTC"},
		{name: "after a break", set: "break_until = now() - interval '1 second'"},
		{name: "self-excluded permanently", set: "excluded_until = 'infinity'",
			refusal: "You have excluded yourself from betting permanently"},
		{name: "self-excluded, balance short", balance: 50e8, set: "excluded_until = '2099-03-03 00:00:00+00'",
			refusal: "You have excluded yourself from betting until 3 March 2099, 00:00 UTC"},
	}
	eachLimit(func(column, refusal string) {
		rules = append(rules,
			actionRule{name: column + " alone", set: column + " = 50e8", refusal: refusal},
			actionRule{name: "next_" + column + " alone, after its wait", refusal: refusal,
				set: "next_" + column + " = 50e8, next_limits_from = now() - interval '1 second'"})
	})
	return rules
}

// TestActionLimitsOnEveryPath runs one table of the players' own limits
// against an extra stake (a double) on every path that saves an action:
// in a batch, alone (the batch's busy actions), and on the locking path (a
// replica without a copy). Each refuses with the rule's message and
// changes nothing, or takes the stake.
func TestActionLimitsOnEveryPath(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	store := postgres.NewPlayStore(pool)
	paths := map[string]func(p batchPlayer, id uuid.UUID) error{
		"batch": func(p batchPlayer, id uuid.UUID) error {
			return postgres.ExecActionBatch(store, []postgres.BatchAction{batchStep(p, pumpCopy(p, id), step{stake: 100})})[0].Err
		},
		"alone": func(p batchPlayer, id uuid.UUID) error {
			return postgres.SaveActionAlone(store, batchStep(p, pumpCopy(p, id), step{stake: 100})).Err
		},
		"locking": func(p batchPlayer, id uuid.UUID) error {
			_, err := (step{stake: 100}).run(ctx, postgres.NewPlayStore(pool), p, id)
			return err
		},
	}
	n := 0
	for _, path := range []string{"batch", "alone", "locking"} {
		for _, r := range actionRules() {
			n++
			bal := r.balance
			if bal == 0 {
				bal = 1000e8
			}
			p := newBatchPlayer(t, pool, fmt.Sprintf("rule%d", n), bal)
			id := startPump(t, store, p)
			mustExec(t, pool, `UPDATE users SET `+r.set+` WHERE id = $1`, p.user)
			before := stateOf(t, pool, p.user)
			err := paths[path](p, id)
			after := stateOf(t, pool, p.user)
			g := readGame(t, pool, id)
			switch {
			case r.refusal == "" && err != nil:
				t.Errorf("%s, %s: %v", path, r.name, err)
			case r.refusal != "" && (err == nil || err.Error() != r.refusal):
				t.Errorf("%s, %s: %v, want %q", path, r.name, err, r.refusal)
			case r.refusal != "" && (after != before || g.amount != 10e8 || g.pumps != 0):
				t.Errorf("%s, %s: the refused double changed the player (%+v to %+v) or the game (%+v)", path, r.name, before, after, g)
			case r.refusal == "" && (after.balance != before.balance-100e8 || after.dayWagered != before.dayWagered+100e8 ||
				g.amount != 110e8):
				t.Errorf("%s, %s: the double left the player %+v (before %+v), the game %+v", path, r.name, after, before, g)
			}
		}
	}
}

// TestActionBatchFallsBackToActionsAlone: a batch whose statement fails
// (one action's bet breaks a constraint) changes nothing and answers every
// action busy, so each is saved alone, where only the faulty one fails.
func TestActionBatchFallsBackToActionsAlone(t *testing.T) {
	pool := pgtest.New(t)
	store := postgres.NewPlayStore(pool)
	var logged bytes.Buffer
	store.SetLogger(slog.New(slog.NewTextHandler(&logged, nil)))
	good, bad := newBatchPlayer(t, pool, "good", 1000e8), newBatchPlayer(t, pool, "bad", 1000e8)
	ig, ib := startPump(t, store, good), startPump(t, store, bad)
	ag := batchStep(good, pumpCopy(good, ig), step{payout: 55, end: true})
	ab := batchStep(bad, pumpCopy(bad, ib), step{payout: 55, end: true})
	ab.Change.Bet.SettledAt = nil // settled without a time: bets_settled_check
	before := []playerState{stateOf(t, pool, good.user), stateOf(t, pool, bad.user)}
	for i, r := range postgres.ExecActionBatch(store, []postgres.BatchAction{ag, ab}) {
		if !errors.Is(r.Err, postgres.ErrPlayerBusy) {
			t.Errorf("action %d of the failed batch: %v, want busy (saved alone)", i, r.Err)
		}
	}
	if g, b := stateOf(t, pool, good.user), stateOf(t, pool, bad.user); g != before[0] || b != before[1] {
		t.Errorf("the failed batch changed the players: %+v, %+v; before %+v", g, b, before)
	}
	if l := logged.String(); strings.Count(l, "\n") != 1 || !strings.Contains(l, "a batch of game actions failed") ||
		!strings.Contains(l, "bets_settled_check") || !strings.Contains(l, "requests=2") {
		t.Errorf("logged %q, want one line with the failure and the batch's size", l)
	}
	if r := postgres.SaveActionAlone(store, ag); r.Err != nil || r.Placed.Balance != 1045e8 {
		t.Errorf("the good action alone: %+v", r)
	}
	if r := postgres.SaveActionAlone(store, ab); r.Err == nil {
		t.Error("the faulty action was saved alone")
	}
	if b := stateOf(t, pool, bad.user); b != before[1] {
		t.Errorf("the faulty action changed its player: %+v, before %+v", b, before[1])
	}
}

// TestActionsWhileTheBatchFunctionIsGone: while fairplay_play_actions is
// missing (migration 00020 undone under a running replica), every action
// is saved alone, and batches resume once it is back.
func TestActionsWhileTheBatchFunctionIsGone(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.New(t)
	store := postgres.NewPlayStore(pool)
	var def string
	if err := pool.QueryRow(ctx, `SELECT pg_get_functiondef('fairplay_play_actions'::regproc)`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	p := newBatchPlayer(t, pool, "gone_fn", 1000e8)
	id := startPump(t, store, p)
	if _, err := (step{}).run(ctx, store, p, id); err != nil {
		t.Fatal(err)
	}
	mustExec(t, pool, `DROP FUNCTION fairplay_play_actions`)
	_, _, alone := store.ActionBatches()
	for _, s := range []step{{}, {stake: 10}} {
		if _, err := s.run(ctx, store, p, id); err != nil {
			t.Fatalf("without the function: %v", err)
		}
	}
	if _, _, a := store.ActionBatches(); a-alone != 2 {
		t.Errorf("%d actions saved alone without the function, want 2", a-alone)
	}
	mustExec(t, pool, def)
	_, _, alone = store.ActionBatches()
	if _, err := (step{payout: 30, end: true}).run(ctx, store, p, id); err != nil {
		t.Fatal(err)
	}
	if _, _, a := store.ActionBatches(); a != alone {
		t.Error("an action was saved alone with the function back")
	}
	// The start, the double, the payout.
	if s := stateOf(t, pool, p.user); s.balance != 1010e8 || s.ledgerSum != 10e8 || s.entries != 3 {
		t.Errorf("player after the game: %+v", s)
	}
}

// TestActionBatchDecidesOnRowsAsTheyAreWhenLocked: rows committed by
// others after the batch's statement began and before it locked them are
// decided as they are then (the statement is slowed in this test's
// database only): a game another replica moved on is stale, a top-up is
// kept and answered, a self-exclusion refuses the double with its own
// message.
func TestActionBatchDecidesOnRowsAsTheyAreWhenLocked(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.New(t)
	store := postgres.NewPlayStore(pool)
	var def string
	if err := pool.QueryRow(ctx, `SELECT pg_get_functiondef('fairplay_play_actions'::regproc)`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	const lock = "WHERE b.id = ANY(p_bets)"
	if !strings.Contains(def, lock) {
		t.Fatalf("the function no longer has %q", lock)
	}
	mustExec(t, pool, strings.Replace(def, lock, lock+" AND (SELECT pg_sleep(1)::text) IS NOT NULL", 1))
	a, b, c := newBatchPlayer(t, pool, "moved", 1000e8), newBatchPlayer(t, pool, "topped", 1000e8), newBatchPlayer(t, pool, "excluded", 1000e8)
	ia, ib, ic := startPump(t, store, a), startPump(t, store, b), startPump(t, store, c)
	actions := []postgres.BatchAction{
		batchStep(a, pumpCopy(a, ia), step{payout: 20, end: true}),
		batchStep(b, pumpCopy(b, ib), step{payout: 20, end: true}),
		batchStep(c, pumpCopy(c, ic), step{stake: 10}),
	}
	done := make(chan []postgres.ActionAnswer, 1)
	go func() { done <- postgres.ExecActionBatch(store, actions) }()
	// The batch's statement has begun (its snapshot taken) once its backend
	// sleeps; the rows change while it does.
	pgtest.AwaitActivity(t, pool, "the batch's statement sleeping", true, `wait_event = 'PgSleep' AND query LIKE '%fairplay_play_actions%'`)
	mustExec(t, pool, `UPDATE bets SET params = '{"pumps": 1}', state = '{"pumps": 1}' WHERE id = $1`, ia)
	mustExec(t, pool, `UPDATE users SET balance = balance + 100e8 WHERE id = $1`, b.user)
	mustExec(t, pool, `UPDATE users SET excluded_until = 'infinity' WHERE id = $1`, c.user)
	got := <-done
	if !errors.Is(got[0].Err, postgres.ErrStaleGame) {
		t.Errorf("the game moved on meanwhile: %+v, want stale", got[0])
	}
	if got[1].Err != nil || got[1].Placed.Balance != 1110e8 {
		t.Errorf("the player topped up meanwhile: %+v, want saved with 1110", got[1])
	}
	if s := stateOf(t, pool, b.user); s.balance != 1110e8 {
		t.Errorf("the topped-up player's balance %d, want 1110e8", s.balance)
	}
	const excluded = "You have excluded yourself from betting permanently"
	if got[2].Err == nil || got[2].Err.Error() != excluded || !got[2].Refused || got[2].Placed.Balance != 990e8 {
		t.Errorf("the player excluded meanwhile: %+v, want refused (%q) with 990", got[2], excluded)
	}
	if s := stateOf(t, pool, c.user); s.balance != 990e8 {
		t.Errorf("the excluded player's balance %d, want 990e8", s.balance)
	}
}

// TestActionBatchReadsOnlyItsRows: batches of actions, some moving money,
// read only their own rows by key, with 300 other players' games started
// after the statistics were taken: no sequential scan, and fewer index
// entries than one pass over the others'.
func TestActionBatchReadsOnlyItsRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// One connection, whose counts are flushed before they are read.
	pool, err := postgres.Open(ctx, pgtest.URL(t)+"&pool_max_conns=1")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	store := postgres.NewPlayStore(pool)
	players := make([]batchPlayer, 8)
	copies := make([]play.Bet, len(players))
	for i := range players {
		players[i] = newBatchPlayer(t, pool, fmt.Sprintf("actscan%d", i), 1000e8)
		copies[i] = pumpCopy(players[i], startPump(t, store, players[i]))
	}
	mustExec(t, pool, `ANALYZE`)
	mustExec(t, pool, `
		WITH u AS (
			INSERT INTO users (id, username, email, password_hash, balance)
			SELECT gen_random_uuid(), 'bystander' || i, 'bystander' || i || '@example.com', 'x', 1e10
			FROM generate_series(1, 300) i RETURNING id
		), s AS (
			INSERT INTO sessions (id, user_id, refresh_hash) SELECT gen_random_uuid(), id, uuid_send(gen_random_uuid()) FROM u
		), p AS (
			INSERT INTO seed_pairs (id, user_id, server_seed, server_seed_hash, client_seed, nonce)
			SELECT gen_random_uuid(), id, 's', 'h', 'c', 1 FROM u RETURNING id, user_id
		)
		INSERT INTO bets (id, user_id, game, status, amount, seed_pair_id, client_seed, nonce, params, state)
		SELECT gen_random_uuid(), user_id, 'pump', 'active', 1e8, id, 'c', 1, '{"pumps": 0}', '{"pumps": 0}' FROM p`)
	count := func() map[string]indexReads { return readsOf(t, pool, "users", "sessions", "bets", "ledger_entries") }
	before := count()
	const batches = 6
	for k := range batches {
		actions := make([]postgres.BatchAction, len(players))
		for i, p := range players {
			s := step{}
			if i%2 == 1 {
				s.stake = 1 // money moves: the player's row, the ledger
			}
			actions[i] = batchStep(p, copies[i], s)
		}
		for i, r := range postgres.ExecActionBatch(store, actions) {
			if r.Err != nil {
				t.Fatalf("batch %d, action %d: %v", k, i, r.Err)
			}
			copies[i] = actions[i].Change.Bet
		}
	}
	after := count()
	for table, b := range before {
		a := after[table]
		// Each action's rows are read a few times by key (a game's row
		// once per version its updates left in the index); a pass over a
		// table's index reads all 300 bystanders' at once.
		if a.seq != b.seq || a.index-b.index > batches*100 {
			t.Errorf("%s: %d sequential scans and %d index entries read by %d batches of %d actions; want none and at most %d",
				table, a.seq-b.seq, a.index-b.index, batches, len(players), batches*100)
		}
	}
}

// TestOnePlayerBettingAndActingAtOnce: one player's bets and actions on a
// running game, sent at the same time through one replica and through two,
// meet in the batches (a player busy in one is saved alone) and leave the
// balance, the ledger and the play counters exactly as the requests made
// them.
func TestOnePlayerBettingAndActingAtOnce(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	for _, replicas := range []int{1, 2} {
		stores := []*postgres.PlayStore{postgres.NewPlayStore(pool)}
		if replicas == 2 {
			stores = append(stores, postgres.NewPlayStore(pool))
		}
		p := newBatchPlayer(t, pool, fmt.Sprintf("both%d", replicas), 1000e8)
		id := startPump(t, stores[0], p)
		// Other players' actions keep the action batches full.
		others := make([]batchPlayer, 6)
		otherGames := make([]uuid.UUID, len(others))
		for i := range others {
			others[i] = newBatchPlayer(t, pool, fmt.Sprintf("crowd%d_%d", replicas, i), 1000e8)
			otherGames[i] = startPump(t, stores[0], others[i])
		}
		const bets, doubles = 40, 30
		var wg sync.WaitGroup
		errs := make(chan error, 2+len(others))
		wg.Go(func() {
			// dice, 1 dollar each, paying 2 on every other bet
			for n := int64(2); n < 2+bets; n++ {
				var pay int64
				if n%2 == 0 {
					pay = 2
				}
				b := p.bet(n, 1, pay, "50.00")
				if _, _, err := stores[int(n)%len(stores)].PlaceBetAt(ctx, b.Bet, b.Pair, b.Draw); err != nil {
					errs <- fmt.Errorf("bet %d: %w", n, err)
					return
				}
			}
		})
		wg.Go(func() {
			for k := range doubles {
				if _, err := (step{stake: 1}).run(ctx, stores[k%len(stores)], p, id); err != nil {
					errs <- fmt.Errorf("double %d: %w", k, err)
					return
				}
			}
		})
		for i := range others {
			wg.Go(func() {
				for k := range doubles {
					if _, err := (step{}).run(ctx, stores[(k+i)%len(stores)], others[i], otherGames[i]); err != nil {
						errs <- fmt.Errorf("other %d, pump %d: %w", i, k, err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if _, err := (step{payout: 7, end: true}).run(ctx, stores[0], p, id); err != nil {
			t.Fatal(err)
		}
		// start 10, the doubles, the bets; back: the dice wins and the cash-out
		wagered := int64(10+doubles+bets) * 1e8
		want := 1000e8 - wagered + int64(bets/2*2+7)*1e8
		s := stateOf(t, pool, p.user)
		// entries: the start, each double, each bet, each win, the payout.
		if s.balance != want || s.ledgerSum != want-1000e8 || s.entries != 1+doubles+bets+bets/2+1 || s.dayWagered != wagered {
			t.Errorf("%d replica(s): player %+v, want balance %d, wagered %d", replicas, s, want, wagered)
		}
		if g := readGame(t, pool, id); g != (gameRow{status: play.StatusSettled, amount: (10 + doubles) * 1e8, payout: 7e8, pumps: doubles + 1}) {
			t.Errorf("%d replica(s): game %+v", replicas, g)
		}
	}
}

// A batch statement's answers are taken by their ord: each request gets
// the row numbered for it, and a row numbered twice, out of range, or
// missing fails the whole batch rather than give a request another's
// answer or none.
func TestBatchAnswersByOrd(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	got, err := postgres.AnswersByOrd(ctx, pool, `SELECT * FROM (VALUES (3, 30), (1, 10), (2, 20)) v(ord, x)`, 3)
	if err != nil || !slices.Equal(got, []int{10, 20, 30}) {
		t.Errorf("answers %v, %v; want [10 20 30]", got, err)
	}
	for _, bad := range []string{
		`SELECT * FROM (VALUES (1, 10), (1, 11), (2, 20)) v(ord, x)`, // twice, and 3 missing
		`SELECT * FROM (VALUES (1, 10), (2, 20)) v(ord, x)`,          // 3 missing
		`SELECT * FROM (VALUES (1, 10), (2, 20), (4, 40)) v(ord, x)`, // out of range
		`SELECT * FROM (VALUES (0, 0), (1, 10), (2, 20)) v(ord, x)`,  // out of range
	} {
		if got, err := postgres.AnswersByOrd(ctx, pool, bad, 3); err == nil {
			t.Errorf("%s: answers %v, want an error", bad, got)
		}
	}
}

// TestActionAloneDecidesOnTheRowAsItIsWhenLocked: a player who excludes
// themselves while their double waits for their row (held by the
// transaction that sets the exclusion) hears the exclusion, on the statement
// alone and on the locking path, as in a batch — not "Insufficient
// balance", which the statement's snapshot of the row (no exclusion yet)
// would give. Nothing moves.
func TestActionAloneDecidesOnTheRowAsItIsWhenLocked(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	store := postgres.NewPlayStore(pool)
	paths := map[string]func(p batchPlayer, id uuid.UUID) error{
		"alone": func(p batchPlayer, id uuid.UUID) error {
			return postgres.SaveActionAlone(store, batchStep(p, pumpCopy(p, id), step{stake: 100})).Err
		},
		"locking": func(p batchPlayer, id uuid.UUID) error {
			_, err := (step{stake: 100}).run(ctx, postgres.NewPlayStore(pool), p, id)
			return err
		},
	}
	for _, path := range []string{"alone", "locking"} {
		p := newBatchPlayer(t, pool, "waits_"+path, 1000e8)
		id := startPump(t, store, p)
		before := stateOf(t, pool, p.user)
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `UPDATE users SET excluded_until = 'infinity' WHERE id = $1`, p.user); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- paths[path](p, id) }()
		pgtest.AwaitActivity(t, pool, path+": the action waiting for the player's row", true,
			`wait_event_type = 'Lock' AND query LIKE '%UPDATE users SET balance%'`)
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		const excluded = "You have excluded yourself from betting permanently"
		if err := <-done; err == nil || err.Error() != excluded {
			t.Errorf("%s: the player excluded while the double waited: %v, want %q", path, err, excluded)
		}
		if after, g := stateOf(t, pool, p.user), readGame(t, pool, id); after.balance != before.balance ||
			after.dayWagered != before.dayWagered || g.amount != 10e8 {
			t.Errorf("%s: the refused double changed the player (%+v to %+v) or the game (%+v)", path, before, after, g)
		}
	}
}

// TestActionsWaitForThePlayerWhateverTheyMove: alone and on the locking
// path, an action waits for its player's row held by another transaction
// whether its money moves (a cash out) or not (a pump; a loss, which ends
// the game): whether it moves money depends on what it drew, so neither
// when its answer comes nor whether it is saved may (migration 00023 does
// the same in the batch). Each is saved once the row is free.
func TestActionsWaitForThePlayerWhateverTheyMove(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	store := postgres.NewPlayStore(pool)
	steps := []struct {
		name string
		step step
		game gameRow
	}{
		{"pump", step{}, gameRow{status: play.StatusActive, amount: 10e8, pumps: 1}},
		{"lost", step{end: true}, gameRow{status: play.StatusSettled, amount: 10e8, pumps: 1}},
		{"cashout", step{payout: 20, end: true}, gameRow{status: play.StatusSettled, amount: 10e8, payout: 20e8, pumps: 1}},
	}
	paths := map[string]func(p batchPlayer, id uuid.UUID, s step) error{
		"alone": func(p batchPlayer, id uuid.UUID, s step) error {
			return postgres.SaveActionAlone(store, batchStep(p, pumpCopy(p, id), s)).Err
		},
		"locking": func(p batchPlayer, id uuid.UUID, s step) error {
			_, err := s.run(ctx, postgres.NewPlayStore(pool), p, id)
			return err
		},
	}
	for _, path := range []string{"alone", "locking"} {
		for _, s := range steps {
			what := path + "/" + s.name
			p := newBatchPlayer(t, pool, "held_"+path+"_"+s.name, 1000e8)
			id := startPump(t, store, p)
			var once sync.Once
			hold := holdRow(t, pool, `SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE`, p.user)
			release := func() { once.Do(hold) }
			t.Cleanup(release)
			done := make(chan error, 1)
			go func() { done <- paths[path](p, id, s.step) }()
			pgtest.AwaitActivity(t, pool, what+": the action waiting for the player's row", true,
				`wait_event_type = 'Lock'`)
			select {
			case err := <-done:
				t.Errorf("%s: answered (%v) while the player's row was held", what, err)
			default:
			}
			release()
			if err := <-done; err != nil {
				t.Errorf("%s: %v", what, err)
			}
			if g := readGame(t, pool, id); g != s.game {
				t.Errorf("%s: game %+v, want %+v", what, g, s.game)
			}
		}
	}
}
