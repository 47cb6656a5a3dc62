package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/pressly/goose/v3"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
)

// BatchBet is one bet of a batch, for the tests of betBatcher.
type BatchBet struct {
	Ctx  context.Context
	Bet  play.NewBet
	Pair play.SeedPair
	Draw play.Draw
}

// BatchAnswer is one bet's answer.
type BatchAnswer struct {
	Balance money.Amount
	// Placed is the whole answer of a placed bet (the balance, the player's
	// name and hide_username).
	Placed play.Placed
	Now    play.SeedPair
	Err    error
}

func queued(bets []BatchBet) []*queuedBet {
	out := make([]*queuedBet, len(bets))
	for i, b := range bets {
		ctx := b.Ctx
		if ctx == nil {
			ctx = context.Background()
		}
		out[i] = &queuedBet{ctx: ctx, bet: b.Bet, pair: b.Pair, draw: b.Draw, done: make(chan betResult, 1)}
	}
	return out
}

// answers collects each bet's answer, waiting up to wait for each.
func answers(qs []*queuedBet, wait time.Duration) []BatchAnswer {
	out := make([]BatchAnswer, len(qs))
	for i, q := range qs {
		out[i] = BatchAnswer{Err: ErrNoAnswer}
		var r betResult
		select {
		case r = <-q.done:
		default:
			if wait == 0 {
				continue
			}
			select {
			case r = <-q.done:
			case <-time.After(wait):
				continue
			}
		}
		out[i] = BatchAnswer{Balance: r.placed.Balance, Placed: r.placed, Now: r.now, Err: r.err}
	}
	return out
}

// ErrNoAnswer is the answer TakeBetBatch reports for a bet not answered.
var ErrNoAnswer = errors.New("no answer")

// ExecBetBatch places bets as one batch, as the batcher does, and returns
// each bet's answer in the order given (waiting up to ten seconds for the
// bets placed on their own afterwards).
func ExecBetBatch(s *PlayStore, bets []BatchBet) []BatchAnswer {
	qs := queued(bets)
	newBetBatcher(s).exec(qs)
	return answers(qs, 10*time.Second)
}

// TakeBetBatch queues bets and takes one batch as the batcher would: it
// returns the indexes of the bets in the batch, in the batch's order, the
// indexes still queued, and the answers given (to bets whose callers gave
// up; ErrNoAnswer for the rest).
func TakeBetBatch(bets []BatchBet, size int) (batch, queuedIdx []int, got []BatchAnswer) {
	qs := queued(bets)
	index := make(map[*queuedBet]int, len(qs))
	for i, q := range qs {
		index[q] = i
	}
	b := &batchQueue[*queuedBet]{maxBatches: 1, maxSize: size, queue: append([]*queuedBet(nil), qs...), running: 1}
	for _, q := range b.take() {
		batch = append(batch, index[q])
	}
	for _, q := range b.queue {
		queuedIdx = append(queuedIdx, index[q])
	}
	return batch, queuedIdx, answers(qs, 0)
}

// PlaceLone places one bet on its own, as the batcher places a busy bet or
// the bets of a failed batch: waiting for its rows.
func PlaceLone(s *PlayStore, b BatchBet) BatchAnswer {
	placed, now, err := placeOne(context.Background(), s.db, b.Bet, b.Pair, b.Draw)
	return BatchAnswer{Balance: placed.Balance, Placed: placed, Now: now, Err: err}
}

// PlaceAsAnOlderRelease places one bet as the releases before migration
// 00013 placed a lone bet: this statement, sent to fairplay_place_bet,
// whose signature and answers they rely on.
func PlaceAsAnOlderRelease(s *PlayStore, b BatchBet) BatchAnswer {
	var session any
	if b.Bet.SessionID != uuid.Nil {
		session = id16(b.Bet.SessionID)
	}
	var settledAt *time.Time
	if b.Draw.Status == play.StatusSettled {
		settledAt = &b.Bet.At
	}
	var r placeRow
	err := s.db.QueryRow(context.Background(), `
		SELECT r.status, r.balance, u.username, u.hide_username, (r.pair).id, (r.pair).user_id, (r.pair).server_seed, (r.pair).server_seed_hash,
		       (r.pair).client_seed, (r.pair).nonce, (r.pair).created_at
		FROM fairplay_place_bet($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) r LEFT JOIN users u ON u.id = $1`,
		id16(b.Bet.UserID), session, b.Bet.LiveSince, id16(b.Pair.ID), b.Pair.ClientSeed, b.Pair.Nonce,
		id16(b.Bet.ID), string(b.Bet.Game), b.Draw.Status, int64(b.Bet.Stake), int64(b.Draw.Multiplier), int64(b.Draw.Payout),
		b.Draw.Params, b.Draw.State, b.Bet.At, settledAt).Scan(r.dest(false)...)
	if constraintError(err, codeUniqueViolation) == "bets_one_active_key" {
		return BatchAnswer{Err: play.ErrGameInProgress}
	}
	if err != nil {
		return BatchAnswer{Err: err}
	}
	placed, now, err := r.result()
	return BatchAnswer{Balance: placed.Balance, Placed: placed, Now: now, Err: err}
}

// MigrateDownTo undoes the embedded migrations above version on the
// database at url (their Down sections), for the tests of a migration's
// way back.
func MigrateDownTo(ctx context.Context, url string, version int64) error {
	return withProvider(url, func(p *goose.Provider) error {
		_, err := p.DownTo(ctx, version)
		return err
	})
}

// MigrateUpTo applies the embedded migrations up to version on the
// database at url, for the tests that compare a migration's way back with
// the schema before it.
func MigrateUpTo(ctx context.Context, url string, version int64) error {
	return withProvider(url, func(p *goose.Provider) error {
		_, err := p.UpTo(ctx, version)
		return err
	})
}

// withProvider runs f with the migrations' provider on the database at url.
func withProvider(url string, f func(*goose.Provider) error) error {
	db, err := sql.Open("pgx", withoutPoolParams(url))
	if err != nil {
		return err
	}
	defer db.Close()
	p, err := provider(db)
	if err != nil {
		return err
	}
	return f(p)
}

// The statements that save a game action, for the test of their plans:
// ActionSQL and ActionSameSQL from the replica's copy, LockGameSQL and
// SaveGameSQL on the locking path (after LiveSessionSQL).
const (
	ActionSQL     = actionSQL
	ActionSameSQL = actionSameSQL
	LockGameSQL   = lockGameSQL
	SaveGameSQL   = saveGameSQL
	// LiveSessionSQL is the locking path's session check.
	LiveSessionSQL = liveSessionSQL
)

// SessionUserSQL is AccountStore.SessionUser's statement.
var SessionUserSQL = sessionUserSQL

// BatchAction is one game action of a batch, for the tests of
// actionBatcher: the action, the copy of the game it was decided from, and
// what it changes.
type BatchAction struct {
	Action play.GameAction
	Old    play.Bet
	Change play.Change
}

// ActionAnswer is one action's answer: Refused tells that the statement
// refused its extra stake (Placed then has the balance).
type ActionAnswer struct {
	Placed  play.Placed
	Refused bool
	Err     error
}

// ErrPlayerBusy and ErrStaleGame are a batch's answers for an action its
// caller saves alone and one it runs on the locking path.
var (
	ErrPlayerBusy = errPlayerBusy
	ErrStaleGame  = errStaleGame
)

// ExecActionBatch saves actions as one batch, as the batcher does, and
// returns each one's answer in the order given.
func ExecActionBatch(s *PlayStore, actions []BatchAction) []ActionAnswer {
	qs := make([]*queuedAction, len(actions))
	for i, a := range actions {
		qs[i] = &queuedAction{ctx: context.Background(), a: a.Action, old: a.Old, c: a.Change, done: make(chan actionResult, 1)}
	}
	newActionBatcher(s).exec(qs)
	out := make([]ActionAnswer, len(qs))
	for i, q := range qs {
		r := <-q.done
		out[i] = ActionAnswer{Placed: r.placed, Refused: r.refused, Err: r.err}
	}
	return out
}

// TakeActionBatch queues actions of the given players and takes one batch as
// the batcher would: the indexes in the batch, in its order, and those
// still queued.
func TakeActionBatch(users []uuid.UUID, size int) (batch, queuedIdx []int) {
	b := &batchQueue[*queuedAction]{maxBatches: 1, maxSize: size, running: 1}
	index := make(map[*queuedAction]int, len(users))
	for i, u := range users {
		q := &queuedAction{ctx: context.Background(), a: play.GameAction{UserID: u}, done: make(chan actionResult, 1)}
		index[q] = i
		b.queue = append(b.queue, q)
	}
	for _, q := range b.take() {
		batch = append(batch, index[q])
	}
	for _, q := range b.queue {
		queuedIdx = append(queuedIdx, index[q])
	}
	return batch, queuedIdx
}

// SaveActionAlone saves one action decided from a copy by the statement of
// its own that the batcher's busy actions take (actionSQL, or
// actionSameSQL), which waits for the rows it needs.
func SaveActionAlone(s *PlayStore, a BatchAction) ActionAnswer {
	placed, _, refused, err := s.playCachedAlone(context.Background(), a.Action, a.Old, a.Change)
	return ActionAnswer{Placed: placed, Refused: refused, Err: err}
}

// AnswersByOrd runs sql, whose rows are (ord, value) integers, and reads
// them as a batch of n's answers (byOrd): the values in ord order.
func AnswersByOrd(ctx context.Context, db DB, sql string, n int) ([]int, error) {
	rows, err := db.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	return byOrd(rows, n, "test", func(rows pgx.Rows) (int, int, error) {
		var ord, v int
		err := rows.Scan(&ord, &v)
		return ord, v, err
	})
}

// ArrayText is one batch array sent to Postgres, as Postgres reads it back
// (::text): sent as the batch's type (Fast, in the mode asked for) and as the
// plain Go slice pgx encodes itself (Plain, in the default mode).
type ArrayText struct{ Name, Fast, Plain string }

// BatchArrayTexts sends arrayCases' arrays on conn in the query mode; itself
// is whether the connection's type map writes them by themselves
// (registerBinaryArrays).
func BatchArrayTexts(ctx context.Context, conn *pgx.Conn, mode pgx.QueryExecMode) (texts []ArrayText, itself bool, err error) {
	_, itself = conn.TypeMap().PlanEncode(pgtype.UUIDArrayOID, pgtype.BinaryFormatCode, uuidArray{}).(encodeBinaryArray)
	sqlType := map[uint32]string{pgtype.UUIDArrayOID: "uuid[]", pgtype.Int8ArrayOID: "bigint[]",
		pgtype.TextArrayOID: "text[]", pgtype.TimestamptzArrayOID: "timestamptz[]", pgtype.BoolArrayOID: "boolean[]"}
	for _, c := range arrayCases() {
		at := ArrayText{Name: c.name}
		q := "SELECT $1::" + sqlType[c.oid] + "::text"
		if err := conn.QueryRow(ctx, q, mode, c.fast).Scan(&at.Fast); err != nil {
			return nil, itself, fmt.Errorf("%s: %w", c.name, err)
		}
		// pgx's own array codec, in the default mode (in the exec and
		// simple modes it cannot find a type for [][16]byte).
		if err := conn.QueryRow(ctx, q, c.plain).Scan(&at.Plain); err != nil {
			return nil, itself, fmt.Errorf("%s, plain: %w", c.name, err)
		}
		texts = append(texts, at)
	}
	return texts, itself, nil
}

// SetHold replaces how the store holds the answer to a gone session's
// action decided from its copy (holdFrom), for the tests.
func SetHold(s *PlayStore, hold func(ctx context.Context, start time.Time)) { s.hold = hold }

// GoneHold is goneHold, for the tests.
const GoneHold = goneHold

// HeldUntil is heldUntil, for the tests.
func HeldUntil(start, now time.Time) time.Time { return heldUntil(start, now) }

// PeakBetBatches is the most bet batches s's batcher has had running at once.
func PeakBetBatches(s *PlayStore) int {
	s.batch.mu.Lock()
	defer s.batch.mu.Unlock()
	return s.batch.peak
}
