package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/wallet"
)

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
