package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/postgres/pgtest"
)

// batchPlayer is a player with a live session and a fresh seed pair.
type batchPlayer struct {
	user, session uuid.UUID
	pair          play.SeedPair
}

func newBatchPlayer(t *testing.T, pool *pgxpool.Pool, name string, balance money.Amount) batchPlayer {
	t.Helper()
	p := batchPlayer{user: uuid.New(), session: uuid.New()}
	p.pair = play.SeedPair{ID: uuid.New(), UserID: p.user, ServerSeed: "server-" + name, ServerSeedHash: "hash-" + name,
		ClientSeed: "client-" + name, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
	mustExec(t, pool, `INSERT INTO users (id, username, email, password_hash, balance) VALUES ($1, $2, $3, 'x', $4)`,
		p.user, name, name+"@example.com", int64(balance))
	mustExec(t, pool, `INSERT INTO sessions (id, user_id, refresh_hash) VALUES ($1, $2, $3)`, p.session, p.user, p.session[:])
	mustExec(t, pool, `INSERT INTO seed_pairs (id, user_id, server_seed, server_seed_hash, client_seed, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, p.pair.ID, p.user, p.pair.ServerSeed, p.pair.ServerSeedHash, p.pair.ClientSeed, p.pair.CreatedAt)
	return p
}

// bet is the player's next dice bet: stake and payout in dollars, drawn at
// the given nonce.
func (p batchPlayer) bet(nonce int64, stake, payout int64, target string) postgres.BatchBet {
	pair := p.pair
	pair.Nonce = nonce
	at := time.Now().UTC().Truncate(time.Microsecond)
	return postgres.BatchBet{
		Bet: play.NewBet{ID: uuid.Must(uuid.NewV7()), UserID: p.user, SessionID: p.session, LiveSince: at.Add(-time.Hour),
			Game: play.Dice, Stake: money.Amount(stake * 1e8), At: at},
		Pair: pair,
		Draw: play.Draw{Status: play.StatusSettled, Multiplier: 19800, Payout: money.Amount(payout * 1e8),
			Params: []byte(`{"target":"` + target + `"}`), State: []byte(`{"roll":"12.34"}`)},
	}
}

// TestBetBatchAnswersEachBet places one batch holding a bet of every kind
// of answer: each bet gets its own, exactly as alone, and only the placed
// ones change anything.
func TestBetBatchAnswersEachBet(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	winner := newBatchPlayer(t, pool, "winner", 1000e8)
	loser := newBatchPlayer(t, pool, "loser", 1000e8)
	poor := newBatchPlayer(t, pool, "poor", 50e8)
	stale := newBatchPlayer(t, pool, "stale", 1000e8)
	revoked := newBatchPlayer(t, pool, "revoked", 1000e8)
	deleted := newBatchPlayer(t, pool, "deleted", 1000e8)
	mustExec(t, pool, `UPDATE sessions SET revoked_at = now() WHERE id = $1`, revoked.session)
	mustExec(t, pool, `UPDATE users SET deleted_at = now() WHERE id = $1`, deleted.user)

	got := postgres.ExecBetBatch(postgres.NewPlayStore(pool), []postgres.BatchBet{
		loser.bet(1, 100, 0, "50.00"),
		poor.bet(1, 100, 0, "50.00"),
		stale.bet(5, 100, 0, "50.00"), // its next nonce is 1
		revoked.bet(1, 100, 0, "50.00"),
		deleted.bet(1, 100, 0, "50.00"),
		winner.bet(1, 100, 300, "50.00"),
	})
	want := []struct {
		balance money.Amount
		err     error
	}{{900e8, nil}, {0, play.ErrInsufficientBalance}, {0, play.ErrStalePair}, {0, play.ErrUserGone},
		{0, play.ErrUserGone}, {1200e8, nil}}
	for i, w := range want {
		if got[i].Balance != w.balance || !errors.Is(got[i].Err, w.err) || (w.err == nil) != (got[i].Err == nil) {
			t.Errorf("bet %d: balance %v err %v, want %v %v", i, got[i].Balance, got[i].Err, w.balance, w.err)
		}
	}
	if now := got[2].Now; now.ID != stale.pair.ID || now.Nonce != 0 || now.ClientSeed != stale.pair.ClientSeed || now.ServerSeed != stale.pair.ServerSeed {
		t.Errorf("stale bet: pair now %+v", now)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM bets`); n != 2 {
		t.Errorf("%d bets recorded, want 2", n)
	}
	for _, c := range []struct {
		p              batchPlayer
		nonce, entries int64
	}{{winner, 1, 2}, {loser, 1, 1}, {poor, 0, 0}, {stale, 0, 0}, {revoked, 0, 0}, {deleted, 0, 0}} {
		if n := queryInt(t, pool, `SELECT nonce FROM seed_pairs WHERE id = $1`, c.p.pair.ID); n != c.nonce {
			t.Errorf("nonce %d, want %d", n, c.nonce)
		}
		if n := queryInt(t, pool, `SELECT count(*) FROM ledger_entries WHERE user_id = $1`, c.p.user); n != c.entries {
			t.Errorf("%d ledger entries, want %d", n, c.entries)
		}
	}
	if n := queryInt(t, pool, `SELECT balance FROM users WHERE id = $1`, poor.user); n != 50e8 {
		t.Errorf("refused bet changed the balance: %d", n)
	}
}

// TestBetBatchFallsBackToSingleBets: when one bet makes the batch's
// statement fail, the batch changes nothing and every bet is placed on its
// own, so only that bet fails — with its own error.
func TestBetBatchFallsBackToSingleBets(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	mustExec(t, pool, `
		CREATE FUNCTION refuse_bet() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'injected failure'; END $$;
		CREATE TRIGGER refuse_bet BEFORE INSERT ON bets FOR EACH ROW
		WHEN (NEW.params->>'target' = '66.60') EXECUTE FUNCTION refuse_bet();`)
	a := newBatchPlayer(t, pool, "alice", 1000e8)
	b := newBatchPlayer(t, pool, "bob", 1000e8)
	c := newBatchPlayer(t, pool, "carol", 1000e8)
	d := newBatchPlayer(t, pool, "dave", 1000e8)
	// dave already runs a mines game: a second one is refused by bets_one_active_key.
	running := d.bet(1, 10, 0, "")
	running.Bet.Game, running.Draw = play.Mines, play.Draw{Status: play.StatusActive, Params: []byte(`{"mines":3}`), State: []byte(`{}`)}
	if got := postgres.ExecBetBatch(postgres.NewPlayStore(pool), []postgres.BatchBet{running}); got[0].Err != nil {
		t.Fatal(got[0].Err)
	}
	second := d.bet(2, 10, 0, "")
	second.Bet.Game, second.Draw = play.Mines, running.Draw

	got := postgres.ExecBetBatch(postgres.NewPlayStore(pool), []postgres.BatchBet{a.bet(1, 100, 0, "50.00"), b.bet(1, 100, 0, "66.60"),
		c.bet(1, 100, 200, "50.00"), second})
	if got[0].Err != nil || got[0].Balance != 900e8 || got[2].Err != nil || got[2].Balance != 1100e8 {
		t.Fatalf("the good bets: %+v %+v", got[0], got[2])
	}
	if got[1].Err == nil || errors.Is(got[1].Err, play.ErrStalePair) {
		t.Fatalf("the refused bet: %+v", got[1])
	}
	if !errors.Is(got[3].Err, play.ErrGameInProgress) {
		t.Fatalf("the second mines game: %+v", got[3])
	}
	if n := queryInt(t, pool, `SELECT nonce FROM seed_pairs WHERE id = $1`, b.pair.ID); n != 0 {
		t.Fatalf("the refused bet took nonce %d", n)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM bets`); n != 3 {
		t.Fatalf("%d bets, want 3 (dave's first game, alice's, carol's)", n)
	}
}

// TestBetBatchDoesNotWaitForABusyPlayer: a bet whose player's row another
// transaction holds does not hold up its batch: the others are placed at
// once, and it is placed on its own when the row is free.
func TestBetBatchDoesNotWaitForABusyPlayer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	busy := newBatchPlayer(t, pool, "busy", 1000e8)
	free := newBatchPlayer(t, pool, "free", 1000e8)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, busy.user); err != nil {
		t.Fatal(err)
	}
	done := make(chan []postgres.BatchAnswer)
	go func() {
		done <- postgres.ExecBetBatch(postgres.NewPlayStore(pool), []postgres.BatchBet{busy.bet(1, 100, 0, "50.00"),
			free.bet(1, 100, 0, "50.00")})
	}()
	for i := 0; queryInt(t, pool, `SELECT count(*) FROM bets WHERE user_id = $1`, free.user) == 0; i++ {
		if i == 500 {
			t.Fatal("the free player's bet waited for the busy player's row")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM bets WHERE user_id = $1`, busy.user); n != 0 {
		t.Fatalf("the busy player's bet was placed while its row was held")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got[0].Err != nil || got[0].Balance != 900e8 || got[1].Err != nil || got[1].Balance != 900e8 {
		t.Fatalf("answers: %+v", got)
	}
	if n := queryInt(t, pool, `SELECT nonce FROM seed_pairs WHERE id = $1`, busy.pair.ID); n != 1 {
		t.Fatalf("busy player's nonce %d", n)
	}
}

// TestBetBatchTakesOneBetPerPlayer: a batch holds each player once, oldest
// first, up to its size; the rest stay queued in order, and bets
// whose callers gave up are answered and dropped.
func TestBetBatchTakesOneBetPerPlayer(t *testing.T) {
	t.Parallel()
	ids := []uuid.UUID{uuid.MustParse("30000000-0000-0000-0000-000000000000"),
		uuid.MustParse("10000000-0000-0000-0000-000000000000"), uuid.MustParse("20000000-0000-0000-0000-000000000000"),
		uuid.MustParse("40000000-0000-0000-0000-000000000000")}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	bets := []postgres.BatchBet{
		{Bet: play.NewBet{UserID: ids[0]}},
		{Bet: play.NewBet{UserID: ids[1]}},
		{Bet: play.NewBet{UserID: ids[0]}}, // the same player again: next batch
		{Bet: play.NewBet{UserID: ids[2]}, Ctx: gone},
		{Bet: play.NewBet{UserID: ids[2]}},
		{Bet: play.NewBet{UserID: ids[3]}}, // over the size
	}
	batch, queued, got := postgres.TakeBetBatch(bets, 3)
	if fmt.Sprint(batch) != "[0 1 4]" || fmt.Sprint(queued) != "[2 5]" {
		t.Fatalf("batch %v (want [0 1 4]), queued %v (want [2 5])", batch, queued)
	}
	for i, a := range got {
		if answered := !errors.Is(a.Err, postgres.ErrNoAnswer); answered != (i == 3) {
			t.Errorf("bet %d answered %v: %v", i, answered, a.Err)
		}
	}
	if !errors.Is(got[3].Err, context.Canceled) {
		t.Errorf("the abandoned bet: %v", got[3].Err)
	}
}

// TestConcurrentBetsThroughTheBatcher: many players betting at once through
// PlaceBetAt (most of them in shared batches) each get nonces 1..n in order,
// balances that match their bets, and a ledger that adds up.
func TestConcurrentBetsThroughTheBatcher(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	store := postgres.NewPlayStore(pool)
	const players, bets = 24, 25
	ps := make([]batchPlayer, players)
	for i := range ps {
		ps[i] = newBatchPlayer(t, pool, fmt.Sprintf("racer%02d", i), 1000e8)
	}
	var wg sync.WaitGroup
	errs := make(chan error, players*2)
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Two goroutines per player: their bets race for the same nonces,
			// so some are stale and come back with the pair as it is now.
			var inner sync.WaitGroup
			for g := range 2 {
				inner.Add(1)
				go func() {
					defer inner.Done()
					next := int64(1)
					for placed := 0; placed < bets; {
						b := p.bet(next, 1, int64((i+placed+g)%3), "50.00")
						bal, now, err := store.PlaceBetAt(context.Background(), b.Bet, b.Pair, b.Draw)
						switch {
						case errors.Is(err, play.ErrStalePair):
							next = now.Nonce + 1
						case err != nil:
							errs <- err
							return
						default:
							if bal < 0 {
								errs <- fmt.Errorf("balance %v", bal)
								return
							}
							placed++
							next++
						}
					}
				}()
			}
			inner.Wait()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	batches, placed := store.BetBatches()
	t.Logf("%d bets in %d statements", placed, batches)
	if placed < int64(players*bets*2) || batches >= placed {
		t.Fatalf("%d bets in %d statements: none shared", placed, batches)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM bets`); n != players*bets*2 {
		t.Fatalf("%d bets, want %d", n, players*bets*2)
	}
	if n := queryInt(t, pool, `
		SELECT count(*) FROM seed_pairs p WHERE p.nonce <> $1 OR p.nonce <> (SELECT count(DISTINCT nonce) FROM bets b WHERE b.seed_pair_id = p.id)`,
		bets*2); n != 0 {
		t.Fatalf("%d pairs whose nonces are not 1..%d, each once", n, bets*2)
	}
	if n := queryInt(t, pool, `
		SELECT count(*) FROM users u
		WHERE u.balance <> 1000e8 + (SELECT coalesce(sum(amount), 0) FROM ledger_entries l WHERE l.user_id = u.id)
		   OR u.balance <> 1000e8 + (SELECT coalesce(sum(payout - amount), 0) FROM bets b WHERE b.user_id = u.id)`); n != 0 {
		t.Fatalf("%d players whose balance is not their bets'", n)
	}
}
