package money

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
)

// Errors reported by the parsers and the arithmetic. Callers test them with errors.Is;
// the returned errors wrap them with the offending input for the logs.
var (
	// ErrSyntax reports text that is not a JSON number (this also covers NaN and Infinity,
	// which JSON cannot spell).
	ErrSyntax = errors.New("money: malformed number")
	// ErrPrecision reports a number with more decimal places than the type can hold exactly.
	ErrPrecision = errors.New("money: too many decimal places")
	// ErrOverflow reports a value or a result outside the int64 range of the type.
	ErrOverflow = errors.New("money: value out of range")
	// ErrNegative reports a negative value where only zero or more makes sense.
	ErrNegative = errors.New("money: negative value")
)

// maxQuoted bounds how much of a rejected input an error message repeats, so that a
// megabyte of digits in a request does not end up in a log line.
const maxQuoted = 40

// pow10 holds 10^0 … 10^19, every power of ten that fits in a uint64.
var pow10 = [...]uint64{
	1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000,
	10_000_000_000, 100_000_000_000, 1_000_000_000_000, 10_000_000_000_000,
	100_000_000_000_000, 1_000_000_000_000_000, 10_000_000_000_000_000,
	100_000_000_000_000_000, 1_000_000_000_000_000_000, 10_000_000_000_000_000_000,
}

// ParseFixed parses the exact text of a JSON number (RFC 8259 §6: an optional minus sign,
// an integer part without leading zeros, an optional fraction and an optional exponent)
// into a count of 10^-places units, for 0 <= places <= 18.
//
// The conversion is exact decimal arithmetic on the digits; no binary floating point is
// involved. Only the numeric value counts: trailing zeros do not make a number too
// precise ("1.500000000" has 9 decimals written but is exactly 1.5), while a non-zero
// digit beyond the last place is ErrPrecision. A value outside the int64 range is
// ErrOverflow; text that is not a JSON number (including "NaN", "Infinity", "+1", ".5",
// "01", "1.") is ErrSyntax.
func ParseFixed(s string, places int) (int64, error) {
	if places < 0 || places > 18 {
		panic("money: ParseFixed places out of range")
	}
	v, err := parseFixed(s, places)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", quote(s), err)
	}
	return v, nil
}

func parseFixed(s string, places int) (int64, error) {
	i := 0
	neg := false
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}

	// Integer part: "0" or a non-zero digit followed by digits.
	intStart := i
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return 0, ErrSyntax
	}
	intDigits := s[intStart:i]

	// Fraction: "." followed by at least one digit.
	fracDigits := ""
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return 0, ErrSyntax
		}
		fracDigits = s[start:i]
	}

	// Exponent: "e" or "E", an optional sign, at least one digit. Its magnitude saturates
	// far beyond anything that could still produce an in-range value, so absurd exponents
	// cannot overflow the arithmetic below.
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNeg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			expNeg = s[i] == '-'
			i++
		}
		start := i
		for i < len(s) && isDigit(s[i]) {
			if exp < 1<<40 {
				exp = exp*10 + int64(s[i]-'0')
			}
			i++
		}
		if i == start {
			return 0, ErrSyntax
		}
		if expNeg {
			exp = -exp
		}
	}
	if i != len(s) {
		return 0, ErrSyntax
	}

	// The number is D × 10^(exp − len(frac)) where D is the digit string int+frac; we want
	// D × 10^shift units.
	nInt, nAll := len(intDigits), len(intDigits)+len(fracDigits)
	digit := func(k int) uint64 {
		if k < nInt {
			return uint64(intDigits[k] - '0')
		}
		return uint64(fracDigits[k-nInt] - '0')
	}
	first, last := -1, -1
	for k := 0; k < nAll; k++ {
		if digit(k) != 0 {
			if first < 0 {
				first = k
			}
			last = k
		}
	}
	if first < 0 {
		return 0, nil // zero, whatever the exponent or sign
	}
	// Move trailing zeros of D into the exponent so the last significant digit is non-zero:
	// then the value is a whole number of units exactly when the shift is not negative.
	shift := exp - int64(len(fracDigits)) + int64(places) + int64(nAll-1-last)
	if shift < 0 {
		return 0, ErrPrecision
	}
	sig := int64(last - first + 1)
	if sig+shift > 19 {
		return 0, ErrOverflow // at least 10^19 units, beyond any int64
	}
	var mag uint64
	for k := first; k <= last; k++ {
		mag = mag*10 + digit(k) // at most 19 digits: cannot wrap a uint64
	}
	hi, lo := bits.Mul64(mag, pow10[shift])
	if hi != 0 {
		return 0, ErrOverflow
	}
	mag = lo
	if neg {
		if mag > 1<<63 {
			return 0, ErrOverflow
		}
		return int64(-mag), nil // two's complement: also right for mag == 1<<63
	}
	if mag > math.MaxInt64 {
		return 0, ErrOverflow
	}
	return int64(mag), nil
}

// FormatFixed renders v units of 10^-places as the shortest exact decimal: no exponent,
// no trailing fractional zeros, no decimal point for whole numbers ("1000", "12.5",
// "0.00000001", "-3.25"). The result is valid JSON number text and ParseFixed reads it back.
func FormatFixed(v int64, places int) string {
	if places < 0 || places > 18 {
		panic("money: FormatFixed places out of range")
	}
	return string(appendFixed(nil, v, places))
}

// AppendFixed appends FormatFixed(v, places) to b.
func AppendFixed(b []byte, v int64, places int) []byte { return appendFixed(b, v, places) }

func appendFixed(b []byte, v int64, places int) []byte {
	mag := uint64(v)
	if v < 0 {
		b = append(b, '-')
		mag = uint64(-v) // two's complement: also right for math.MinInt64
	}
	unit := pow10[places]
	b = strconv.AppendUint(b, mag/unit, 10)
	frac := mag % unit
	if frac == 0 {
		return b
	}
	// Zero-pad the fraction to its full width, then drop trailing zeros.
	var buf [20]byte
	d := strconv.AppendUint(buf[:0], frac, 10)
	b = append(b, '.')
	for n := len(d); n < places; n++ {
		b = append(b, '0')
	}
	for len(d) > 0 && d[len(d)-1] == '0' {
		d = d[:len(d)-1]
	}
	return append(b, d...)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func quote(s string) string {
	if len(s) > maxQuoted {
		return strconv.Quote(s[:maxQuoted]) + "…"
	}
	return strconv.Quote(s)
}
