package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/wallet"
)

var errNoRow = errors.New("no matching row")

// changeBalance adds delta (negative to debit) to a live user's balance and
// writes the matching ledger entry, in one statement. A debit that would take
// the balance below zero matches no row and returns errNoRow, as does a
// missing or deleted user.
func changeBalance(ctx context.Context, db DB, userID uuid.UUID, delta money.Amount, kind string, ref uuid.UUID,
	actor *uuid.UUID, note string, at time.Time) (money.Amount, error) {
	var refArg any
	if ref != uuid.Nil {
		refArg = ref
	}
	var bal int64
	err := db.QueryRow(ctx, `
		WITH u AS (
			UPDATE users SET balance = balance + $2
			WHERE id = $1 AND deleted_at IS NULL AND balance + $2 >= 0
			RETURNING balance
		)
		INSERT INTO ledger_entries (user_id, kind, amount, balance_after, ref_id, actor_id, note, created_at)
		SELECT $1, $3, $2, u.balance, $4, $5, $6, $7 FROM u
		RETURNING balance_after`,
		userID, int64(delta), kind, refArg, actor, note, at).Scan(&bal)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, errNoRow
	}
	if err != nil {
		return 0, fmt.Errorf("%s of %s: %w", kind, delta, err)
	}
	return money.Amount(bal), nil
}

// LedgerStore implements wallet.Store.
type LedgerStore struct{ pool *pgxpool.Pool }

// NewLedgerStore returns a wallet.Store on pool.
func NewLedgerStore(pool *pgxpool.Pool) *LedgerStore { return &LedgerStore{pool: pool} }

var _ wallet.Store = (*LedgerStore)(nil)

// BalanceDrift lists users whose balance differs from the sum of their entries.
func (s *LedgerStore) BalanceDrift(ctx context.Context) ([]wallet.Drift, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT u.id, u.username, u.balance, coalesce(l.total, 0)
		FROM users u
		LEFT JOIN (SELECT user_id, sum(amount) AS total FROM ledger_entries GROUP BY user_id) l ON l.user_id = u.id
		WHERE u.balance <> coalesce(l.total, 0)
		ORDER BY u.username`)
	if err != nil {
		return nil, fmt.Errorf("balance drift: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (wallet.Drift, error) {
		var d wallet.Drift
		var bal, sum int64
		err := r.Scan(&d.UserID, &d.Username, &bal, &sum)
		d.Balance, d.LedgerSum = money.Amount(bal), money.Amount(sum)
		return d, err
	})
}

// BetMismatches lists bets whose ledger entries do not match their stake and
// payout: each bet's "bet" entries must sum to -amount, and its "payout"
// entries to payout (none while it is still active).
func (s *LedgerStore) BetMismatches(ctx context.Context) ([]wallet.BetMismatch, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT b.id, b.game, b.status, b.amount, b.payout,
		       coalesce(-sum(l.amount) FILTER (WHERE l.kind = 'bet'), 0) AS staked,
		       coalesce(sum(l.amount) FILTER (WHERE l.kind = 'payout'), 0) AS paid
		FROM bets b LEFT JOIN ledger_entries l ON l.ref_id = b.id
		GROUP BY b.id
		HAVING coalesce(-sum(l.amount) FILTER (WHERE l.kind = 'bet'), 0) <> b.amount
		    OR coalesce(sum(l.amount) FILTER (WHERE l.kind = 'payout'), 0) <> b.payout
		ORDER BY b.created_at`)
	if err != nil {
		return nil, fmt.Errorf("bet mismatches: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (wallet.BetMismatch, error) {
		var m wallet.BetMismatch
		var amount, payout, staked, paid int64
		err := r.Scan(&m.BetID, &m.Game, &m.Status, &amount, &payout, &staked, &paid)
		m.Amount, m.Payout, m.Staked, m.Paid = money.Amount(amount), money.Amount(payout), money.Amount(staked), money.Amount(paid)
		return m, err
	})
}

// Totals sums balances and ledger entries by kind.
func (s *LedgerStore) Totals(ctx context.Context) (wallet.Totals, error) {
	var t wallet.Totals
	var users, entries, bal int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(balance), 0) FROM users`).Scan(&users, &bal); err != nil {
		return t, err
	}
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM ledger_entries`).Scan(&entries); err != nil {
		return t, err
	}
	t.Users, t.Entries, t.Balances = users, entries, money.Amount(bal)
	return t, nil
}
