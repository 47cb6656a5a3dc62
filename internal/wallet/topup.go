package wallet

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/problem"
)

// The daily top-up keeps the demo from ending with an empty wallet: a player
// whose balance has dropped below the minimum bet may claim play money — a
// "top_up" ledger entry, like any other credit, so `fairplay ledger verify`
// still balances — at most once per interval.
//
// A running game's stake counts as balance: it is still in play, and the
// game may pay it back. Without that rule a player could start a Mines game
// with their whole balance, claim with the balance at zero, then cash out
// and keep both. (With the threshold at the minimum bet, any running game
// holds at least the threshold, so a running game always refuses a claim.)

// TopUpPolicy is the top-up's configuration.
type TopUpPolicy struct {
	// Amount is what a claim credits; 0 turns top-ups off.
	Amount money.Amount
	// Interval is the least time between two claims of a player.
	Interval time.Duration
	// Threshold is the balance (with running games' stakes) below which a
	// claim is allowed: the minimum bet.
	Threshold money.Amount
}

// TopUpState is what decides a player's claim.
type TopUpState struct {
	// Balance is the player's balance.
	Balance money.Amount
	// InPlay is the total stake of the player's running games.
	InPlay money.Amount
	// LastAt is the player's last claim (nil: never).
	LastAt *time.Time
}

// TopUpStore reads and claims top-ups.
type TopUpStore interface {
	// TopUpState reads a live user's state (accounts' ErrUserNotFound
	// sentinel is the caller's business: the store returns ErrNoUser).
	TopUpState(ctx context.Context, userID uuid.UUID) (TopUpState, error)
	// ClaimTopUp runs one transaction: it locks the player's row, reads the
	// state after the lock (so a claim or game that committed meanwhile is
	// seen), and when decide allows it credits amount with a top_up ledger
	// entry and records the claim at at. It returns the balance after.
	// decide's error is returned as it is, and nothing changes.
	ClaimTopUp(ctx context.Context, userID uuid.UUID, amount money.Amount, at time.Time,
		decide func(TopUpState) error) (money.Amount, error)
}

// ErrNoUser is the TopUpStore's answer for a user that is gone.
var ErrNoUser = problem.Unauthenticated("Token is not valid")

// Refusals of a claim.
var (
	ErrTopUpOff         = problem.Conflict("Top-ups are turned off on this casino")
	ErrTopUpRunningGame = problem.Conflict("Finish your running game first: its stake still counts toward your balance")
)

// TopUp is a player's top-up as GetTopUp shows it.
type TopUp struct {
	// Available is true when a claim would succeed now.
	Available bool
	Amount    money.Amount
	Threshold money.Amount
	// NextAt is when the next claim is allowed, if the last was less than
	// an interval ago.
	NextAt *time.Time
}

// Claim is a credited top-up.
type Claim struct {
	Balance money.Amount
	Amount  money.Amount
	NextAt  time.Time
}

// TopUps serves the daily top-up.
type TopUps struct {
	store  TopUpStore
	policy TopUpPolicy
	now    func() time.Time
}

// NewTopUps returns the top-up use cases; now is the clock (time.Now when nil).
func NewTopUps(store TopUpStore, policy TopUpPolicy, now func() time.Time) *TopUps {
	if now == nil {
		now = time.Now
	}
	return &TopUps{store: store, policy: policy, now: now}
}

// Policy returns the configuration in force.
func (t *TopUps) Policy() TopUpPolicy { return t.policy }

// check returns why a claim is refused now, or nil.
func (t *TopUps) check(st TopUpState, now time.Time) error {
	p := t.policy
	switch {
	case p.Amount <= 0:
		return ErrTopUpOff
	case st.Balance >= p.Threshold:
		return problem.Conflict(fmt.Sprintf("Top-up available when your balance is below %s", cents(p.Threshold)))
	case st.Balance+st.InPlay >= p.Threshold:
		return ErrTopUpRunningGame
	}
	if next := t.nextAt(st); next != nil && now.Before(*next) {
		return problem.Conflict("Next top-up available at " + next.UTC().Format(time.RFC3339))
	}
	return nil
}

// nextAt is when the interval since the last claim ends (nil: never claimed).
func (t *TopUps) nextAt(st TopUpState) *time.Time {
	if st.LastAt == nil {
		return nil
	}
	next := st.LastAt.Add(t.policy.Interval)
	return &next
}

// Status tells the player whether a claim would succeed now.
func (t *TopUps) Status(ctx context.Context, userID uuid.UUID) (TopUp, error) {
	st, err := t.store.TopUpState(ctx, userID)
	if err != nil {
		return TopUp{}, fmt.Errorf("top-up state: %w", err)
	}
	now := t.now()
	out := TopUp{Available: t.check(st, now) == nil, Amount: t.policy.Amount, Threshold: t.policy.Threshold}
	if next := t.nextAt(st); next != nil && now.Before(*next) {
		out.NextAt = next
	}
	if t.policy.Amount <= 0 {
		out.Amount = 0
	}
	return out, nil
}

// Claim credits the top-up if the player may have it now; two racing claims
// credit once (the store decides under the player's row lock).
func (t *TopUps) Claim(ctx context.Context, userID uuid.UUID) (Claim, error) {
	if t.policy.Amount <= 0 {
		return Claim{}, ErrTopUpOff
	}
	now := t.now()
	bal, err := t.store.ClaimTopUp(ctx, userID, t.policy.Amount, now, func(st TopUpState) error {
		return t.check(st, now)
	})
	if err != nil {
		return Claim{}, fmt.Errorf("claim top-up: %w", err)
	}
	return Claim{Balance: bal, Amount: t.policy.Amount, NextAt: now.Add(t.policy.Interval)}, nil
}

// cents formats an amount of whole cents with two decimals ("0.10"), as
// the web app shows money.
func cents(a money.Amount) string {
	c := int64(a) / (money.Scale / 100)
	return fmt.Sprintf("%d.%02d", c/100, c%100)
}
