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

// WalletStore implements wallet.TopUpStore.
type WalletStore struct{ pool *pgxpool.Pool }

// NewWalletStore returns a wallet.TopUpStore on pool.
func NewWalletStore(pool *pgxpool.Pool) *WalletStore { return &WalletStore{pool: pool} }

var _ wallet.TopUpStore = (*WalletStore)(nil)

// inPlaySQL sums the stakes of a player's running games
// (bets_one_active_key serves it).
const inPlaySQL = `SELECT coalesce(sum(amount), 0)::bigint FROM bets WHERE user_id = $1 AND status = 'active'`

// TopUpState reads a live user's balance, running stakes and last claim.
func (s *WalletStore) TopUpState(ctx context.Context, userID uuid.UUID) (wallet.TopUpState, error) {
	var st wallet.TopUpState
	var bal, inPlay int64
	err := s.pool.QueryRow(ctx, `
		SELECT u.balance, (`+inPlaySQL+`), u.top_up_at FROM users u WHERE u.id = $1 AND u.deleted_at IS NULL`,
		userID).Scan(&bal, &inPlay, &st.LastAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, wallet.ErrNoUser
	}
	if err != nil {
		return st, fmt.Errorf("top-up state: %w", err)
	}
	st.Balance, st.InPlay = money.Amount(bal), money.Amount(inPlay)
	return st, nil
}

// ClaimTopUp decides and credits a claim in one transaction. The player's
// row is locked first (FOR NO KEY UPDATE, as bets lock it), and the running
// games are read by a later statement, whose snapshot is taken after the
// lock: a game started by a transaction that held the row while this one
// waited is seen, as is a claim that committed meanwhile (the locked row is
// re-read as it now is).
func (s *WalletStore) ClaimTopUp(ctx context.Context, userID uuid.UUID, amount money.Amount, at time.Time,
	decide func(wallet.TopUpState) error) (money.Amount, error) {
	var after int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var st wallet.TopUpState
		var bal, inPlay int64
		err := tx.QueryRow(ctx, `SELECT balance, top_up_at FROM users WHERE id = $1 AND deleted_at IS NULL FOR NO KEY UPDATE`,
			userID).Scan(&bal, &st.LastAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return wallet.ErrNoUser
		}
		if err != nil {
			return fmt.Errorf("lock player: %w", err)
		}
		if err := tx.QueryRow(ctx, inPlaySQL, userID).Scan(&inPlay); err != nil {
			return fmt.Errorf("running stakes: %w", err)
		}
		st.Balance, st.InPlay = money.Amount(bal), money.Amount(inPlay)
		if err := decide(st); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `
			WITH u AS (
				UPDATE users SET balance = balance + $2, top_up_at = $3 WHERE id = $1 RETURNING balance
			)
			INSERT INTO ledger_entries (user_id, kind, amount, balance_after, note, created_at)
			SELECT $1, 'top_up', $2, u.balance, 'daily top-up', $3 FROM u
			RETURNING balance_after`, userID, int64(amount), at).Scan(&after)
	})
	if err != nil {
		return 0, err
	}
	return money.Amount(after), nil
}
