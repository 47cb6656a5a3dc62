package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fairplay/fairplay/internal/limits"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/play"
)

// actionBatcher saves concurrent game actions of different players decided
// from the replica's copies of their games (playCached) together: one
// statement, fairplay_play_actions (migration 00020), in one round trip, as
// betBatcher does for bets. Most of what Postgres spent on an action saved
// alone was the statement's own start and end (make bench-sql,
// PGCOST_SCENARIO=actions: 1,033,390 instructions per pump alone); a batch
// pays them once.
//
// The actions gather in a batchQueue, as bets do (one batch at a time, each
// player at most once per batch). A batch never waits for a row lock: an action whose player's row another transaction
// holds (and the money moves), or whose player is already in the batch, is
// answered errPlayerBusy and saved alone by the caller (playCachedAlone, the
// statement that waits); one whose game's row another transaction holds is
// answered errStaleGame, and runs on the locking path. When the statement
// fails it has changed nothing, and each of its actions is saved alone.
type actionBatcher struct {
	store *PlayStore // outside any transaction
	batchQueue[*queuedAction]

	batches, actions atomic.Int64 // statements sent and the actions they held
	alone            atomic.Int64 // actions of batches saved alone afterwards
	busy             atomic.Int64 // nanoseconds the statements took, summed
	failures         failureLog
}

// maxActionBatch bounds a batch, as maxBetBatch does bets'.
const maxActionBatch = 32

type queuedAction struct {
	ctx  context.Context
	a    play.GameAction
	old  play.Bet // the copy the action was decided from
	c    play.Change
	done chan actionResult
}

type actionResult struct {
	placed  play.Placed
	refused bool // the extra stake was refused (the balance short, a limit); placed has the balance
	err     error
}

func (q *queuedAction) waiting() context.Context { return q.ctx }
func (q *queuedAction) player() uuid.UUID        { return q.a.UserID }
func (q *queuedAction) giveUp(err error) {
	q.done <- actionResult{err: fmt.Errorf("save game: %w", err)}
}

func newActionBatcher(s *PlayStore) *actionBatcher {
	b := &actionBatcher{store: s}
	b.batchQueue = batchQueue[*queuedAction]{maxBatches: 1, maxSize: maxActionBatch, exec: b.exec}
	return b
}

// play queues one action and waits for its batch's answer (or ctx, after
// which the action may still be saved, as a lone statement cancelled in
// flight may be).
func (b *actionBatcher) play(ctx context.Context, a play.GameAction, old play.Bet, c play.Change) (play.Placed, bool, error) {
	q := &queuedAction{ctx: ctx, a: a, old: old, c: c, done: make(chan actionResult, 1)}
	b.add(q)
	select {
	case r := <-q.done:
		return r.placed, r.refused, r.err
	case <-ctx.Done():
		return play.Placed{}, false, fmt.Errorf("save game: %w", context.Cause(ctx))
	}
}

// exec saves one batch and answers each of its actions.
func (b *actionBatcher) exec(batch []*queuedAction) {
	b.batches.Add(1)
	b.actions.Add(int64(len(batch)))
	ctx, cancel := context.WithTimeout(context.Background(), betBatchTimeout)
	defer cancel()
	start := time.Now()
	results, err := playActions(ctx, b.store.db, batch)
	b.busy.Add(int64(time.Since(start)))
	var pgErr *pgconn.PgError
	failed := err != nil && errors.As(err, &pgErr) && !IsUnavailable(err)
	if failed {
		b.failures.log(b.store.log, "a batch of game actions failed; its actions are saved one by one", err, len(batch))
	}
	for i, q := range batch {
		switch {
		case failed:
			// The statement failed and changed nothing: each alone.
			b.alone.Add(1)
			q.done <- actionResult{err: errPlayerBusy}
		case err != nil:
			q.done <- actionResult{err: fmt.Errorf("save game: %w", err)}
		default:
			if errors.Is(results[i].err, errPlayerBusy) {
				b.alone.Add(1)
			}
			q.done <- results[i]
		}
	}
}

// playActionsSQL saves a batch of actions with fairplay_play_actions
// (migration 00020, which gives its answers).
const playActionsSQL = `
	SELECT ord, status, balance, player, hidden, refusal
	FROM fairplay_play_actions($1::uuid[], $2::uuid[], $3::timestamptz[], $4::uuid[], $5::text[], $6::bigint[],
	                           $7::text[], $8::text[], $9::bigint[], $10::bigint[], $11::text[], $12::bigint[],
	                           $13::bigint[], $14::bigint[], $15::text[], $16::text[], $17::timestamptz[],
	                           $18::timestamptz[])`

// playActions saves a batch in one statement and returns each action's
// answer, in the batch's order.
func playActions(ctx context.Context, db DB, batch []*queuedAction) ([]actionResult, error) {
	n := len(batch)
	var (
		users, sessions, bets            = make(uuidArray, n), make(uuidArray, n), make(uuidArray, n)
		liveSince, at                    = make(timeArray, n), make(timeArray, n)
		settledAt                        = make(nullTimeArray, n)
		gameNames, statuses              = make(textArray, n), make(textArray, n)
		oldParams, oldStates             = make(jsonArray, n), make(jsonArray, n)
		params, states                   = make(jsonArray, n), make(jsonArray, n)
		oldAmounts, stakes, pays         = make(int8Array, n), make(int8Array, n), make(int8Array, n)
		amounts, multipliers, betPayouts = make(int8Array, n), make(int8Array, n), make(int8Array, n)
	)
	for i, q := range batch {
		nb := q.c.Bet
		users[i], sessions[i], bets[i] = id16(q.a.UserID), id16(q.a.SessionID), id16(nb.ID)
		liveSince[i], at[i], settledAt[i] = q.a.LiveSince, q.a.At, nb.SettledAt
		gameNames[i], statuses[i] = string(q.a.Game), nb.Status
		oldParams[i], oldStates[i] = q.old.Params, q.old.State
		params[i], states[i] = nb.Params, nb.State
		oldAmounts[i], stakes[i], pays[i] = int64(q.old.Amount), int64(q.c.Stake), int64(q.c.Payout)
		amounts[i], multipliers[i], betPayouts[i] = int64(nb.Amount), int64(nb.Multiplier), int64(nb.Payout)
	}
	rows, err := db.Query(ctx, playActionsSQL, users, sessions, liveSince, bets, gameNames, oldAmounts, oldParams,
		oldStates, stakes, pays, statuses, amounts, multipliers, betPayouts, params, states, at, settledAt)
	if err != nil {
		return nil, err
	}
	return byOrd(rows, n, "save games", func(rows pgx.Rows) (int, actionResult, error) {
		var (
			ord              int
			status, username string
			balance          int64
			hidden           bool
			refusal          *string
		)
		if err := rows.Scan(&ord, &status, &balance, &username, &hidden, &refusal); err != nil || ord < 1 || ord > n {
			return ord, actionResult{}, err
		}
		return ord, actionAnswer(status, play.Placed{Balance: money.Amount(balance), Username: username, HideUsername: hidden},
			refusal, batch[ord-1].c.Bet.ID), nil
	})
}

// actionAnswer turns one of fairplay_play_actions' answers into playCached's.
func actionAnswer(status string, placed play.Placed, refusal *string, id uuid.UUID) actionResult {
	switch status {
	case "saved":
		return actionResult{placed: placed}
	case "gone":
		return actionResult{err: play.ErrUserGone}
	case "busy":
		return actionResult{err: errPlayerBusy}
	case "stale":
		return actionResult{err: errStaleGame}
	case "short":
		return actionResult{placed: placed, refused: true, err: play.ErrInsufficientBalance}
	case "refused":
		if refusal == nil {
			return actionResult{err: fmt.Errorf("save game %s: refused without a refusal", id)}
		}
		return actionResult{placed: placed, refused: true, err: limits.Refusal(*refusal)}
	case "unsaved":
		// The row was locked as the copy, active: the save cannot miss it.
		return actionResult{err: fmt.Errorf("save game %s: the locked game was not saved", id)}
	}
	return actionResult{err: fmt.Errorf("save game %s: answer %q", id, status)}
}

// ActionBatches reports how many statements the game actions saved in
// batches went out in since the store was made, how many actions they held,
// and how many of those were saved alone afterwards (a busy player, a
// failed batch).
func (s *PlayStore) ActionBatches() (statements, actions, alone int64) {
	if s.actions == nil {
		return 0, 0, 0
	}
	return s.actions.batches.Load(), s.actions.actions.Load(), s.actions.alone.Load()
}
