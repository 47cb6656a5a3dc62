// Package dice is the rules of Dice: a roll from 0.00 to 100.00 and a roll-under target.
//
// The roll is floor(f × 10001) hundredths from one float (games.md §2), so its 10,001
// values are equally likely. The player picks a target from 2.0 to 98.0 in steps of 0.1
// and wins when the roll is strictly below it; a roll equal to the target loses.
//
// The payout multiplier is 99 ÷ target rounded to 2 decimals, halves rounded up
// (SPEC: "99 divided by the target, rounded to 2 decimals"): 50 → 1.98x, 40 → 2.475 → 2.48x,
// 98 → 1.01x, 2 → 49.5x. Because the roll has 10,001 values, the exact RTP before that
// rounding is 9900/10001 = 98.99% for every target; after it, 98.52–99.44% depending on
// the target.
//
// Only "roll under" exists: the product's slider shows roll under only.
package dice

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/money"
)

// Outcomes is the number of equally likely rolls, 0.00 … 100.00.
const Outcomes = 10001

// Roll is a dice roll in hundredths: 0 … 10000 for 0.00 … 100.00.
type Roll int

// String returns the roll with two decimals, "74.67" or "5.00".
func (r Roll) String() string {
	if r < 0 { // never drawn
		return fmt.Sprintf("%d.%02d", r/100, r%100)
	}
	var buf [24]byte
	b := strconv.AppendInt(buf[:0], int64(r/100), 10)
	return string(append(b, '.', byte('0'+r%100/10), byte('0'+r%10)))
}

// MarshalJSON writes the roll as a JSON number with two decimals.
func (r Roll) MarshalJSON() ([]byte, error) { return []byte(r.String()), nil }

// AppendJSON appends what MarshalJSON writes.
func (r Roll) AppendJSON(b []byte) []byte {
	if r < 0 {
		return append(b, r.String()...)
	}
	b = strconv.AppendInt(b, int64(r/100), 10)
	b = append(b, '.', byte('0'+r%100/10), byte('0'+r%10))
	return b
}

// RollFrom reads one float and returns the roll floor(f × 10001).
func RollFrom(src event.Source) Roll {
	return Roll(event.Index(src.Float(), Outcomes))
}

// Target is a roll-under target in tenths: 20 … 980 for 2.0 … 98.0.
type Target int

// Target bounds, in tenths.
const (
	MinTarget Target = 20
	MaxTarget Target = 980
)

// ErrInvalidTarget reports a target outside 2 … 98 or not on a 0.1 step.
var ErrInvalidTarget = errors.New("Roll target must be between 2 and 98 in steps of 0.1")

// NewTarget validates a target given in tenths (500 for 50.0).
func NewTarget(tenths int) (Target, error) {
	t := Target(tenths)
	if t < MinTarget || t > MaxTarget {
		return 0, fmt.Errorf("dice target %d tenths: %w", tenths, ErrInvalidTarget)
	}
	return t, nil
}

// ParseTarget reads the exact text of a JSON number ("50", "49.5", "2.0") as a target.
// A value between the 0.1 steps (49.55) or outside 2 … 98 is ErrInvalidTarget.
func ParseTarget(s string) (Target, error) {
	v, err := money.ParseFixed(s, 1)
	if err != nil {
		return 0, fmt.Errorf("dice target: %w: %w", ErrInvalidTarget, err)
	}
	if v < int64(MinTarget) || v > int64(MaxTarget) {
		return 0, fmt.Errorf("dice target %s: %w", s, ErrInvalidTarget)
	}
	return Target(v), nil
}

// String returns the target as a decimal, "50" or "49.5".
func (t Target) String() string { return money.FormatFixed(int64(t), 1) }

// MarshalJSON writes the target as a JSON number.
func (t Target) MarshalJSON() ([]byte, error) { return []byte(t.String()), nil }

// AppendJSON appends what MarshalJSON writes.
func (t Target) AppendJSON(b []byte) []byte { return money.AppendFixed(b, int64(t), 1) }

// Multiplier returns the payout multiplier for a win: 99 ÷ target rounded to 2 decimals,
// halves up. With the target in tenths that is round(99000 ÷ t) hundredths.
func (t Target) Multiplier() money.Multiplier {
	hundredths := (2*99000 + int64(t)) / (2 * int64(t)) // round half up
	return money.Multiplier(hundredths * (money.MultiplierScale / 100))
}

// Wins reports whether roll r wins against the target: r < t, in the same units.
func (t Target) Wins(r Roll) bool { return int(r) < int(t)*10 }

// Outcome is a settled dice bet.
type Outcome struct {
	Roll   Roll   `json:"roll"`
	Target Target `json:"target"`
	Win    bool   `json:"win"`
	// Multiplier is the total return on the stake: the target's multiplier on a win, 0 on
	// a loss. The payout is money.MulFloor(stake, Multiplier).
	Multiplier money.Multiplier `json:"multiplier"`
}

// AppendJSON appends o as json.Marshal writes it, without its reflection
// (TestOutcomeAppendJSONIsMarshal).
func (o Outcome) AppendJSON(b []byte) []byte {
	b = append(b, `{"roll":`...)
	b = o.Roll.AppendJSON(b)
	b = append(b, `,"target":`...)
	b = o.Target.AppendJSON(b)
	b = append(b, `,"win":`...)
	b = strconv.AppendBool(b, o.Win)
	b = append(b, `,"multiplier":`...)
	b = o.Multiplier.AppendJSON(b)
	return append(b, '}')
}

// Play reads one float from src and settles a bet on target t (a validated Target).
func Play(src event.Source, t Target) Outcome {
	o := Outcome{Roll: RollFrom(src), Target: t}
	if t.Wins(o.Roll) {
		o.Win = true
		o.Multiplier = t.Multiplier()
	}
	return o
}
