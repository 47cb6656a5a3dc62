// Package money holds Fairplay's exact money types.
//
// An Amount is an int64 count of 1e-8 dollars and a Multiplier an int64 count of 1e-4
// (3.96x is 39600). Both are parsed from and printed as exact decimal text, and a payout
// is computed as MulFloor(bet, multiplier): the exact product rounded down to the unit.
// No binary floating point touches a money value anywhere in this package; the Float64
// methods exist only for display and metrics.
//
// JSON numbers cross the API edge as text (json.Number, or the MarshalJSON/UnmarshalJSON
// methods here), so a client's "0.1" is exactly ten million units and never 0.1000000000000000055….
package money

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// Scale is the number of Amount units in one dollar.
const Scale = 100_000_000

// Decimals is the number of decimal places an Amount holds.
const Decimals = 8

// Amount is a signed quantity of money as a count of 1e-8 dollars.
//
// The zero value is zero dollars. Arithmetic that could overflow goes through Add, Sub and
// MulFloor, which report ErrOverflow instead of wrapping.
type Amount int64

// ErrInvalidBet is what ParseBet's errors match with errors.Is. Its text is the exact
// user-facing message of the specification, so handlers may show err.Error() as is.
var ErrInvalidBet = errors.New("Please enter a valid bet amount")

// errNotPositive is the cause behind ErrInvalidBet for zero and negative bets.
var errNotPositive = errors.New("money: bet must be greater than zero")

// betError carries the user-facing ErrInvalidBet text while keeping the precise cause
// (ErrSyntax, ErrPrecision, …) reachable through errors.Is for logs.
type betError struct{ cause error }

func (e *betError) Error() string   { return ErrInvalidBet.Error() }
func (e *betError) Unwrap() []error { return []error{ErrInvalidBet, e.cause} }

// Parse reads the exact text of a JSON number ("1", "0.1", "12.50", "1e2", "1.5E-3",
// "-3.25") as an Amount. See ParseFixed for the grammar and the errors; in short, more than
// 8 significant decimal places is ErrPrecision, beyond the int64 range is ErrOverflow and
// anything else that is not a JSON number is ErrSyntax. Negative values are accepted
// (an admin adjustment can subtract).
func Parse(s string) (Amount, error) {
	v, err := parseFixed(s, Decimals)
	if err != nil {
		return 0, fmt.Errorf("parse amount %s: %w", quote(s), err)
	}
	return Amount(v), nil
}

// ParseBet is Parse for a stake: it additionally rejects zero and negative amounts. Every
// error it returns matches ErrInvalidBet and prints exactly "Please enter a valid bet
// amount"; the underlying cause is still reachable with errors.Is. Limits such as the
// balance are the caller's business.
func ParseBet(s string) (Amount, error) {
	a, err := Parse(s)
	if err != nil {
		return 0, &betError{cause: err}
	}
	if a <= 0 {
		return 0, &betError{cause: errNotPositive}
	}
	return a, nil
}

// FromCents returns c cents as an Amount. It panics if the result does not fit; it is meant
// for constants and tests, while input from outside goes through Parse.
func FromCents(c int64) Amount {
	const perCent = Scale / 100
	if c > math.MaxInt64/perCent || c < math.MinInt64/perCent {
		panic("money: FromCents out of range")
	}
	return Amount(c * perCent)
}

// Dollars returns d whole dollars as an Amount. It panics if the result does not fit; it
// is meant for constants such as a signup grant, while input from outside goes through Parse.
func Dollars(d int64) Amount {
	if d > math.MaxInt64/Scale || d < math.MinInt64/Scale {
		panic("money: Dollars out of range")
	}
	return Amount(d * Scale)
}

// String returns the shortest exact decimal text of a in dollars: "1000", "12.5",
// "0.00000001", "-3.25". It is valid JSON number text and Parse reads it back unchanged.
func (a Amount) String() string { return FormatFixed(int64(a), Decimals) }

// Add returns a + b, or ErrOverflow if the sum does not fit.
func (a Amount) Add(b Amount) (Amount, error) {
	s := a + b
	if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
		return 0, fmt.Errorf("add %s + %s: %w", a, b, ErrOverflow)
	}
	return s, nil
}

// Sub returns a − b, or ErrOverflow if the difference does not fit.
func (a Amount) Sub(b Amount) (Amount, error) {
	s := a - b
	if (a >= 0 && b < 0 && s < 0) || (a < 0 && b > 0 && s >= 0) {
		return 0, fmt.Errorf("subtract %s - %s: %w", a, b, ErrOverflow)
	}
	return s, nil
}

// Float64 returns a in dollars as the nearest float64, for display and metrics only.
// Never compute with it.
func (a Amount) Float64() float64 {
	if a >= -1<<53 && a <= 1<<53 {
		// a and Scale are exact float64s, and IEEE division rounds the exact
		// quotient once: the nearest float64 to a/Scale, as parsing a's text
		// gives, without building the text.
		return float64(a) / Scale
	}
	f, _ := strconv.ParseFloat(a.String(), 64) // correctly rounded; the text is always valid
	return f
}

// MarshalJSON writes a as a JSON number in dollars with its exact decimal text.
func (a Amount) MarshalJSON() ([]byte, error) {
	return appendFixed(nil, int64(a), Decimals), nil
}

// UnmarshalJSON reads a JSON number exactly, with the rules of Parse. JSON null leaves a
// unchanged, as encoding/json does for other types; a JSON string is rejected.
func (a *Amount) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	v, err := Parse(string(data))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// MultiplierScale is the number of Multiplier units in 1x.
const MultiplierScale = 10_000

// MultiplierDecimals is the number of decimal places a Multiplier holds.
const MultiplierDecimals = 4

// One is the multiplier 1x: the stake comes back unchanged.
const One Multiplier = MultiplierScale

// Multiplier is a payout factor as a count of 1e-4: 3.96x is 39600, 1.0102x is 10102 and
// 3203384.8x is 32033848000. Game tables hold at most 2 decimals; the extra places leave
// room for exact products.
//
// Packages writing tables can use untyped constant arithmetic, which Go evaluates exactly
// at compile time: with const x = money.MultiplierScale, the literal 3.96 * x is 39600
// and a typo such as 3.965 * x does not compile.
type Multiplier int64

// ParseMultiplier reads the exact text of a JSON number ("3.96", "1000", "2.5e1") as a
// Multiplier. It applies the rules of ParseFixed with 4 decimal places and also rejects
// negative values with ErrNegative.
func ParseMultiplier(s string) (Multiplier, error) {
	v, err := parseFixed(s, MultiplierDecimals)
	if err == nil && v < 0 {
		err = ErrNegative
	}
	if err != nil {
		return 0, fmt.Errorf("parse multiplier %s: %w", quote(s), err)
	}
	return Multiplier(v), nil
}

// String returns the shortest exact decimal text of m: "3.96", "1", "3203384.8".
func (m Multiplier) String() string { return FormatFixed(int64(m), MultiplierDecimals) }

// Float64 returns m as the nearest float64, for display only. Never compute payouts with it.
func (m Multiplier) Float64() float64 {
	f, _ := strconv.ParseFloat(m.String(), 64) // correctly rounded; the text is always valid
	return f
}

// MarshalJSON writes m as a JSON number with its exact decimal text.
func (m Multiplier) MarshalJSON() ([]byte, error) {
	return appendFixed(nil, int64(m), MultiplierDecimals), nil
}

// AppendJSON appends what MarshalJSON writes.
func (m Multiplier) AppendJSON(b []byte) []byte { return appendFixed(b, int64(m), MultiplierDecimals) }

// UnmarshalJSON reads a JSON number exactly, with the rules of ParseMultiplier. JSON null
// leaves m unchanged.
func (m *Multiplier) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	v, err := ParseMultiplier(string(data))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// MulFloor returns a × m exactly, rounded toward zero to a whole unit (1e-8 dollars): the
// payout of stake a at multiplier m. For the non-negative stakes and multipliers of the
// games that is rounding down, so the house never pays a fraction of a unit too much. The
// product is formed in 128 bits, so no intermediate overflows; ErrOverflow is reported
// only when the result itself does not fit in an Amount.
func MulFloor(a Amount, m Multiplier) (Amount, error) {
	neg := (a < 0) != (m < 0)
	hi, lo := bits.Mul64(absU64(int64(a)), absU64(int64(m)))
	if hi >= MultiplierScale {
		return 0, fmt.Errorf("multiply %s by %s: %w", a, m, ErrOverflow) // quotient ≥ 2^64
	}
	q, _ := bits.Div64(hi, lo, MultiplierScale)
	switch {
	case !neg && q <= math.MaxInt64:
		return Amount(q), nil
	case neg && q <= 1<<63:
		return Amount(-q), nil // two's complement: also right for q == 1<<63
	default:
		return 0, fmt.Errorf("multiply %s by %s: %w", a, m, ErrOverflow)
	}
}

// MulFloorCapped returns a × m rounded down like MulFloor, but never more
// than limit: the payout of a stake a at multiplier m under a maximum payout
// per bet. It cannot fail: for a non-negative stake and multiplier the
// exact 128-bit product is compared with limit before anything is narrowed,
// so no outcome, however large, turns into an error. A negative a or m, or a
// negative limit, gives 0.
func MulFloorCapped(a Amount, m Multiplier, limit Amount) Amount {
	if a <= 0 || m <= 0 || limit <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(m))
	if hi >= MultiplierScale {
		return limit // the quotient is at least 2^64, above any Amount
	}
	q, _ := bits.Div64(hi, lo, MultiplierScale)
	if q >= uint64(limit) {
		return limit
	}
	return Amount(q)
}

// absU64 returns |v| as a uint64, correct for math.MinInt64 too.
func absU64(v int64) uint64 {
	if v < 0 {
		return uint64(-v)
	}
	return uint64(v)
}
