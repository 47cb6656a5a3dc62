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

func newBatchPlayer(t testing.TB, pool *pgxpool.Pool, name string, balance money.Amount) batchPlayer {
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
	reseeded := newBatchPlayer(t, pool, "reseeded", 1000e8)
	rotated := newBatchPlayer(t, pool, "rotated", 1000e8)
	revoked := newBatchPlayer(t, pool, "revoked", 1000e8)
	expired := newBatchPlayer(t, pool, "expired", 1000e8)
	deleted := newBatchPlayer(t, pool, "deleted", 1000e8)
	playing := newBatchPlayer(t, pool, "playing", 1000e8)
	mustExec(t, pool, `UPDATE sessions SET revoked_at = now() WHERE id = $1`, revoked.session)
	mustExec(t, pool, `UPDATE sessions SET last_used_at = now() - interval '2 hours' WHERE id = $1`, expired.session)
	mustExec(t, pool, `UPDATE users SET deleted_at = now() WHERE id = $1`, deleted.user)
	mustExec(t, pool, `UPDATE seed_pairs SET client_seed = 'changed' WHERE id = $1`, reseeded.pair.ID)
	next := uuid.New()
	mustExec(t, pool, `UPDATE seed_pairs SET revealed_at = now() WHERE id = $1`, rotated.pair.ID)
	mustExec(t, pool, `INSERT INTO seed_pairs (id, user_id, server_seed, server_seed_hash, client_seed) VALUES ($1, $2, 'next', 'next-hash', 'c')`,
		next, rotated.user)
	running := playing.bet(1, 10, 0, "")
	running.Bet.Game, running.Draw = play.Mines, play.Draw{Status: play.StatusActive, Params: []byte(`{"mines":3}`), State: []byte(`{}`)}
	if got := postgres.ExecBetBatch(postgres.NewPlayStore(pool), []postgres.BatchBet{running}); got[0].Err != nil {
		t.Fatal(got[0].Err)
	}
	second := playing.bet(2, 10, 0, "")
	second.Bet.Game, second.Draw = play.Mines, running.Draw

	got := postgres.ExecBetBatch(postgres.NewPlayStore(pool), []postgres.BatchBet{
		loser.bet(1, 100, 0, "50.00"),
		poor.bet(1, 100, 0, "50.00"),
		stale.bet(5, 100, 0, "50.00"), // its next nonce is 1
		reseeded.bet(1, 100, 0, "50.00"),
		rotated.bet(1, 100, 0, "50.00"),
		revoked.bet(1, 100, 0, "50.00"),
		expired.bet(1, 100, 0, "50.00"),
		deleted.bet(1, 100, 0, "50.00"),
		second,
		winner.bet(1, 100, 300, "50.00"),
	})
	want := []struct {
		balance money.Amount
		err     error
	}{{900e8, nil}, {0, play.ErrInsufficientBalance}, {0, play.ErrStalePair}, {0, play.ErrStalePair},
		{0, play.ErrStalePair}, {0, play.ErrUserGone}, {0, play.ErrUserGone}, {0, play.ErrUserGone},
		{0, play.ErrGameInProgress}, {1200e8, nil}}
	for i, w := range want {
		if got[i].Balance != w.balance || !errors.Is(got[i].Err, w.err) || (w.err == nil) != (got[i].Err == nil) {
			t.Errorf("bet %d: balance %v err %v, want %v %v", i, got[i].Balance, got[i].Err, w.balance, w.err)
		}
	}
	// A stale bet comes back with the active pair as it is now.
	if now := got[2].Now; now.ID != stale.pair.ID || now.Nonce != 0 || now.ClientSeed != stale.pair.ClientSeed || now.ServerSeed != stale.pair.ServerSeed {
		t.Errorf("stale bet: pair now %+v", now)
	}
	if now := got[3].Now; now.ID != reseeded.pair.ID || now.ClientSeed != "changed" {
		t.Errorf("reseeded bet: pair now %+v", now)
	}
	if now := got[4].Now; now.ID != next || now.ServerSeed != "next" || now.Nonce != 0 {
		t.Errorf("rotated bet: pair now %+v", now)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM bets`); n != 3 {
		t.Errorf("%d bets recorded, want 3 (playing's first game, loser's, winner's)", n)
	}
	for _, c := range []struct {
		p              batchPlayer
		nonce, entries int64
	}{{winner, 1, 2}, {loser, 1, 1}, {poor, 0, 0}, {stale, 0, 0}, {reseeded, 0, 0}, {rotated, 0, 0}, {revoked, 0, 0},
		{expired, 0, 0}, {deleted, 0, 0}, {playing, 1, 1}} {
		if n := queryInt(t, pool, pairNonceSQL, c.p.pair.ID); n != c.nonce {
			t.Errorf("nonce %d, want %d", n, c.nonce)
		}
		// A bet leaves the pair's own row alone (migration 00029): the
		// player's row keeps the active pair's nonce.
		if n := queryInt(t, pool, `SELECT nonce FROM seed_pairs WHERE id = $1`, c.p.pair.ID); n != 0 {
			t.Errorf("a bet wrote the pair's own nonce: %d, want 0", n)
		}
		if n := queryInt(t, pool, `SELECT count(*) FROM ledger_entries WHERE user_id = $1`, c.p.user); n != c.entries {
			t.Errorf("%d ledger entries, want %d", n, c.entries)
		}
	}
	// The winner's entries: the stake out, then the payout in, each with the
	// balance after it.
	rows, err := pool.Query(context.Background(), `SELECT kind, amount, balance_after FROM ledger_entries WHERE user_id = $1 ORDER BY id`, winner.user)
	if err != nil {
		t.Fatal(err)
	}
	var entries []string
	for rows.Next() {
		var kind string
		var amount, after int64
		if err := rows.Scan(&kind, &amount, &after); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, fmt.Sprintf("%s %d %d", kind, amount/1e8, after/1e8))
	}
	if fmt.Sprint(entries) != "[bet -100 900 payout 300 1200]" {
		t.Errorf("winner's ledger: %v", entries)
	}
	if n := queryInt(t, pool, `SELECT balance FROM users WHERE id = $1`, poor.user); n != 50e8 {
		t.Errorf("refused bet changed the balance: %d", n)
	}
}

// TestBetBatchPlacesAPlayersSecondBetAfterTheFirst: two bets of one player
// in one batch (the batcher never sends that, but the statement must not
// care) are placed one after the other, each with its own nonce.
func TestBetBatchPlacesAPlayersSecondBetAfterTheFirst(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	p := newBatchPlayer(t, pool, "twice", 1000e8)
	got := postgres.ExecBetBatch(postgres.NewPlayStore(pool), []postgres.BatchBet{p.bet(1, 100, 0, "50.00"), p.bet(2, 10, 0, "50.00")})
	if got[0].Err != nil || got[0].Balance != 900e8 || got[1].Err != nil || got[1].Balance != 890e8 {
		t.Fatalf("answers: %+v", got)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM bets WHERE user_id = $1`, p.user); n != 2 {
		t.Fatalf("%d bets", n)
	}
	if n := queryInt(t, pool, `SELECT balance FROM users WHERE id = $1`, p.user); n != 890e8 {
		t.Fatalf("balance %d", n)
	}
}

// TestBetStatementAnswersASecondBetBusy calls fairplay_place_bets itself
// with a player's two bets around another player's: the first is placed,
// the second answered busy (the batcher then places it alone), whichever
// order the caller would have run the busy ones in.
func TestBetStatementAnswersASecondBetBusy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	p := newBatchPlayer(t, pool, "twice_raw", 1000e8)
	o := newBatchPlayer(t, pool, "other_raw", 1000e8)
	rows, err := pool.Query(ctx, `SELECT ord, status FROM fairplay_place_bets(
		ARRAY[$1, $1, $2]::uuid[], ARRAY[$3, $3, $4]::uuid[], ARRAY[now() - interval '1 hour', now() - interval '1 hour',
		now() - interval '1 hour'], ARRAY[$5, $5, $6]::uuid[], ARRAY[$7, $7, $8], ARRAY[1, 2, 1]::bigint[],
		ARRAY[gen_random_uuid(), gen_random_uuid(), gen_random_uuid()], ARRAY['dice', 'dice', 'dice'],
		ARRAY['settled', 'settled', 'settled'], ARRAY[100, 100, 100]::bigint[], ARRAY[0, 0, 0]::bigint[],
		ARRAY[0, 0, 0]::bigint[], ARRAY['{}', '{}', '{}'], ARRAY['{}', '{}', '{}'], ARRAY[now(), now(), now()],
		ARRAY[true, true, true], false) ORDER BY ord`,
		p.user, o.user, p.session, o.session, p.pair.ID, o.pair.ID, p.pair.ClientSeed, o.pair.ClientSeed)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (s string, err error) {
		var ord int64
		err = r.Scan(&ord, &s)
		return fmt.Sprint(ord, " ", s), err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1 placed", "2 busy", "3 placed"}; !slices.Equal(got, want) {
		t.Fatalf("answers %q, want %q", got, want)
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM bets WHERE user_id = $1`, p.user); n != 1 {
		t.Fatalf("%d bets of the player", n)
	}
}

// TestBetBatchMeetsASeedRotation: a rotation holds the player's pair and
// inserts the new one while a bet of the player's is in a batch. The bet does
// not hold the batch up, neither side deadlocks, and the bet comes back
// stale with the new pair.
func TestBetBatchMeetsASeedRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	p := newBatchPlayer(t, pool, "rotating", 1000e8)
	other := newBatchPlayer(t, pool, "bystander", 1000e8)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// As play.Service.Rotate (PlayStore.ActiveSeedPair): the player's row
	// locked first, then the active pair.
	if _, err := tx.Exec(ctx, `SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE`, p.user); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM seed_pairs WHERE user_id = $1 AND revealed_at IS NULL FOR UPDATE`, p.user); err != nil {
		t.Fatal(err)
	}
	done := make(chan []postgres.BatchAnswer)
	go func() {
		done <- postgres.ExecBetBatch(postgres.NewPlayStore(pool), []postgres.BatchBet{p.bet(1, 100, 0, "50.00"),
			other.bet(1, 100, 0, "50.00")})
	}()
	for i := 0; queryInt(t, pool, `SELECT count(*) FROM bets WHERE user_id = $1`, other.user) == 0; i++ {
		if i == 500 {
			t.Fatal("the bystander's bet waited for the rotating player's pair")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The rotating player's bet, placed on its own, now waits for the pair;
	// the rotation reveals it and inserts the new one (whose foreign key
	// needs the player's row) and commits.
	next := uuid.New()
	if _, err := tx.Exec(ctx, `UPDATE seed_pairs SET revealed_at = now() WHERE id = $1`, p.pair.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO seed_pairs (id, user_id, server_seed, server_seed_hash, client_seed)
		VALUES ($1, $2, 'next', 'next-hash', 'c')`, next, p.user); err != nil {
		t.Fatalf("rotation: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("rotation: %v", err)
	}
	got := <-done
	if !errors.Is(got[0].Err, play.ErrStalePair) || got[0].Now.ID != next {
		t.Fatalf("the rotating player's bet: %+v", got[0])
	}
	if got[1].Err != nil || got[1].Balance != 900e8 {
		t.Fatalf("the bystander's bet: %+v", got[1])
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM bets WHERE user_id = $1`, p.user); n != 0 {
		t.Fatalf("a bet was placed on the revealed pair")
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
	// dave already runs a mines game: a second one is refused.
	running := d.bet(1, 10, 0, "")
	running.Bet.Game, running.Draw = play.Mines, play.Draw{Status: play.StatusActive, Params: []byte(`{"mines":3}`), State: []byte(`{}`)}
	if got := postgres.ExecBetBatch(postgres.NewPlayStore(pool), []postgres.BatchBet{running}); got[0].Err != nil {
		t.Fatal(got[0].Err)
	}
	second := d.bet(2, 10, 0, "")
	second.Bet.Game, second.Draw = play.Mines, running.Draw

	store := postgres.NewPlayStore(pool)
	var logged bytes.Buffer
	store.SetLogger(slog.New(slog.NewTextHandler(&logged, nil)))
	got := postgres.ExecBetBatch(store, []postgres.BatchBet{a.bet(1, 100, 0, "50.00"), b.bet(1, 100, 0, "66.60"),
		c.bet(1, 100, 200, "50.00"), second})
	if l := logged.String(); strings.Count(l, "\n") != 1 || !strings.Contains(l, "a batch of bets failed") ||
		!strings.Contains(l, "injected failure") || !strings.Contains(l, "requests=4") {
		t.Errorf("logged %q, want one line with the failure and the batch's size", l)
	}
	if got[0].Err != nil || got[0].Balance != 900e8 || got[2].Err != nil || got[2].Balance != 1100e8 {
		t.Fatalf("the good bets: %+v %+v", got[0], got[2])
	}
	if got[1].Err == nil || errors.Is(got[1].Err, play.ErrStalePair) {
		t.Fatalf("the refused bet: %+v", got[1])
	}
	if !errors.Is(got[3].Err, play.ErrGameInProgress) {
		t.Fatalf("the second mines game: %+v", got[3])
	}
	if n := queryInt(t, pool, pairNonceSQL, b.pair.ID); n != 0 {
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
	// A session row held too: that bet is placed on its own, which does not
	// need the session's lock.
	held := newBatchPlayer(t, pool, "held", 1000e8)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE`, held.session); err != nil {
		t.Fatal(err)
	}
	done := make(chan []postgres.BatchAnswer)
	go func() {
		done <- postgres.ExecBetBatch(postgres.NewPlayStore(pool), []postgres.BatchBet{busy.bet(1, 100, 0, "50.00"),
			free.bet(1, 100, 0, "50.00"), held.bet(1, 100, 0, "50.00")})
	}()
	for i := 0; queryInt(t, pool, `SELECT count(*) FROM bets WHERE user_id = ANY($1)`, []uuid.UUID{free.user, held.user}) < 2; i++ {
		if i == 500 {
			t.Fatal("the other players' bets waited for the busy player's row")
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
	for i, a := range got {
		if a.Err != nil || a.Balance != 900e8 {
			t.Fatalf("answer %d: %+v", i, a)
		}
	}
	if n := queryInt(t, pool, pairNonceSQL, busy.pair.ID); n != 1 {
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
// PlaceBetAt (most of them in shared batches), while other transactions hold
// players' rows for a moment (their bets are placed on their own) and change
// their client seeds (their bets come back stale with the new seed), each
// get nonces 1..n, each once, balances that match their bets, and a ledger
// that adds up. More players than a batch holds, so a second batch runs
// next to the first whenever a full one waits.
func TestConcurrentBetsThroughTheBatcher(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	store := postgres.NewPlayStore(pool)
	const players, bets = 48, 25
	ps := make([]batchPlayer, players)
	for i := range ps {
		ps[i] = newBatchPlayer(t, pool, fmt.Sprintf("racer%02d", i), 1000e8)
	}
	if busy, _ := store.BatchTime(); busy != 0 {
		t.Fatalf("statements took %v before any bet", busy)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, players*2+1)
	stop := make(chan struct{})
	interfered := make(chan int)
	go func() {
		// Another transaction holds a player's row, and changes the client
		// seed of a pair, a few milliseconds at a time.
		n := 0
		defer func() { interfered <- n }()
		ctx := context.Background()
		for {
			select {
			case <-stop:
				return
			default:
			}
			p := ps[n%players]
			tx, err := pool.Begin(ctx)
			if err != nil {
				errs <- err
				return
			}
			_, err = tx.Exec(ctx, `SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, p.user)
			if err == nil {
				_, err = tx.Exec(ctx, `UPDATE seed_pairs SET client_seed = $2 WHERE id = $1`, p.pair.ID, fmt.Sprintf("seed-%d", n))
			}
			time.Sleep(2 * time.Millisecond)
			if err == nil {
				err = tx.Commit(ctx)
			}
			if err != nil {
				_ = tx.Rollback(ctx)
				errs <- err
				return
			}
			n++
		}
	}()
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
					pair := p.pair
					pair.Nonce = 1
					for placed := 0; placed < bets; {
						b := p.bet(pair.Nonce, 1, int64((i+placed+g)%3), "50.00")
						b.Pair = pair
						res, now, err := store.PlaceBetAt(context.Background(), b.Bet, b.Pair, b.Draw)
						bal := res.Balance
						switch {
						case errors.Is(err, play.ErrStalePair):
							if now.ID != p.pair.ID {
								errs <- fmt.Errorf("stale: pair now %+v", now)
								return
							}
							pair = now
							pair.Nonce++
						case err != nil:
							errs <- err
							return
						default:
							if bal < 0 {
								errs <- fmt.Errorf("balance %v", bal)
								return
							}
							placed++
							pair.Nonce++
						}
					}
				}()
			}
			inner.Wait()
		}()
	}
	wg.Wait()
	close(stop)
	t.Logf("%d client seeds changed under the bets; at most %d batches ran at once", <-interfered,
		postgres.PeakBetBatches(store))
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	batches, placed, alone := store.BetBatches()
	t.Logf("%d bets in %d statements, %d of them placed on their own afterwards", placed, batches, alone)
	if placed < int64(players*bets*2) || batches >= placed {
		t.Fatalf("%d bets in %d statements: none shared", placed, batches)
	}
	// The statements' time, summed: some, and no more than as many
	// batches as may run at once could take in the test's time.
	busy, _ := store.BatchTime()
	if took := time.Since(start); busy <= 0 || busy > time.Duration(postgres.PeakBetBatches(store))*took {
		t.Fatalf("the statements took %v in all over %v with at most %d at once", busy, took, postgres.PeakBetBatches(store))
	}
	if n := queryInt(t, pool, `SELECT count(*) FROM bets`); n != players*bets*2 {
		t.Fatalf("%d bets, want %d", n, players*bets*2)
	}
	if n := queryInt(t, pool, `
		SELECT count(*) FROM seed_pairs p JOIN users u ON u.seed_pair = p.id
		WHERE u.seed_nonce <> $1 OR u.seed_nonce <> (SELECT count(DISTINCT nonce) FROM bets b WHERE b.seed_pair_id = p.id)`,
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

// TestTwoBetBatchesAtOnce: two full batches of different players' bets
// run at once (the batcher's second, when a full one waits), round after
// round: each bet placed once at its nonce, and each balance and ledger
// exactly the bets'.
func TestTwoBetBatchesAtOnce(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	store := postgres.NewPlayStore(pool)
	const rounds = 5
	ps := make([]batchPlayer, 64)
	for i := range ps {
		ps[i] = newBatchPlayer(t, pool, fmt.Sprintf("twin%02d", i), 1000e8)
	}
	for r := int64(1); r <= rounds; r++ {
		var wg sync.WaitGroup
		answers := make([][]postgres.BatchAnswer, 2)
		for half := range 2 {
			bets := make([]postgres.BatchBet, 0, 32)
			for _, p := range ps[half*32 : half*32+32] {
				bets = append(bets, p.bet(r, 3, 2*(r%2), "50.00")) // stake 3, payout 2 or 0
			}
			wg.Go(func() { answers[half] = postgres.ExecBetBatch(store, bets) })
		}
		wg.Wait()
		for half, as := range answers {
			for i, a := range as {
				if a.Err != nil {
					t.Fatalf("round %d, batch %d, bet %d: %v", r, half, i, a.Err)
				}
			}
		}
	}
	// Rounds 1, 3 and 5 paid 2, rounds 2 and 4 nothing.
	want := int64(1000e8 - rounds*3e8 + 3*2e8)
	for _, p := range ps {
		if n := queryInt(t, pool, pairNonceSQL, p.pair.ID); n != rounds {
			t.Errorf("nonce %d, want %d", n, rounds)
		}
		if b := queryInt(t, pool, `SELECT balance FROM users WHERE id = $1`, p.user); b != want {
			t.Errorf("balance %d, want %d", b, want)
		}
		if l := queryInt(t, pool, `SELECT 1000e8 + sum(amount) FROM ledger_entries WHERE user_id = $1`, p.user); l != want {
			t.Errorf("the ledger adds up to %d, want %d", l, want)
		}
		if n := queryInt(t, pool, `SELECT count(*) FROM bets WHERE user_id = $1`, p.user); n != rounds {
			t.Errorf("%d bets, want %d", n, rounds)
		}
	}
}

// TestSecondGameRefusedEvenIfItEndsAtOnce: a player who plays a game of a
// kind cannot start another of that kind on either path (a batch, a lone
// bet), even when the new deal would
// end at once (a blackjack natural: settled, so the unique index on running
// games would not refuse it). Nothing changes.
func TestSecondGameRefusedEvenIfItEndsAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	store := postgres.NewPlayStore(pool)
	p := newBatchPlayer(t, pool, "dealt", 1000e8)
	other := newBatchPlayer(t, pool, "other", 1000e8)
	running := p.bet(1, 10, 0, "")
	running.Bet.Game, running.Draw = play.Blackjack, play.Draw{Status: play.StatusActive, Params: []byte(`{}`), State: []byte(`{}`)}
	if got := postgres.ExecBetBatch(store, []postgres.BatchBet{running}); got[0].Err != nil {
		t.Fatal(got[0].Err)
	}
	natural := func() postgres.BatchBet {
		b := p.bet(2, 10, 25, "")
		b.Bet.Game, b.Draw = play.Blackjack, play.Draw{Status: play.StatusSettled, Multiplier: 25000, Payout: 25e8,
			Params: []byte(`{}`), State: []byte(`{}`)}
		return b
	}
	check := func(path string, err error) {
		t.Helper()
		if !errors.Is(err, play.ErrGameInProgress) {
			t.Errorf("%s: %v, want %v", path, err, play.ErrGameInProgress)
		}
		if n := queryInt(t, pool, pairNonceSQL, p.pair.ID); n != 1 {
			t.Fatalf("%s: nonce %d", path, n)
		}
		if n := queryInt(t, pool, `SELECT count(*) FROM bets WHERE user_id = $1`, p.user); n != 1 {
			t.Fatalf("%s: %d bets", path, n)
		}
		if n := queryInt(t, pool, `SELECT balance FROM users WHERE id = $1`, p.user); n != 990e8 {
			t.Fatalf("%s: balance %d", path, n)
		}
	}
	got := postgres.ExecBetBatch(store, []postgres.BatchBet{natural(), other.bet(1, 1, 0, "50.00")})
	check("batch", got[0].Err)
	if got[1].Err != nil {
		t.Fatalf("the other player's bet: %v", got[1].Err)
	}
	err := store.InTx(ctx, func(tx play.Store) error {
		b := natural()
		_, _, err := tx.PlaceBetAt(ctx, b.Bet, b.Pair, b.Draw)
		return err
	})
	check("lone", err)
}

// TestBalanceAboveTheLimitBetsNothing: a balance above play.MaxBalance is
// refused on both bet paths before anything changes, so no
// credit can overflow a bigint (which would fail only winning bets), while
// a balance at the limit still bets.
func TestBalanceAboveTheLimitBetsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	store := postgres.NewPlayStore(pool)
	rich := newBatchPlayer(t, pool, "rich", play.MaxBalance+1)
	win := func() postgres.BatchBet { return rich.bet(1, 1, 1_000_000, "50.00") } // a million dollars on one dollar
	check := func(path string, err error) {
		t.Helper()
		if !errors.Is(err, play.ErrBalanceLimit) {
			t.Errorf("%s: %v, want %v", path, err, play.ErrBalanceLimit)
		}
		if n := queryInt(t, pool, pairNonceSQL, rich.pair.ID); n != 0 {
			t.Fatalf("%s: nonce %d", path, n)
		}
		if n := queryInt(t, pool, `SELECT balance FROM users WHERE id = $1`, rich.user); n != int64(play.MaxBalance)+1 {
			t.Fatalf("%s: balance %d", path, n)
		}
	}
	check("batch", postgres.ExecBetBatch(store, []postgres.BatchBet{win()})[0].Err)
	err := store.InTx(ctx, func(tx play.Store) error {
		b := win()
		_, _, err := tx.PlaceBetAt(ctx, b.Bet, b.Pair, b.Draw)
		return err
	})
	check("lone", err)

	mustExec(t, pool, `UPDATE users SET balance = $2 WHERE id = $1`, rich.user, int64(play.MaxBalance))
	if got := postgres.ExecBetBatch(store, []postgres.BatchBet{win()}); got[0].Err != nil ||
		got[0].Balance != play.MaxBalance-money.Dollars(1)+money.Dollars(1_000_000) {
		t.Fatalf("at the limit: %+v", got[0])
	}
}

// TestBetBatchReadsOnlyItsRows: the batch's statement finds every row it
// reads by its key, whatever the statistics say. fairplay_place_bets keeps
// one plan per connection (migration 00019), and in a young database that
// was never analysed a plan left to the statistics reads whole tables. Here
// 300 bystanders and 8 players who bet, one of them with a stale guess each
// time (its answer reads the pair as it is now): six batches leave each
// table's count of sequential scans where it was, and read fewer index
// entries than one pass over the bystanders' would.
func TestBetBatchReadsOnlyItsRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// One connection, whose counts are flushed before they are read.
	pool, err := postgres.Open(ctx, pgtest.URL(t)+"&pool_max_conns=1")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	mustExec(t, pool, `
		WITH u AS (
			INSERT INTO users (id, username, email, password_hash, balance)
			SELECT gen_random_uuid(), 'bystander' || i, 'bystander' || i || '@example.com', 'x', 1e10
			FROM generate_series(1, 300) i RETURNING id
		), s AS (
			INSERT INTO sessions (id, user_id, refresh_hash) SELECT gen_random_uuid(), id, uuid_send(gen_random_uuid()) FROM u
		)
		INSERT INTO seed_pairs (id, user_id, server_seed, server_seed_hash, client_seed)
		SELECT gen_random_uuid(), id, 's', 'h', 'c' FROM u`)
	players := make([]batchPlayer, 8)
	for i := range players {
		players[i] = newBatchPlayer(t, pool, fmt.Sprintf("scan%d", i), 1000e8)
	}
	count := func() map[string]indexReads {
		return readsOf(t, pool, "users", "sessions", "seed_pairs", "bets", "ledger_entries")
	}
	store := postgres.NewPlayStore(pool)
	before := count()
	const batches = 6
	for nonce := int64(1); nonce <= batches; nonce++ {
		batch := make([]postgres.BatchBet, len(players))
		for i, p := range players {
			batch[i] = p.bet(nonce, 1, 0, "50.00")
		}
		batch[0] = players[0].bet(nonce+10, 1, 0, "50.00") // its pair is at nonce 0
		for i, a := range postgres.ExecBetBatch(store, batch) {
			switch {
			case i == 0 && !errors.Is(a.Err, play.ErrStalePair):
				t.Fatalf("batch %d: the stale guess: %v, want %v", nonce, a.Err, play.ErrStalePair)
			case i > 0 && a.Err != nil:
				t.Fatalf("batch %d, bet %d: %v", nonce, i, a.Err)
			}
		}
	}
	after := count()
	for table, b := range before {
		a := after[table]
		// Each bet's rows are read a few times by key (locked, checked,
		// updated); a pass over a table's index reads all 300 bystanders.
		if a.seq != b.seq || a.index-b.index > batches*int64(len(players))*4 {
			t.Errorf("%s: %d sequential scans and %d index entries read by %d batches of %d bets; want none and at most %d",
				table, a.seq-b.seq, a.index-b.index, batches, len(players), batches*len(players)*4)
		}
	}
}

// indexReads is what pg_stat_user_tables counts of a table: its sequential
// scans and the entries read from all its indexes.
type indexReads struct{ seq, index int64 }

// readsOf returns the reads of tables so far, flushing the connection's
// counts first (a pool of one connection: the reads its statements made).
func readsOf(t *testing.T, pool *pgxpool.Pool, tables ...string) map[string]indexReads {
	t.Helper()
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT t.relname, coalesce(t.seq_scan, 0), coalesce(sum(i.idx_tup_read), 0)::bigint
		FROM pg_stat_user_tables t LEFT JOIN pg_stat_user_indexes i ON i.relid = t.relid
		WHERE t.relname = ANY($1)
		GROUP BY t.relname, t.seq_scan`, tables)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]indexReads{}
	for rows.Next() {
		var name string
		var r indexReads
		if err := rows.Scan(&name, &r.seq, &r.index); err != nil {
			t.Fatal(err)
		}
		n[name] = r
	}
	if err := rows.Err(); err != nil || len(n) != len(tables) {
		t.Fatalf("reads: %v (%v)", n, err)
	}
	return n
}

// The batches' arrays reach Postgres as the values they hold, on the
// server's connections (which write them by themselves), in each query mode
// a DATABASE_URL may choose, as on a plain pgx connection (which encodes
// them as any array): the same text as the plain Go slices, NULLs, empty
// arrays and strings, text outside ASCII and times before 1970 and far ahead
// included. The server's connections still read arrays back as before.
func TestBatchArraysReachPostgresAsTheyAre(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	plain, err := pgx.Connect(ctx, pool.Config().ConnConfig.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(ctx)
	for _, run := range []struct {
		name   string
		conn   *pgx.Conn
		mode   pgx.QueryExecMode
		itself bool
	}{
		{"server's pool", conn.Conn(), pgx.QueryExecModeCacheStatement, true},
		{"server's pool, exec mode", conn.Conn(), pgx.QueryExecModeExec, true},
		{"server's pool, simple protocol", conn.Conn(), pgx.QueryExecModeSimpleProtocol, true},
		{"plain connection", plain, pgx.QueryExecModeCacheStatement, false},
	} {
		texts, itself, err := postgres.BatchArrayTexts(ctx, run.conn, run.mode)
		if err != nil {
			t.Fatalf("%s: %v", run.name, err)
		}
		if itself != run.itself {
			t.Errorf("%s: writes the arrays itself = %v, want %v", run.name, itself, run.itself)
		}
		for _, a := range texts {
			if a.Fast != a.Plain {
				t.Errorf("%s, %s: Postgres read %s, the plain slice %s", run.name, a.Name, a.Fast, a.Plain)
			}
		}
		if len(texts) == 0 {
			t.Fatalf("%s: no arrays sent", run.name)
		}
	}
	var ids []uuid.UUID
	var nums []int64
	want := uuid.New()
	if err := conn.QueryRow(ctx, `SELECT ARRAY[$1::uuid], ARRAY[1, -2]::bigint[]`, want).Scan(&ids, &nums); err != nil ||
		len(ids) != 1 || ids[0] != want || len(nums) != 2 || nums[1] != -2 {
		t.Errorf("arrays read back on the server's connection: %v %v (%v)", ids, nums, err)
	}
}

// TestRefusedBetsStateIsNeverRead: the bet statement reads a bet's params
// and state as JSON only for a bet it places. A bet is drawn before the
// statement checks it, and one refused (a short balance, a stale pair) moves
// no nonce and can be asked again: parsing its state, which for a Blackjack
// deal is ~520 bytes when the deal ends the game at once and ~240 when it
// does not, made a refused natural take longer (migration 00033). Here the
// refused bets' params and state are not JSON at all, and the statement
// still answers each and places the third.
func TestRefusedBetsStateIsNeverRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	short := newBatchPlayer(t, pool, "short_raw", 1e8)
	stale := newBatchPlayer(t, pool, "stale_raw", 1000e8)
	ok := newBatchPlayer(t, pool, "placed_raw", 1000e8)
	rows, err := pool.Query(ctx, `SELECT ord, status FROM fairplay_place_bets(
		ARRAY[$1, $2, $3]::uuid[], ARRAY[$4, $5, $6]::uuid[], ARRAY[now() - interval '1 hour', now() - interval '1 hour',
		now() - interval '1 hour'], ARRAY[$7, $8, $9]::uuid[], ARRAY[$10, $11, $12], ARRAY[1, 5, 1]::bigint[],
		ARRAY[gen_random_uuid(), gen_random_uuid(), gen_random_uuid()], ARRAY['blackjack', 'blackjack', 'dice'],
		ARRAY['active', 'active', 'settled'], ARRAY[500000000, 100, 100]::bigint[], ARRAY[0, 0, 0]::bigint[],
		ARRAY[0, 0, 0]::bigint[], ARRAY['{"rules":', 'not json', '{"target":"50"}'],
		ARRAY['{"deck":["A', 'not json either', '{"roll":"7.00"}'], ARRAY[now(), now(), now()],
		ARRAY[false, false, true], false) ORDER BY ord`,
		short.user, stale.user, ok.user, short.session, stale.session, ok.session, short.pair.ID, stale.pair.ID,
		ok.pair.ID, short.pair.ClientSeed, stale.pair.ClientSeed, ok.pair.ClientSeed)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (s string, err error) {
		var ord int64
		err = r.Scan(&ord, &s)
		return fmt.Sprint(ord, " ", s), err
	})
	if err != nil {
		t.Fatalf("a refused bet's state was read: %v", err)
	}
	if want := []string{"1 insufficient", "2 stale", "3 placed"}; !slices.Equal(got, want) {
		t.Fatalf("answers %q, want %q", got, want)
	}
	var params, state string
	if err := pool.QueryRow(ctx, `SELECT params::text, state::text FROM bets WHERE user_id = $1`, ok.user).
		Scan(&params, &state); err != nil {
		t.Fatal(err)
	}
	if params != `{"target": "50"}` || state != `{"roll": "7.00"}` {
		t.Fatalf("the placed bet was stored with params %s, state %s", params, state)
	}
}
