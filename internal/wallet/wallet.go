// Package wallet is the ledger's audit: every balance change is a ledger
// entry written in the same transaction (see internal/play and
// internal/postgres), so a user's balance must always equal the sum of their
// entries, and each bet's entries must equal its stake and payout. Verify
// checks both for every user and bet; `fairplay ledger verify` runs it.
package wallet

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/money"
)

// Drift is a user whose balance is not the sum of their ledger entries.
type Drift struct {
	UserID    uuid.UUID
	Username  string
	Balance   money.Amount
	LedgerSum money.Amount
}

// BetMismatch is a bet whose ledger entries disagree with its stake or payout.
type BetMismatch struct {
	BetID  uuid.UUID
	Game   string
	Status string
	Amount money.Amount
	Payout money.Amount
	Staked money.Amount
	Paid   money.Amount
}

// Totals summarise the ledger.
type Totals struct {
	Users    int64
	Entries  int64
	Balances money.Amount
}

// Store reads the ledger.
type Store interface {
	BalanceDrift(ctx context.Context) ([]Drift, error)
	BetMismatches(ctx context.Context) ([]BetMismatch, error)
	Totals(ctx context.Context) (Totals, error)
}

// Report is the result of Verify.
type Report struct {
	Totals     Totals
	Drifts     []Drift
	Mismatches []BetMismatch
}

// Clean reports whether the ledger is exact.
func (r Report) Clean() bool { return len(r.Drifts) == 0 && len(r.Mismatches) == 0 }

// Verify checks every balance against the ledger and every bet against its entries.
func Verify(ctx context.Context, st Store) (Report, error) {
	var r Report
	var err error
	if r.Totals, err = st.Totals(ctx); err != nil {
		return r, fmt.Errorf("ledger totals: %w", err)
	}
	if r.Drifts, err = st.BalanceDrift(ctx); err != nil {
		return r, err
	}
	if r.Mismatches, err = st.BetMismatches(ctx); err != nil {
		return r, err
	}
	return r, nil
}
