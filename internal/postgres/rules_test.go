package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/limits"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/postgres/pgtest"
)

// betPath is one way a bet reaches fairplay_place_bets.
type betPath struct {
	name  string
	place func(t *testing.T, store *postgres.PlayStore, pool *pgxpool.Pool, prefix string, b postgres.BatchBet) postgres.BatchAnswer
}

// olderReleasePath is the name of the path of the releases before 00013.
const olderReleasePath = "fairplay_place_bet of older releases"

// betPaths are every path a bet can take: in a batch with other players'
// bets, in a batch of its own, on its own (the lone path, which waits for
// its rows), and through fairplay_place_bet as the releases before
// migration 00013 call it.
var betPaths = []betPath{
	{"batch of three players", func(t *testing.T, store *postgres.PlayStore, pool *pgxpool.Pool, prefix string, b postgres.BatchBet) postgres.BatchAnswer {
		t.Helper()
		x := newBatchPlayer(t, pool, prefix+"x", 1000e8)
		y := newBatchPlayer(t, pool, prefix+"y", 1000e8)
		got := postgres.ExecBetBatch(store, []postgres.BatchBet{x.bet(1, 100, 0, "50.00"), b, y.bet(1, 10, 30, "50.00")})
		if got[0].Err != nil || got[0].Balance != 900e8 || got[2].Err != nil || got[2].Balance != 1020e8 {
			t.Errorf("the other players' bets: %+v, %+v", got[0], got[2])
		}
		return got[1]
	}},
	{"batch of one", func(_ *testing.T, store *postgres.PlayStore, _ *pgxpool.Pool, _ string, b postgres.BatchBet) postgres.BatchAnswer {
		return postgres.ExecBetBatch(store, []postgres.BatchBet{b})[0]
	}},
	{"lone", func(_ *testing.T, store *postgres.PlayStore, _ *pgxpool.Pool, _ string, b postgres.BatchBet) postgres.BatchAnswer {
		return postgres.PlaceLone(store, b)
	}},
	{olderReleasePath, func(_ *testing.T, store *postgres.PlayStore, _ *pgxpool.Pool, _ string, b postgres.BatchBet) postgres.BatchAnswer {
		return postgres.PlaceAsAnOlderRelease(store, b)
	}},
}

// betRule is one case of the rules of placing a bet. setup prepares a
// fresh player p (a live session, a fresh pair at nonce 0, balance
// dollars) and returns the bet, and for a stale bet the pair it must come
// back with (zero: none).
type betRule struct {
	name    string
	balance money.Amount // zero: 1000 dollars
	setup   func(t *testing.T, pool *pgxpool.Pool, prefix string, p batchPlayer) (postgres.BatchBet, play.SeedPair)
	// err is the refusal (nil: placed); refusal, instead, the message of a
	// refusal by the player's own limits; constraint the constraint whose
	// violation fails the bet.
	err        error
	refusal    string
	constraint string
	// sinceBatch leaves out the path of the releases before 00013.
	sinceBatch bool
}

// limited sets columns of p's row (migration 00015's limits, break,
// exclusion and counts) for a case of the responsible-gambling rules.
func limited(set string, stake, payout int64) func(*testing.T, *pgxpool.Pool, string, batchPlayer) (postgres.BatchBet, play.SeedPair) {
	return func(t *testing.T, pool *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		mustExec(t, pool, `UPDATE users SET `+set+` WHERE id = $1`, p.user)
		return p.bet(1, stake, payout, "50.00"), play.SeedPair{}
	}
}

// today, thisMonth and yesterday are period starts as the SQL counts them.
const (
	today     = "date_trunc('day', now(), 'UTC')"
	thisMonth = "date_trunc('month', now(), 'UTC')"
	yesterday = "date_trunc('day', now(), 'UTC') - interval '1 day'"
)

// runningGame records an active game of kind for p at nonce 1.
func runningGame(t *testing.T, pool *pgxpool.Pool, p batchPlayer, game play.Game) {
	t.Helper()
	setPairNonce(t, pool, p.pair.ID, 1)
	mustExec(t, pool, `INSERT INTO bets (id, user_id, game, status, amount, seed_pair_id, client_seed, nonce, params, state)
		VALUES ($1, $2, $3, 'active', 1e8, $4, $5, 1, '{}', '{}')`, uuid.New(), p.user, string(game), p.pair.ID, p.pair.ClientSeed)
}

// start is the start of a game of kind at nonce: still running, or (a
// blackjack natural) settled at once.
func start(p batchPlayer, nonce int64, game play.Game, settled bool) postgres.BatchBet {
	b := p.bet(nonce, 10, 0, "")
	b.Bet.Game, b.Draw = game, play.Draw{Status: play.StatusActive, Params: []byte(`{}`), State: []byte(`{}`)}
	if settled {
		b.Draw = play.Draw{Status: play.StatusSettled, Multiplier: 25000, Payout: 25e8, Params: []byte(`{}`), State: []byte(`{}`)}
	}
	return b
}

var betRules = []betRule{
	{name: "a loss", setup: func(_ *testing.T, _ *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		return p.bet(1, 100, 0, "50.00"), play.SeedPair{}
	}},
	{name: "a win", setup: func(_ *testing.T, _ *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		return p.bet(1, 100, 250, "50.00"), play.SeedPair{}
	}},
	{name: "stake equal to the balance", balance: 100e8, setup: func(_ *testing.T, _ *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		return p.bet(1, 100, 0, "50.00"), play.SeedPair{}
	}},
	{name: "stake above the balance", balance: 99e8, err: play.ErrInsufficientBalance,
		setup: func(_ *testing.T, _ *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
			return p.bet(1, 100, 0, "50.00"), play.SeedPair{}
		}},
	// play.Limits refuses a stake below a game's minimum or above its
	// maximum before the store is asked; the schema's floor is a positive
	// stake.
	{name: "stake of zero", constraint: "any", setup: func(_ *testing.T, _ *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		return p.bet(1, 0, 0, "50.00"), play.SeedPair{}
	}},
	{name: "balance above the limit", balance: play.MaxBalance + 1, err: play.ErrBalanceLimit,
		setup: func(_ *testing.T, _ *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
			return p.bet(1, 1, 1_000_000, "50.00"), play.SeedPair{}
		}},
	{name: "balance at the limit", balance: play.MaxBalance,
		setup: func(_ *testing.T, _ *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
			return p.bet(1, 1, 1_000_000, "50.00"), play.SeedPair{}
		}},
	{name: "session revoked", err: play.ErrUserGone, setup: func(t *testing.T, pool *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		mustExec(t, pool, `UPDATE sessions SET revoked_at = now() WHERE id = $1`, p.session)
		return p.bet(1, 100, 0, "50.00"), play.SeedPair{}
	}},
	{name: "session expired", err: play.ErrUserGone, setup: func(t *testing.T, pool *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		mustExec(t, pool, `UPDATE sessions SET last_used_at = now() - interval '2 hours' WHERE id = $1`, p.session)
		return p.bet(1, 100, 0, "50.00"), play.SeedPair{}
	}},
	{name: "another player's session", err: play.ErrUserGone, setup: func(t *testing.T, pool *pgxpool.Pool, prefix string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		b := p.bet(1, 100, 0, "50.00")
		b.Bet.SessionID = newBatchPlayer(t, pool, prefix+"o", 1000e8).session
		return b, play.SeedPair{}
	}},
	{name: "no session to check", setup: func(_ *testing.T, _ *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		b := p.bet(1, 100, 0, "50.00")
		b.Bet.SessionID = uuid.Nil
		return b, play.SeedPair{}
	}},
	{name: "player soft-deleted", err: play.ErrUserGone, setup: func(t *testing.T, pool *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		mustExec(t, pool, `UPDATE users SET deleted_at = now() WHERE id = $1`, p.user)
		return p.bet(1, 100, 0, "50.00"), play.SeedPair{}
	}},
	{name: "start a mines game", setup: func(_ *testing.T, _ *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		return start(p, 1, play.Mines, false), play.SeedPair{}
	}},
	{name: "mines while a mines game runs", err: play.ErrGameInProgress,
		setup: func(t *testing.T, pool *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
			runningGame(t, pool, p, play.Mines)
			return start(p, 2, play.Mines, false), play.SeedPair{}
		}},
	{name: "pump while a pump game runs", err: play.ErrGameInProgress,
		setup: func(t *testing.T, pool *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
			runningGame(t, pool, p, play.Pump)
			return start(p, 2, play.Pump, false), play.SeedPair{}
		}},
	{name: "blackjack natural while a hand runs", err: play.ErrGameInProgress,
		setup: func(t *testing.T, pool *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
			runningGame(t, pool, p, play.Blackjack)
			return start(p, 2, play.Blackjack, true), play.SeedPair{}
		}},
	{name: "dice while a mines game runs", setup: func(t *testing.T, pool *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		runningGame(t, pool, p, play.Mines)
		return p.bet(2, 100, 0, "50.00"), play.SeedPair{}
	}},
	{name: "nonce ahead", err: play.ErrStalePair, setup: func(_ *testing.T, _ *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		return p.bet(5, 100, 0, "50.00"), p.pair
	}},
	{name: "nonce already used", err: play.ErrStalePair, setup: func(t *testing.T, pool *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		setPairNonce(t, pool, p.pair.ID, 3)
		now := p.pair
		now.Nonce = 3
		return p.bet(3, 100, 0, "50.00"), now
	}},
	// Since migration 00029 a bet moves the nonce on in the player's row
	// alone: the stale answer is the row's. Not on the path of the releases
	// before 00013 (sinceBatch): they move the pair's own nonce with their
	// own statements and cannot run on a schema since 00029 at all
	// (docs/upgrades.md).
	{name: "nonce already used, the pair's row behind", err: play.ErrStalePair, sinceBatch: true, setup: func(t *testing.T, pool *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		mustExec(t, pool, `UPDATE users SET seed_nonce = 3 WHERE id = $1`, p.user)
		now := p.pair
		now.Nonce = 3
		return p.bet(1, 100, 0, "50.00"), now
	}},
	// A new client seed after such bets: the pair's row takes the row's
	// nonce (00028's seed_pairs_nonce trigger), and the answer is it.
	{name: "client seed changed, the pair's row behind", err: play.ErrStalePair, setup: func(t *testing.T, pool *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		mustExec(t, pool, `UPDATE users SET seed_nonce = 4 WHERE id = $1`, p.user)
		mustExec(t, pool, `UPDATE seed_pairs SET client_seed = 'changed' WHERE id = $1`, p.pair.ID)
		if n := queryInt(t, pool, `SELECT nonce FROM seed_pairs WHERE id = $1`, p.pair.ID); n != 4 {
			t.Errorf("the pair's row after a new client seed: nonce %d, want the player's row's 4", n)
		}
		now := p.pair
		now.ClientSeed, now.Nonce = "changed", 4
		return p.bet(5, 100, 0, "50.00"), now
	}},
	{name: "client seed changed", err: play.ErrStalePair, setup: func(t *testing.T, pool *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		mustExec(t, pool, `UPDATE seed_pairs SET client_seed = 'changed' WHERE id = $1`, p.pair.ID)
		now := p.pair
		now.ClientSeed = "changed"
		return p.bet(1, 100, 0, "50.00"), now
	}},
	{name: "pair rotated", err: play.ErrStalePair, setup: func(t *testing.T, pool *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		next := play.SeedPair{ID: uuid.New(), UserID: p.user, ServerSeed: "next", ServerSeedHash: "next-hash", ClientSeed: "c"}
		mustExec(t, pool, `UPDATE seed_pairs SET revealed_at = now() WHERE id = $1`, p.pair.ID)
		mustExec(t, pool, `INSERT INTO seed_pairs (id, user_id, server_seed, server_seed_hash, client_seed) VALUES ($1, $2, 'next', 'next-hash', 'c')`,
			next.ID, p.user)
		return p.bet(1, 100, 0, "50.00"), next
	}},
	{name: "no active pair", err: play.ErrStalePair, setup: func(t *testing.T, pool *pgxpool.Pool, _ string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		mustExec(t, pool, `UPDATE seed_pairs SET revealed_at = now() WHERE id = $1`, p.pair.ID)
		return p.bet(1, 100, 0, "50.00"), play.SeedPair{}
	}},
	// Responsible gambling (migration 00015): decided on the stake alone,
	// so a bet that would win is refused like one that would lose.
	{name: "loss limit: the stake, lost, would pass it", refusal: "This bet could take your net loss past your daily loss limit of 150.00",
		setup: limited("loss_limit_day = 150e8, play_day = "+today+", play_day_lost = 60e8", 100, 250)},
	{name: "loss limit: a stake up to it", setup: limited("loss_limit_day = 150e8, play_day = "+today+", play_day_lost = 50e8", 100, 0)},
	{name: "loss limit: yesterday's loss", setup: limited("loss_limit_day = 150e8, play_day = "+yesterday+", play_day_lost = 140e8", 100, 0)},
	{name: "loss limit: won back", setup: limited("loss_limit_week = 150e8, play_week = date_trunc('week', now(), 'UTC'), play_week_lost = -500e8", 100, 0)},
	{name: "wager limit: monthly", refusal: "This bet would take your wagers past your monthly wager limit of 100.00",
		setup: limited("wager_limit_month = 100e8, play_month = "+thisMonth+", play_month_wagered = 1e6", 100, 0)},
	{name: "limits: the shortest period first", refusal: "This bet would take your wagers past your daily wager limit of 20.00",
		setup: limited("wager_limit_day = 20e8, wager_limit_week = 10e8", 100, 0)},
	{name: "limits: a looser limit still waiting", refusal: "This bet could take your net loss past your daily loss limit of 50.00",
		setup: limited("loss_limit_day = 50e8, next_loss_limit_day = 500e8, next_limits_from = now() + interval '1 hour'", 100, 0)},
	{name: "limits: a looser limit after its wait", setup: limited(
		"loss_limit_day = 50e8, next_loss_limit_day = 500e8, next_limits_from = now() - interval '1 second'", 100, 0)},
	{name: "limits: removed after its wait", setup: limited(
		"wager_limit_day = 50e8, next_wager_limit_day = NULL, next_limits_from = now() - interval '1 second'", 100, 0)},
	{name: "on a break", refusal: "You are taking a break from betting until 2 January 2099, 03:04 UTC",
		setup: limited("break_until = '2099-01-02 03:04:05+00'", 100, 250)},
	{name: "after a break", setup: limited("break_until = now() - interval '1 second'", 100, 0)},
	{name: "self-excluded permanently", refusal: "You have excluded yourself from betting permanently",
		setup: limited("excluded_until = 'infinity', break_until = '2099-01-02 03:04:05+00'", 100, 250)},
	{name: "self-excluded, balance short", balance: 50e8, refusal: "You have excluded yourself from betting until 3 March 2099, 00:00 UTC",
		setup: limited("excluded_until = '2099-03-03 00:00:00+00'", 100, 0)},
	{name: "another player's pair", err: play.ErrStalePair, setup: func(t *testing.T, pool *pgxpool.Pool, prefix string, p batchPlayer) (postgres.BatchBet, play.SeedPair) {
		b := p.bet(1, 100, 0, "50.00")
		b.Pair = newBatchPlayer(t, pool, prefix+"o", 1000e8).pair
		b.Pair.Nonce = 1
		return b, p.pair
	}},
}

// playerState is what a bet may change of its player.
type playerState struct {
	balance, nonces, entries, ledgerSum, bets int64
	// The current periods' counts (migration 00015).
	dayWagered, dayLost, monthLost int64
}

func stateOf(t *testing.T, pool *pgxpool.Pool, user uuid.UUID) playerState {
	t.Helper()
	var s playerState
	err := pool.QueryRow(context.Background(), `
		SELECT u.balance,
		       (SELECT coalesce(sum(CASE WHEN p.id = u.seed_pair THEN u.seed_nonce ELSE p.nonce END), 0)::bigint
		        FROM seed_pairs p WHERE p.user_id = u.id),
		       (SELECT count(*) FROM ledger_entries WHERE user_id = u.id),
		       (SELECT coalesce(sum(amount), 0)::bigint FROM ledger_entries WHERE user_id = u.id),
		       (SELECT count(*) FROM bets WHERE user_id = u.id),
		       fairplay_usage('day', u.play_day, u.play_day_wagered, 0), fairplay_usage('day', u.play_day, u.play_day_lost, 0),
		       fairplay_usage('month', u.play_month, u.play_month_lost, 0)
		FROM users u WHERE u.id = $1`, user).Scan(&s.balance, &s.nonces, &s.entries, &s.ledgerSum, &s.bets,
		&s.dayWagered, &s.dayLost, &s.monthLost)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Each of the twelve limits refuses on its own, the limit as it applies
// now (loss_limit_day, say) and one that waited out its 24 hours with no
// limit before it (next_loss_limit_day): the batch evaluates the rule only
// for a player with one of them, a break or an exclusion set
// (fairplay_play_rules_set, migration 00019), so a column that test forgot
// would let that limit's bets through.
func init() {
	eachLimit(func(column, refusal string) {
		betRules = append(betRules,
			betRule{name: "limits: " + column + " alone", refusal: refusal,
				setup: limited(column+" = 50e8", 100, 250)},
			betRule{name: "limits: next_" + column + " alone, after its wait", refusal: refusal,
				setup: limited("next_"+column+" = 50e8, next_limits_from = now() - interval '1 second'", 100, 250)})
	})
}

// eachLimit calls fn with each of the twelve limit columns (loss and wager,
// day, week and month; the next_ ones are these prefixed) and the refusal
// of a stake past it when it is 50.00.
func eachLimit(fn func(column, refusal string)) {
	for _, kind := range []struct{ column, message string }{
		{"loss", "This bet could take your net loss past your %s loss limit of 50.00"},
		{"wager", "This bet would take your wagers past your %s wager limit of 50.00"},
	} {
		for _, period := range []struct{ column, adjective string }{{"day", "daily"}, {"week", "weekly"}, {"month", "monthly"}} {
			fn(kind.column+"_limit_"+period.column, fmt.Sprintf(kind.message, period.adjective))
		}
	}
}

// fairplay_play_rules_set (migration 00019), the batch's guard before the
// limits' rule, names every column of the player's row that the rule
// (fairplay_play_refusal) reads, but the play counters and
// next_limits_from, which alone can never make it refuse: a rule given a
// new column that the guard does not name would let bets past it.
func TestTheRulesGuardNamesEveryColumnOfTheRule(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	ctx := context.Background()
	var rule, guard string
	if err := pool.QueryRow(ctx, `SELECT pg_get_functiondef('fairplay_play_refusal'::regproc),
		pg_get_functiondef('fairplay_play_rules_set'::regproc)`).Scan(&rule, &guard); err != nil {
		t.Fatal(err)
	}
	column := regexp.MustCompile(`\bu\.([a-z_]+)`)
	named := map[string]bool{}
	for _, m := range column.FindAllStringSubmatch(guard, -1) {
		named[m[1]] = true
	}
	seen := map[string]bool{}
	for _, m := range column.FindAllStringSubmatch(rule, -1) {
		c := m[1]
		if seen[c] || strings.HasPrefix(c, "play_") || c == "next_limits_from" {
			continue
		}
		seen[c] = true
		if !named[c] {
			t.Errorf("fairplay_play_refusal reads u.%s, which fairplay_play_rules_set does not name", c)
		}
	}
	if len(seen) != 14 {
		t.Errorf("the rule reads %d columns that can refuse (%v), want the 14 of migration 00015", len(seen), seen)
	}
}

// TestBetRulesOnEveryPath runs each case of the rules of placing a bet on
// every path a bet can take: each gets the same answer on every path, a
// refusal changes nothing (balance, nonce, ledger, bets), and a placed bet
// takes its nonce, moves the money with a ledger entry for the stake and one
// for a payout, and is recorded as drawn.
func TestBetRulesOnEveryPath(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	store := postgres.NewPlayStore(pool)
	for ci, c := range betRules {
		t.Run(c.name, func(t *testing.T) {
			var firstConstraint string
			for pi, path := range betPaths {
				if c.sinceBatch && path.name == olderReleasePath {
					continue
				}
				prefix := fmt.Sprintf("r%02d_%d", ci, pi)
				balance := c.balance
				if balance == 0 {
					balance = 1000e8
				}
				p := newBatchPlayer(t, pool, prefix, balance)
				b, wantNow := c.setup(t, pool, prefix, p)
				before := stateOf(t, pool, p.user)
				got := path.place(t, store, pool, prefix, b)
				after := stateOf(t, pool, p.user)
				switch {
				case c.constraint != "":
					var pgErr *pgconn.PgError
					if !errors.As(got.Err, &pgErr) || pgErr.ConstraintName == "" {
						t.Errorf("%s: %v, want a constraint's violation", path.name, got.Err)
						break
					}
					if firstConstraint == "" {
						firstConstraint = pgErr.ConstraintName
					} else if pgErr.ConstraintName != firstConstraint {
						t.Errorf("%s: violates %s, the first path %s", path.name, pgErr.ConstraintName, firstConstraint)
					}
				case c.err != nil:
					if !errors.Is(got.Err, c.err) {
						t.Errorf("%s: %v, want %v", path.name, got.Err, c.err)
					}
				case c.refusal != "":
					if got.Err == nil || got.Err.Error() != c.refusal {
						t.Errorf("%s: %v, want %q", path.name, got.Err, c.refusal)
					}
				case got.Err != nil:
					t.Errorf("%s: %v, want the bet placed", path.name, got.Err)
				}
				if c.err != nil || c.refusal != "" || c.constraint != "" {
					if after != before {
						t.Errorf("%s: a refused bet changed %+v into %+v", path.name, before, after)
					}
					if errors.Is(c.err, play.ErrStalePair) && (got.Now.ID != wantNow.ID || got.Now.Nonce != wantNow.Nonce ||
						got.Now.ClientSeed != wantNow.ClientSeed || got.Now.ServerSeed != wantNow.ServerSeed) {
						t.Errorf("%s: stale with the pair %+v, want %+v", path.name, got.Now, wantNow)
					}
					continue
				}
				checkPlaced(t, pool, path.name, prefix, b, before, after, got)
			}
		})
	}
}

// checkPlaced checks what a placed bet changed.
func checkPlaced(t *testing.T, pool *pgxpool.Pool, path, username string, b postgres.BatchBet, before, after playerState, got postgres.BatchAnswer) {
	t.Helper()
	stake, payout := int64(b.Bet.Stake), int64(b.Draw.Payout)
	entries := int64(1)
	if payout != 0 {
		entries = 2
	}
	want := playerState{balance: before.balance - stake + payout, nonces: before.nonces + 1, entries: before.entries + entries,
		ledgerSum: before.ledgerSum - stake + payout, bets: before.bets + 1,
		dayWagered: before.dayWagered + stake, dayLost: before.dayLost + stake - payout,
		monthLost: before.monthLost + stake - payout}
	if after != want {
		t.Errorf("%s: placed bet left %+v, want %+v", path, after, want)
	}
	if int64(got.Balance) != want.balance || got.Placed.Username != username {
		t.Errorf("%s: answered balance %v for %q, want %v for %q", path, got.Balance, got.Placed.Username, want.balance, username)
	}
	ctx := context.Background()
	var (
		nonce                    int64
		kinds                    string
		pairID                   uuid.UUID
		game, status, clientSeed string
		amount, pay, multiplier  int64
		created                  time.Time
		settledAt                *time.Time
		sameJSON                 bool
	)
	if err := pool.QueryRow(ctx, pairNonceSQL, b.Pair.ID).Scan(&nonce); err != nil || nonce != b.Pair.Nonce {
		t.Errorf("%s: pair's nonce %d (%v), want %d", path, nonce, err, b.Pair.Nonce)
	}
	if err := pool.QueryRow(ctx, `
		SELECT coalesce(string_agg(kind || ' ' || amount || ' ' || balance_after, ', ' ORDER BY id), '') FROM ledger_entries
		WHERE user_id = $1 AND ref_id = $2`, b.Bet.UserID, b.Bet.ID).Scan(&kinds); err != nil {
		t.Fatal(err)
	}
	wantKinds := fmt.Sprintf("bet %d %d", -stake, want.balance-payout)
	if payout != 0 {
		wantKinds += fmt.Sprintf(", payout %d %d", payout, want.balance)
	}
	if kinds != wantKinds {
		t.Errorf("%s: ledger %q, want %q", path, kinds, wantKinds)
	}
	if err := pool.QueryRow(ctx, `
		SELECT seed_pair_id, nonce, game, status, client_seed, amount, payout, multiplier, created_at, settled_at,
		       params = $3::jsonb AND state = $4::jsonb
		FROM bets WHERE id = $1 AND user_id = $2`, b.Bet.ID, b.Bet.UserID, string(b.Draw.Params), string(b.Draw.State)).Scan(
		&pairID, &nonce, &game, &status, &clientSeed, &amount, &pay, &multiplier, &created, &settledAt, &sameJSON); err != nil {
		t.Fatalf("%s: the bet's row: %v", path, err)
	}
	settled := b.Draw.Status == play.StatusSettled
	if pairID != b.Pair.ID || nonce != b.Pair.Nonce || game != string(b.Bet.Game) || status != b.Draw.Status ||
		clientSeed != b.Pair.ClientSeed || amount != stake || pay != payout || multiplier != int64(b.Draw.Multiplier) ||
		!created.Equal(b.Bet.At) || (settledAt != nil) != settled || (settled && !settledAt.Equal(b.Bet.At)) ||
		!sameJSON {
		t.Errorf("%s: bet recorded as %v %d %s %s %s %d %d %d %v %v (params and state as drawn: %v)", path, pairID, nonce,
			game, status, clientSeed, amount, pay, multiplier, created, settledAt, sameJSON)
	}
}

// fairplay_stake_headroom (migration 00025) is what a running game's extra
// stake is checked against before its card is drawn: for every player's
// rules and every stake, the rule (fairplay_play_refusal, through
// fairplay_stake_refusal) refuses the stake exactly when it is above the
// headroom. A headroom that disagreed would refuse a double the rule allows,
// or let one through that the save then refuses after the draw.
func TestStakeHeadroomIsTheRefusalsBound(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	ctx := context.Background()
	cases := []string{
		"balance = balance", // no rule
		"break_until = now() + interval '1 hour'",
		"break_until = now() - interval '1 hour'",
		"excluded_until = 'infinity'",
		"excluded_until = now() + interval '1 day'",
		"excluded_until = now() - interval '1 day', loss_limit_day = 50e8",
		"loss_limit_day = 50e8",
		"loss_limit_day = 50e8, play_day = " + today + ", play_day_lost = 30e8",
		"loss_limit_day = 50e8, play_day = " + today + ", play_day_lost = -700e8",
		"loss_limit_day = 50e8, play_day = " + today + ", play_day_lost = -9000000000000000000",
		"loss_limit_day = 50e8, play_day = " + yesterday + ", play_day_lost = 49e8",
		"loss_limit_day = 50e8, play_day = " + today + ", play_day_lost = 80e8",
		"wager_limit_day = 50e8, play_day = " + today + ", play_day_wagered = 50e8",
		"wager_limit_week = 40e8, play_week = date_trunc('week', now(), 'UTC'), play_week_wagered = 1e8, " +
			"loss_limit_month = 45e8, play_month = " + thisMonth + ", play_month_lost = 2e8",
		"wager_limit_month = 9223372036854775807",
		"loss_limit_day = 50e8, wager_limit_day = 20e8, wager_limit_week = 30e8, loss_limit_week = 60e8, " +
			"loss_limit_month = 90e8, wager_limit_month = 100e8, play_day = " + today + ", play_day_wagered = 5e8",
		// A looser limit waiting out its day, and one whose day has come.
		"wager_limit_day = 10e8, next_wager_limit_day = 90e8, next_limits_from = now() + interval '1 hour'",
		"wager_limit_day = 10e8, next_wager_limit_day = 90e8, next_limits_from = now() - interval '1 hour'",
		"wager_limit_day = 10e8, next_limits_from = now() - interval '1 hour'",
	}
	// A rule given a new column must give the headroom it too.
	var rule, bound, call string
	if err := pool.QueryRow(ctx, `SELECT pg_get_functiondef('fairplay_play_refusal'::regproc),
		pg_get_functiondef('fairplay_stake_headroom'::regproc),
		pg_get_functiondef('fairplay_stake_refusal'::regproc)`).Scan(&rule, &bound, &call); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(call, "RETURN fairplay_play_refusal(u, p_stake);") {
		t.Errorf("fairplay_stake_refusal is no longer fairplay_play_refusal as one call:\n%s", call)
	}
	column := regexp.MustCompile(`\bu\.([a-z_]+)`)
	for _, m := range column.FindAllStringSubmatch(rule, -1) {
		if !strings.Contains(bound, "u."+m[1]) {
			t.Errorf("fairplay_play_refusal reads u.%s, which fairplay_stake_headroom does not", m[1])
		}
	}
	for i, set := range cases {
		p := newBatchPlayer(t, pool, fmt.Sprintf("headroom%02d", i), 1000e8)
		mustExec(t, pool, `UPDATE users SET `+set+` WHERE id = $1`, p.user)
		// Read in one transaction with the refusals below: the same now(),
		// whatever period boundary passes in between.
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		var headroom *int64
		if err := tx.QueryRow(ctx, `SELECT fairplay_stake_headroom(u) FROM users u WHERE id = $1`, p.user).
			Scan(&headroom); err != nil {
			t.Fatalf("%s: %v", set, err)
		}
		// Stakes up to a thousand times the largest bet (the rule's own
		// sums are bigint), and around the headroom.
		most := 1000 * int64(play.DefaultMaxBet)
		stakes := []int64{1, 1e6, 1e8, 20e8 - 1, 20e8, 20e8 + 1, 50e8, 50e8 + 1, 100e8, most}
		if headroom != nil {
			for _, d := range []int64{-1, 0, 1} {
				if s := *headroom + d; s > 0 && s <= most {
					stakes = append(stakes, s)
				}
			}
		}
		rows, err := tx.Query(ctx, `SELECT s, fairplay_stake_refusal(u, s) FROM users u, unnest($2::bigint[]) s
			WHERE u.id = $1`, p.user, stakes)
		if err != nil {
			t.Fatalf("%s: %v", set, err)
		}
		for rows.Next() {
			var (
				stake   int64
				refusal *string
			)
			if err := rows.Scan(&stake, &refusal); err != nil {
				t.Fatalf("%s: %v", set, err)
			}
			allowed := headroom == nil || stake <= *headroom
			if allowed != (refusal == nil) {
				t.Errorf("%s: a stake of %d with a headroom of %v: the rule answers %v", set, stake, fmtHeadroom(headroom),
					fmtRefusal(refusal))
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", set, err)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func fmtHeadroom(h *int64) string {
	if h == nil {
		return "none"
	}
	return fmt.Sprint(*h)
}

func fmtRefusal(r *string) string {
	if r == nil {
		return "nothing"
	}
	return *r
}

// TestPeriodCountsStopAtTheEndsOfBigint: a period's count that a bet would
// carry past bigint stops at its end (migration 00027), so the batch that
// holds the bet is placed, not failed whole; and the counts of a past
// period start again from the bet.
func TestPeriodCountsStopAtTheEndsOfBigint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	store := postgres.NewPlayStore(pool)
	const most = int64(9223372036854775807)
	full := newBatchPlayer(t, pool, "fullcount", 1000e8)
	other := newBatchPlayer(t, pool, "bystander", 1000e8)
	mustExec(t, pool, `UPDATE users SET play_day = `+today+`, play_day_wagered = $2::bigint, play_day_lost = $2::bigint,
		play_month = `+thisMonth+`, play_month_wagered = $2::bigint - 1, play_week = now() - interval '8 days',
		play_week_wagered = $2 WHERE id = $1`, full.user, most)
	got := postgres.ExecBetBatch(store, []postgres.BatchBet{other.bet(1, 1, 0, "50.00"), full.bet(1, 2, 0, "50.00")})
	for i, a := range got {
		if a.Err != nil {
			t.Fatalf("bet %d of the batch: %v", i, a.Err)
		}
	}
	var dayW, dayL, weekW, monthW int64
	if err := pool.QueryRow(ctx, `SELECT play_day_wagered, play_day_lost, play_week_wagered, play_month_wagered
		FROM users WHERE id = $1`, full.user).Scan(&dayW, &dayL, &weekW, &monthW); err != nil {
		t.Fatal(err)
	}
	if dayW != most || dayL != most || monthW != most || weekW != 2e8 {
		t.Errorf("counts day %d/%d, week %d, month %d: want the day's and month's at %d, the week's from the bet",
			dayW, dayL, weekW, monthW, most)
	}
	for _, c := range []struct {
		used, add, want int64
	}{
		{5, 7, 12}, {most - 7, 7, most}, {most - 7, 8, most}, {most, 1, most}, {most, -1, most - 1},
		{-most + 7, -7, -most}, {-most + 7, -8, -most}, {-most, -1, -most}, {-most, 1, -most + 1},
	} {
		var sum int64
		if err := pool.QueryRow(ctx, `SELECT fairplay_count(now(), now(), $1, $2)`, c.used, c.add).Scan(&sum); err != nil {
			t.Fatalf("fairplay_count(%d + %d): %v", c.used, c.add, err)
		}
		if sum != c.want {
			t.Errorf("fairplay_count(%d + %d) = %d, want %d", c.used, c.add, sum, c.want)
		}
	}
	var fresh int64
	if err := pool.QueryRow(ctx, `SELECT fairplay_count(now(), NULL, $1, 3)`, most).Scan(&fresh); err != nil || fresh != 3 {
		t.Errorf("a count never started: %d, %v; want the bet's 3", fresh, err)
	}
}

// TestRealityCheckSumsStopAtTheEndsOfBigint: a session's wagers and net
// past bigint read as its ends, as the period counts do, not as an error.
func TestRealityCheckSumsStopAtTheEndsOfBigint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	p := newBatchPlayer(t, pool, "longsession", 1000e8)
	const most = int64(9223372036854775807)
	for i, payout := range []int64{0, 0} {
		mustExec(t, pool, `INSERT INTO bets (id, user_id, game, status, amount, payout, seed_pair_id, client_seed, nonce,
			created_at, settled_at) VALUES ($1, $2, 'dice', 'settled', $3, $4, $5, 'c', $6, now(), now())`,
			uuid.New(), p.user, most-1, payout, p.pair.ID, i+1)
	}
	rc, err := postgres.NewLimitsStore(pool).RealityCheck(ctx, p.user, p.session)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Bets != 2 || int64(rc.Wagered) != most || int64(rc.Net) != -most {
		t.Errorf("reality check %+v: want 2 bets, wagers %d and net %d", rc, most, -most)
	}
}

// TestRealityCheckReadsEachBetOnce: the reality check's sums are every bet
// the player placed since the session signed in, running games as they are
// now, whatever was kept by earlier calls; and a call reads only the bets
// since the last, the last two minutes of play and the running games. It
// summed every bet since sign-in on every call, read from the table: with a
// million bets behind a session a call took ~260 ms of a pool connection,
// two at a time per player (found by a review playing a hostile player;
// migration 00034).
func TestRealityCheckReadsEachBetOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	p := newBatchPlayer(t, pool, "marathon", 1000e8)
	signedIn := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Microsecond)
	mustExec(t, pool, `UPDATE sessions SET created_at = $2 WHERE id = $1`, p.session, signedIn)
	store := postgres.NewLimitsStore(pool)
	nonce := int64(0)
	insert := func(n int, status string, at time.Time, game string) []uuid.UUID {
		t.Helper()
		ids := make([]uuid.UUID, n)
		for i := range ids {
			nonce++
			ids[i] = uuid.New()
			payout := int64(0)
			if nonce%3 == 0 {
				payout = 2 * nonce
			}
			var settled any
			if status == "settled" {
				settled = at
			}
			mustExec(t, pool, `INSERT INTO bets (id, user_id, game, status, amount, payout, seed_pair_id, client_seed,
				nonce, created_at, settled_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 'c', $8, $9, $10)`,
				ids[i], p.user, game, status, nonce, payout, p.pair.ID, nonce, at.Add(time.Duration(i)*time.Millisecond),
				settled)
		}
		return ids
	}
	// What the check must answer: every bet since sign-in, summed now.
	truth := func() limits.RealityCheck {
		t.Helper()
		var rc limits.RealityCheck
		var wagered, net int64
		if err := pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(amount), 0), coalesce(sum(payout - amount), 0)
			FROM bets WHERE user_id = $1 AND created_at >= $2`, p.user, signedIn).Scan(&rc.Bets, &wagered, &net); err != nil {
			t.Fatal(err)
		}
		rc.Wagered, rc.Net = money.Amount(wagered), money.Amount(net)
		return rc
	}
	// check calls the reality check in a transaction of its own and
	// returns how many bet rows it read.
	check := func(what string) int64 {
		t.Helper()
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		// The backend's counts not yet flushed, which hold earlier
		// transactions' too: the call's are what it adds.
		reads := func() int64 {
			var n int64
			if err := tx.QueryRow(ctx, `SELECT coalesce(sum(coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0)), 0)
				FROM pg_stat_xact_user_tables WHERE relname = 'bets'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		before := reads()
		var rc limits.RealityCheck
		var wagered, net int64
		if err := tx.QueryRow(ctx, `SELECT bets, wagered, net FROM fairplay_reality_check($1, $2)`, p.user, p.session).
			Scan(&rc.Bets, &wagered, &net); err != nil {
			t.Fatal(err)
		}
		rc.Wagered, rc.Net = money.Amount(wagered), money.Amount(net)
		read := reads() - before
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if want := truth(); rc.Bets != want.Bets || rc.Wagered != want.Wagered || rc.Net != want.Net {
			t.Fatalf("%s: reality check %d bets, %s wagered, %s net; want %d, %s, %s", what, rc.Bets, rc.Wagered,
				rc.Net, want.Bets, want.Wagered, want.Net)
		}
		return read
	}

	insert(5, "settled", signedIn.Add(-time.Hour), "dice") // before sign-in: not this session's
	mines := insert(1, "active", signedIn.Add(time.Minute), "mines")
	insert(2000, "settled", signedIn.Add(2*time.Minute), "dice")
	pump := insert(1, "active", signedIn.Add(90*time.Minute), "pump")
	now := time.Now().UTC()
	insert(20, "settled", now.Add(-time.Minute), "dice") // the last two minutes of play
	if read := check("first call"); read < 2000 {
		t.Fatalf("the first call read %d bets, want every one since sign-in", read)
	}
	if read := check("again"); read > 60 {
		t.Fatalf("a second call read %d bets: the kept ones again", read)
	}
	// Nothing changed: the session's row is not written again (a running
	// game polled for rewrote it on every call).
	version := func() (x string) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT xmin::text FROM sessions WHERE id = $1`, p.session).Scan(&x); err != nil {
			t.Fatal(err)
		}
		return x
	}
	before := version()
	check("once more")
	if version() != before {
		t.Fatalf("a call with nothing new rewrote the session's row")
	}

	// The running games settle, a stake grows; more bets, some old enough
	// to be kept.
	mustExec(t, pool, `UPDATE bets SET status = 'settled', payout = 500, settled_at = now() WHERE id = $1`, mines[0])
	mustExec(t, pool, `UPDATE bets SET amount = amount + 7 WHERE id = $1`, pump[0])
	insert(30, "settled", now.Add(30*time.Second), "plinko")
	if read := check("after the games moved"); read > 120 {
		t.Fatalf("read %d bets", read)
	}
	mustExec(t, pool, `UPDATE bets SET status = 'settled', payout = 1, settled_at = now() WHERE id = $1`, pump[0])
	insert(10, "settled", now.Add(10*time.Minute), "keno") // the last two minutes move on
	check("after both settled")

	// A replica whose clock runs ahead stamps a bet an hour from now; a bet
	// stamped a minute ago by another is saved after the call: it is still
	// counted.
	insert(1, "settled", time.Now().UTC().Add(time.Hour), "dice")
	check("with a bet stamped ahead")
	insert(1, "settled", time.Now().UTC().Add(-time.Minute), "dice")
	check("with a bet saved late")

	// Calls at once keep each bet once.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := store.RealityCheck(ctx, p.user, p.session); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	check("after calls at once")
	var pending int
	if err := pool.QueryRow(ctx, `SELECT cardinality(rc_pending) FROM sessions WHERE id = $1`, p.session).
		Scan(&pending); err != nil || pending != 0 {
		t.Fatalf("%d games left pending (%v) after both settled", pending, err)
	}
}

// TestRealityCheckKeepsRunningGamesInOneOrder: two running games whose ids
// are not in the order they began. The list of running games came in the
// order the rows did (by time the first call, by id later), so a call with
// nothing new found it changed and rewrote the session's row.
func TestRealityCheckKeepsRunningGamesInOneOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.New(t)
	p := newBatchPlayer(t, pool, "twogames", 1000e8)
	signedIn := time.Now().UTC().Add(-time.Hour).Truncate(time.Microsecond)
	mustExec(t, pool, `UPDATE sessions SET created_at = $2 WHERE id = $1`, p.session, signedIn)
	for i, g := range []struct {
		id   string
		game string
	}{{"ffffffff-0000-4000-8000-000000000000", "mines"}, {"00000000-0000-4000-8000-000000000001", "pump"}} {
		mustExec(t, pool, `INSERT INTO bets (id, user_id, game, status, amount, payout, seed_pair_id, client_seed,
			nonce, created_at) VALUES ($1, $2, $3, 'active', 100, 0, $4, 'c', $5, $6)`,
			g.id, p.user, g.game, p.pair.ID, i+1, signedIn.Add(time.Duration(i+1)*time.Minute))
	}
	// A bet a minute ago: the check's mark moves past the games, which are
	// then kept as running.
	mustExec(t, pool, `INSERT INTO bets (id, user_id, game, status, amount, payout, seed_pair_id, client_seed,
		nonce, created_at, settled_at) VALUES ($1, $2, 'dice', 'settled', 100, 0, $3, 'c', 3, $4, $4)`,
		uuid.New(), p.user, p.pair.ID, time.Now().UTC().Add(-time.Minute))
	store := postgres.NewLimitsStore(pool)
	version := func() (x string) {
		t.Helper()
		if _, err := store.RealityCheck(ctx, p.user, p.session); err != nil {
			t.Fatal(err)
		}
		if err := pool.QueryRow(ctx, `SELECT xmin::text FROM sessions WHERE id = $1`, p.session).Scan(&x); err != nil {
			t.Fatal(err)
		}
		return x
	}
	first := version()
	for i := range 3 {
		if v := version(); v != first {
			t.Fatalf("call %d with nothing new rewrote the session's row", i+2)
		}
	}
	var pending []string
	if err := pool.QueryRow(ctx, `SELECT rc_pending::text[] FROM sessions WHERE id = $1`, p.session).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if len(pending) != 2 || pending[0] > pending[1] {
		t.Errorf("running games kept as %v, want both in id order", pending)
	}
}
