package money

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Amount
		err  error
	}{
		{in: "0", want: 0},
		{in: "-0", want: 0},
		{in: "1", want: 100_000_000},
		{in: "0.1", want: 10_000_000},
		{in: "12.50", want: 1_250_000_000},
		{in: "1e2", want: 10_000_000_000},
		{in: "1E2", want: 10_000_000_000},
		{in: "1e+2", want: 10_000_000_000},
		{in: "1.5E-3", want: 150_000},
		{in: "0.00000001", want: 1},
		{in: "1e-8", want: 1},
		{in: "-3.25", want: -325_000_000},
		{in: "12.500000000000", want: 1_250_000_000}, // trailing zeros are not precision
		{in: "0.000000000", want: 0},
		{in: "0e-999999999999999999999", want: 0},
		{in: "0e999999999999999999999", want: 0},
		{in: "100000000000e-11", want: 100_000_000},
		{in: "0.00000000000001e6", want: 1},
		{in: "92233720368.54775807", want: math.MaxInt64},
		{in: "-92233720368.54775808", want: math.MinInt64},
		{in: "9223372036854775807e-8", want: math.MaxInt64},
		{in: "922337203685477580700000e-13", want: math.MaxInt64},

		{in: "0.000000001", err: ErrPrecision},
		{in: "1e-9", err: ErrPrecision},
		{in: "1.000000001", err: ErrPrecision},
		{in: "-0.123456789", err: ErrPrecision},
		{in: "1e-99999999999999999999", err: ErrPrecision},
		{in: "92233720368.54775808", err: ErrOverflow},
		{in: "-92233720368.54775809", err: ErrOverflow},
		{in: "1e11", err: ErrOverflow},
		{in: "1e99999999999999999999", err: ErrOverflow},
		{in: "100000000000000000000", err: ErrOverflow},
		{in: "18446744073709551616", err: ErrOverflow},

		{in: "", err: ErrSyntax},
		{in: "-", err: ErrSyntax},
		{in: "+1", err: ErrSyntax},
		{in: "01", err: ErrSyntax},
		{in: "00", err: ErrSyntax},
		{in: ".5", err: ErrSyntax},
		{in: "5.", err: ErrSyntax},
		{in: "1e", err: ErrSyntax},
		{in: "1e+", err: ErrSyntax},
		{in: "1.e2", err: ErrSyntax},
		{in: " 1", err: ErrSyntax},
		{in: "1 ", err: ErrSyntax},
		{in: "1,5", err: ErrSyntax},
		{in: "0x10", err: ErrSyntax},
		{in: "NaN", err: ErrSyntax},
		{in: "Infinity", err: ErrSyntax},
		{in: "-Inf", err: ErrSyntax},
		{in: `"1"`, err: ErrSyntax},
		{in: "1_000", err: ErrSyntax},
		{in: "١", err: ErrSyntax}, // Arabic-Indic digit one
		{in: "--1", err: ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tt.in)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Parse(%q) error = %v, want %v", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Parse(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseErrorQuotesBoundedInput(t *testing.T) {
	t.Parallel()
	_, err := Parse(strings.Repeat("9", 10_000))
	if !errors.Is(err, ErrOverflow) {
		t.Fatalf("err = %v, want ErrOverflow", err)
	}
	if len(err.Error()) > 200 {
		t.Fatalf("error text is %d bytes long; the input must be truncated", len(err.Error()))
	}
}

func TestParseBet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		want  Amount
		cause error
	}{
		{in: "1", want: Dollars(1)},
		{in: "0.1", want: FromCents(10)},
		{in: "0.00000001", want: 1},
		{in: "0", cause: errNotPositive},
		{in: "-0", cause: errNotPositive},
		{in: "-1", cause: errNotPositive},
		{in: "0.000000001", cause: ErrPrecision},
		{in: "1e20", cause: ErrOverflow},
		{in: "abc", cause: ErrSyntax},
		{in: "NaN", cause: ErrSyntax},
		{in: "", cause: ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseBet(tt.in)
			if tt.cause == nil {
				if err != nil || got != tt.want {
					t.Fatalf("ParseBet(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, ErrInvalidBet) || !errors.Is(err, tt.cause) {
				t.Fatalf("ParseBet(%q) error = %v, want ErrInvalidBet wrapping %v", tt.in, err, tt.cause)
			}
			if err.Error() != "Please enter a valid bet amount" {
				t.Fatalf("ParseBet(%q) error text = %q", tt.in, err.Error())
			}
		})
	}
}

func TestAmountString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   Amount
		want string
	}{
		{0, "0"},
		{Dollars(1000), "1000"},
		{1_250_000_000, "12.5"},
		{1, "0.00000001"},
		{-325_000_000, "-3.25"},
		{-1, "-0.00000001"},
		{10_000_000, "0.1"},
		{123_456_789, "1.23456789"},
		{math.MaxInt64, "92233720368.54775807"},
		{math.MinInt64, "-92233720368.54775808"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			if got := tt.in.String(); got != tt.want {
				t.Fatalf("Amount(%d).String() = %q, want %q", int64(tt.in), got, tt.want)
			}
		})
	}
}

func TestHelpers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  Amount
		want Amount
	}{
		{"FromCents(1)", FromCents(1), 1_000_000},
		{"FromCents(-250)", FromCents(-250), -250_000_000},
		{"Dollars(1000)", Dollars(1000), 100_000_000_000},
		{"Dollars(-2)", Dollars(-2), -200_000_000},
		{"Dollars(max)", Dollars(math.MaxInt64 / Scale), 92233720368 * Scale},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.got != tt.want {
				t.Fatalf("%s = %d, want %d", tt.name, tt.got, tt.want)
			}
		})
	}
}

func TestHelpersPanicOnOverflow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		f    func()
	}{
		{"Dollars(max+1)", func() { Dollars(math.MaxInt64/Scale + 1) }},
		{"Dollars(min-1)", func() { Dollars(math.MinInt64/Scale - 1) }},
		{"FromCents(max)", func() { FromCents(math.MaxInt64) }},
		{"FromCents(min)", func() { FromCents(math.MinInt64) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			defer func() {
				if recover() == nil {
					t.Fatalf("%s did not panic", tt.name)
				}
			}()
			tt.f()
		})
	}
}

func TestAddSub(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		a, b   Amount
		add    Amount
		addErr bool
		sub    Amount
		subErr bool
	}{
		{name: "small", a: 5, b: 3, add: 8, sub: 2},
		{name: "negative", a: -5, b: 3, add: -2, sub: -8},
		{name: "max+1", a: math.MaxInt64, b: 1, addErr: true, sub: math.MaxInt64 - 1},
		{name: "min-1", a: math.MinInt64, b: 1, add: math.MinInt64 + 1, subErr: true},
		{name: "max-(-1)", a: math.MaxInt64, b: -1, add: math.MaxInt64 - 1, subErr: true},
		{name: "min+(-1)", a: math.MinInt64, b: -1, addErr: true, sub: math.MinInt64 + 1},
		{name: "0-min", a: 0, b: math.MinInt64, add: math.MinInt64, subErr: true},
		{name: "-1-min", a: -1, b: math.MinInt64, addErr: true, sub: math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.a.Add(tt.b)
			if tt.addErr != (err != nil) || (err != nil && !errors.Is(err, ErrOverflow)) || (err == nil && got != tt.add) {
				t.Errorf("%d.Add(%d) = %d, %v", tt.a, tt.b, got, err)
			}
			got, err = tt.a.Sub(tt.b)
			if tt.subErr != (err != nil) || (err != nil && !errors.Is(err, ErrOverflow)) || (err == nil && got != tt.sub) {
				t.Errorf("%d.Sub(%d) = %d, %v", tt.a, tt.b, got, err)
			}
		})
	}
}

func TestMultiplier(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Multiplier
		str  string
		err  error
	}{
		{in: "3.96", want: 39600, str: "3.96"},
		{in: "3203384.8", want: 32033848000, str: "3203384.8"},
		{in: "1.0102", want: 10102, str: "1.0102"},
		{in: "1", want: One, str: "1"},
		{in: "0", want: 0, str: "0"},
		{in: "2.5e1", want: 250_000, str: "25"},
		{in: "1000", want: 10_000_000, str: "1000"},
		{in: "0.0001", want: 1, str: "0.0001"},
		{in: "1.00001", err: ErrPrecision},
		{in: "-1", err: ErrNegative},
		{in: "x", err: ErrSyntax},
		{in: "1e20", err: ErrOverflow},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseMultiplier(tt.in)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("ParseMultiplier(%q) error = %v, want %v", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseMultiplier(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
			if s := got.String(); s != tt.str {
				t.Fatalf("String() = %q, want %q", s, tt.str)
			}
			if f, _ := strconv.ParseFloat(tt.str, 64); got.Float64() != f {
				t.Fatalf("Float64() = %v, want %v", got.Float64(), f)
			}
		})
	}
}

func TestMulFloor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a    Amount
		m    Multiplier
		want Amount
		err  bool
	}{
		{name: "1$ x 3.96", a: Dollars(1), m: 39600, want: 396_000_000},
		{name: "unit x 1.9999 floors", a: 1, m: 19999, want: 1},
		{name: "3 units x 0.3333 floors", a: 3, m: 3333, want: 0},
		{name: "0.1$ x 0.2", a: FromCents(10), m: 2000, want: 2_000_000},
		{name: "12.34567891 x 1.03", a: 1_234_567_891, m: 10300, want: 1_271_604_927}, // 1271604927.73
		{name: "blackjack 2.5", a: 333, m: 25000, want: 832},                          // 832.5
		{name: "zero multiplier", a: Dollars(5), m: 0, want: 0},
		{name: "max expert", a: Dollars(1000), m: 32033848000, want: 320_338_480_000_000_000},
		{name: "exact fit", a: math.MaxInt64, m: One, want: math.MaxInt64},
		{name: "overflow by one", a: math.MaxInt64, m: One + 1, err: true},
		{name: "huge product high word", a: math.MaxInt64, m: math.MaxInt64, err: true},
		{name: "negative truncates toward zero", a: -3, m: 15000, want: -4}, // -4.5
		{name: "min int fits", a: math.MinInt64, m: One, want: math.MinInt64},
		{name: "negative multiplier", a: 3, m: -15000, want: -4},
		{name: "both negative", a: math.MinInt64, m: -One, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := MulFloor(tt.a, tt.m)
			if tt.err {
				if !errors.Is(err, ErrOverflow) {
					t.Fatalf("MulFloor(%d, %d) = %d, %v; want ErrOverflow", tt.a, tt.m, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("MulFloor(%d, %d) = %d, %v; want %d", tt.a, tt.m, got, err, tt.want)
			}
		})
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	type payload struct {
		Bet  Amount     `json:"bet"`
		Mult Multiplier `json:"mult"`
	}
	tests := []struct {
		in      string
		want    payload
		out     string
		wantErr bool
	}{
		{in: `{"bet":0.1,"mult":3.96}`, want: payload{10_000_000, 39600}, out: `{"bet":0.1,"mult":3.96}`},
		{in: `{"bet":1e2,"mult":1}`, want: payload{Dollars(100), One}, out: `{"bet":100,"mult":1}`},
		{in: `{"bet":-3.25,"mult":0}`, want: payload{-325_000_000, 0}, out: `{"bet":-3.25,"mult":0}`},
		{in: `{"bet":null}`, want: payload{}, out: `{"bet":0,"mult":0}`},
		{in: `{"bet":"1"}`, wantErr: true},
		{in: `{"bet":0.123456789}`, wantErr: true},
		{in: `{"mult":-2}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			var p payload
			err := json.Unmarshal([]byte(tt.in), &p)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Unmarshal(%s) succeeded with %+v", tt.in, p)
				}
				return
			}
			if err != nil || p != tt.want {
				t.Fatalf("Unmarshal(%s) = %+v, %v; want %+v", tt.in, p, err, tt.want)
			}
			out, err := json.Marshal(p)
			if err != nil || string(out) != tt.out {
				t.Fatalf("Marshal = %s, %v; want %s", out, err, tt.out)
			}
		})
	}
}

func TestFloat64(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   Amount
		want float64
	}{
		{FromCents(10), 0.1},
		{Dollars(-3), -3},
		{1, 1e-8},
	}
	for _, tt := range tests {
		if got := tt.in.Float64(); got != tt.want {
			t.Errorf("%v.Float64() = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// Float64 is the float64 nearest to the amount's exact decimal text, on
// its fast path (|a| ≤ 2^53) as beyond it: compared with parsing the text
// over every magnitude and at the path's edges.
func TestFloat64IsItsTextParsed(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(18, 2026))
	vals := []int64{0, 1, -1, Scale - 1, Scale + 1, 1<<53 - 1, 1 << 53, 1<<53 + 1, -1 << 53, -1<<53 - 1,
		math.MaxInt64, math.MinInt64, 12345678901234567, 99999999, 333333333}
	for range 200_000 {
		vals = append(vals, randomInt64(r))
	}
	for _, v := range vals {
		a := Amount(v)
		want, err := strconv.ParseFloat(a.String(), 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Float64(); got != want {
			t.Fatalf("%v.Float64() = %v, its text parses to %v", a, got, want)
		}
	}
}

// randomInt64 returns values spread over every magnitude, not just huge ones.
func randomInt64(r *rand.Rand) int64 {
	v := int64(r.Uint64() >> r.IntN(64))
	if r.IntN(2) == 0 {
		v = -v
	}
	return v
}

// TestPropertyRoundTrip checks String→Parse and the exponent forms of the same value.
func TestPropertyRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 20_000 {
		a := Amount(randomInt64(r))
		s := a.String()
		got, err := Parse(s)
		if err != nil || got != a {
			t.Fatalf("Parse(%q) = %d, %v; want %d", s, got, err, a)
		}
		// The same value written as integer units with an e-8 exponent, and shifted by k.
		units := strconv.FormatInt(int64(a), 10)
		k := r.IntN(5)
		alt := units + strings.Repeat("0", k) + "e-" + strconv.Itoa(8+k)
		if a == 0 {
			alt = "0e-3"
		}
		if got, err := Parse(alt); err != nil || got != a {
			t.Fatalf("Parse(%q) = %d, %v; want %d", alt, got, err, a)
		}
		if m := Multiplier(a); m >= 0 {
			if got, err := ParseMultiplier(m.String()); err != nil || got != m {
				t.Fatalf("ParseMultiplier(%q) = %d, %v; want %d", m.String(), got, err, m)
			}
		}
	}
}

// TestPropertyArithmetic checks Add, Sub and MulFloor against math/big.
func TestPropertyArithmetic(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for range 50_000 {
		a, b := randomInt64(r), randomInt64(r)
		checkAgainstBig(t, "Add", new(big.Int).Add(big.NewInt(a), big.NewInt(b)), func() (Amount, error) { return Amount(a).Add(Amount(b)) })
		checkAgainstBig(t, "Sub", new(big.Int).Sub(big.NewInt(a), big.NewInt(b)), func() (Amount, error) { return Amount(a).Sub(Amount(b)) })
		checkAgainstBig(t, "MulFloor", mulFloorBig(a, b), func() (Amount, error) { return MulFloor(Amount(a), Multiplier(b)) })
	}
}

func checkAgainstBig(t *testing.T, op string, want *big.Int, f func() (Amount, error)) {
	t.Helper()
	got, err := f()
	if !want.IsInt64() {
		if !errors.Is(err, ErrOverflow) {
			t.Fatalf("%s = %d, %v; want ErrOverflow (exact %s)", op, got, err, want)
		}
		return
	}
	if err != nil || int64(got) != want.Int64() {
		t.Fatalf("%s = %d, %v; want %s", op, got, err, want)
	}
}

// mulFloorBig is the reference for MulFloor: a*m/10^4 truncated toward zero.
func mulFloorBig(a, m int64) *big.Int {
	p := new(big.Int).Mul(big.NewInt(a), big.NewInt(m))
	return p.Quo(p, big.NewInt(MultiplierScale))
}

// jsonNumber is the RFC 8259 number grammar, the reference for what Parse accepts.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else {
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start || s[start] == '0' {
			return false
		}
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"0", "-0", "1", "0.1", "12.50", "1e2", "1.5E-3", "-3.25", "0.00000001", "1e-9",
		"92233720368.54775807", "-92233720368.54775808", "92233720368.54775808", "1e999999",
		"NaN", "Infinity", "", "-", "01", ".5", "5.", "1e", "+1", "0e-99999999999999999999",
	} {
		f.Add(s)
	}
	scale := big.NewRat(Scale, 1)
	f.Fuzz(func(t *testing.T, s string) {
		a, err := Parse(s)
		if !isJSONNumber(s) {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("Parse(%q) = %d, %v; want ErrSyntax", s, a, err)
			}
			return
		}
		if errors.Is(err, ErrSyntax) {
			t.Fatalf("Parse(%q): valid JSON number rejected as %v", s, err)
		}
		if err == nil {
			// Round trip through the canonical text.
			back, err2 := Parse(a.String())
			if err2 != nil || back != a {
				t.Fatalf("Parse(%q).String() = %q does not parse back: %d, %v", s, a.String(), back, err2)
			}
		}
		// Compare with math/big whenever the exponent is small enough for big.Rat to build
		// the value cheaply (a huge exponent would make it allocate 10^exp).
		if len(s) > 2000 {
			return
		}
		if e := strings.IndexAny(s, "eE"); e >= 0 {
			exp, perr := strconv.Atoi(s[e+1:])
			if perr != nil || exp > 2000 || exp < -2000 {
				return
			}
		}
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("big.Rat rejects JSON number %q", s)
		}
		r.Mul(r, scale)
		switch {
		case !r.IsInt():
			if !errors.Is(err, ErrPrecision) {
				t.Fatalf("Parse(%q) = %d, %v; want ErrPrecision (exact %s units)", s, a, err, r.FloatString(20))
			}
		case !r.Num().IsInt64():
			if !errors.Is(err, ErrOverflow) {
				t.Fatalf("Parse(%q) = %d, %v; want ErrOverflow (exact %s units)", s, a, err, r.Num())
			}
		default:
			if err != nil || int64(a) != r.Num().Int64() {
				t.Fatalf("Parse(%q) = %d, %v; want %s", s, a, err, r.Num())
			}
		}
	})
}

func FuzzMulFloor(f *testing.F) {
	f.Add(int64(100_000_000), int64(39600))
	f.Add(int64(math.MaxInt64), int64(MultiplierScale))
	f.Add(int64(math.MinInt64), int64(-1))
	f.Add(int64(-3), int64(15000))
	f.Fuzz(func(t *testing.T, a, m int64) {
		checkAgainstBig(t, "MulFloor", mulFloorBig(a, m), func() (Amount, error) { return MulFloor(Amount(a), Multiplier(m)) })
	})
}

func TestMulFloorCapped(t *testing.T) {
	limit := Dollars(1_000_000)
	for _, c := range []struct {
		a    Amount
		m    Multiplier
		want Amount
	}{
		{FromCents(250), 39600, FromCents(990)},                        // 2.50 × 3.96
		{1, 5000, 0},                                                   // rounds down
		{Dollars(10_000), 32033848000, limit},                          // pump expert's top step, capped
		{Amount(math.MaxInt64), Multiplier(math.MaxInt64), limit},      // the 128-bit product, capped
		{Dollars(1_000), 10_000 * MultiplierScale, Dollars(1_000_000)}, // exactly the limit
		{0, One, 0},
		{-1, One, 0},
		{Dollars(1), -1, 0},
	} {
		if got := MulFloorCapped(c.a, c.m, limit); got != c.want {
			t.Errorf("MulFloorCapped(%s, %s, %s) = %s, want %s", c.a, c.m, limit, got, c.want)
		}
		if c.a > 0 && c.m > 0 {
			if exact, err := MulFloor(c.a, c.m); err == nil && exact < limit && exact != MulFloorCapped(c.a, c.m, limit) {
				t.Errorf("under the limit MulFloorCapped differs from MulFloor for %s × %s", c.a, c.m)
			}
		}
	}
}
