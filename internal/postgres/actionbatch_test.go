package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	var st pumpState
	if err := json.Unmarshal(old.Params, &st); err != nil {
		panic(err)
	}
	st.Pumps++
	raw, _ := json.Marshal(st)
	nb := old
	nb.Params, nb.State = raw, raw
	nb.Amount += money.Amount(s.stake * 1e8)
	c := play.Change{Bet: nb, Stake: money.Amount(s.stake * 1e8)}
	if s.end {
		nb.Status, nb.Payout, nb.SettledAt = play.StatusSettled, money.Amount(s.payout*1e8), &now
		c.Bet, c.Payout = nb, nb.Payout
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
		// No money moves: the player's row is not needed.
		{name: "player held, pump", held: true, setup: func(p batchPlayer, _ uuid.UUID) {
			release = append(release, holdRow(t, pool, `SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE`, p.user))
		}, step: step{}, after: 990, game: gameRow{status: play.StatusActive, amount: 10e8, pumps: 1}},
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
		want := int64(1000-rounds*20+paid) * 1e8
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
}
