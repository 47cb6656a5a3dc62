package play

import (
	"fmt"
	"math/big"

	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/problem"
)

// Limits are the bet limits. Every bet path checks a stake against them
// before anything about its outcome is drawn, and every payout is capped at
// MaxPayout by arithmetic that cannot fail, so no refusal and no error a
// player sees can depend on an outcome.
type Limits struct {
	// MinBet is the smallest stake (SPEC.md: 0.1).
	MinBet money.Amount
	// MaxBet is the largest stake of a bet (a blackjack double takes the
	// same stake again). MaxBet × games.HighestMultiplier() fits an Amount,
	// so even an uncapped payout could never overflow.
	MaxBet money.Amount
	// MaxPayout is the most one bet pays: a larger win (possible only at
	// multipliers above MaxPayout / stake, such as a full Mines board) pays
	// MaxPayout, as Stake caps a bet's win. It is at least eight maximum
	// bets (a split blackjack with both hands doubled and won) and at most
	// MaxBalance.
	MaxPayout money.Amount
}

// MaxBalance is the largest balance a player may bet with (ten billion play
// dollars). A bet is refused, before anything is drawn, when the balance is
// above it; an admin adjustment may not raise a balance above it. A balance
// grows past it only by the payouts of bets placed below it — at most one
// instant bet at a time (the player's row is locked) and one running game of
// each of the three stateful kinds — so a balance never exceeds MaxBalance +
// 4 × MaxPayout ≤ 5 × 10^18 units, and no credit can overflow a bigint.
const MaxBalance money.Amount = 10_000_000_000 * money.Scale

// The default limits: SPEC.md's minimum, a maximum bet that leaves int64
// room for any table's multiplier (10,000 × 5,148,297.0 fits with a margin)
// and a maximum win of a million, as on Stake.
var (
	DefaultMinBet    = money.FromCents(10)
	DefaultMaxBet    = money.Dollars(10_000)
	DefaultMaxPayout = money.Dollars(1_000_000)
)

// DefaultLimits returns the default limits.
func DefaultLimits() Limits {
	return Limits{MinBet: DefaultMinBet, MaxBet: DefaultMaxBet, MaxPayout: DefaultMaxPayout}
}

// cent is one cent: stakes are whole cents, like every amount the UI shows.
const cent = money.Amount(money.Scale / 100)

// Validate reports limits that would let a stake or a payout misbehave.
func (l Limits) Validate() error {
	switch {
	case l.MinBet <= 0 || l.MinBet%cent != 0:
		return fmt.Errorf("minimum bet %s: want a positive amount in whole cents", l.MinBet)
	case l.MaxBet < l.MinBet || l.MaxBet%cent != 0:
		return fmt.Errorf("maximum bet %s: want whole cents, at least the minimum bet %s", l.MaxBet, l.MinBet)
	case l.MaxPayout > MaxBalance:
		return fmt.Errorf("maximum payout %s: at most %s", l.MaxPayout, MaxBalance)
	case l.MaxPayout/8 < l.MaxBet:
		return fmt.Errorf("maximum payout %s: want at least eight maximum bets (%s), what a split blackjack with both hands doubled and won pays",
			l.MaxPayout, l.MaxBet)
	}
	highest := games.HighestMultiplier()
	product := new(big.Int).Mul(big.NewInt(int64(l.MaxBet)), big.NewInt(int64(highest)))
	product.Quo(product, big.NewInt(money.MultiplierScale))
	if !product.IsInt64() {
		return fmt.Errorf("maximum bet %s: times the highest multiplier of any table (%sx) it leaves no room in an amount",
			l.MaxBet, highest)
	}
	return nil
}

// Refusals of a stake, each decided from the stake alone.
var errCents = problem.Invalid("Bet amounts have at most two decimal places")

// ErrBalanceLimit refuses a bet from a balance above MaxBalance.
var ErrBalanceLimit = problem.Invalid(fmt.Sprintf(
	"Your balance is above %s, the most a player can bet with", MaxBalance))

// check refuses a stake outside the limits.
func (l Limits) check(stake money.Amount) error {
	switch {
	case stake%cent != 0:
		return errCents
	case stake < l.MinBet:
		return problem.Invalid(fmt.Sprintf("The minimum bet is %s", l.MinBet))
	case stake > l.MaxBet:
		return problem.Invalid(fmt.Sprintf("The maximum bet is %s", l.MaxBet))
	}
	return nil
}

// payout is stake × mult rounded down, at most MaxPayout; it cannot fail.
func (l Limits) payout(stake money.Amount, mult money.Multiplier) money.Amount {
	return money.MulFloorCapped(stake, mult, l.MaxPayout)
}

// parseStake reads a stake (SPEC.md's "Please enter a valid bet amount" for
// anything that is not a positive number) and checks it against the limits.
func (s *Service) parseStake(betAmount string) (money.Amount, error) {
	stake, err := money.ParseBet(betAmount)
	if err != nil {
		return 0, err
	}
	if err := s.limits.check(stake); err != nil {
		return 0, err
	}
	return stake, nil
}
