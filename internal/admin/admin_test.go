package admin

import (
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/money"
)

func TestPercentChange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cur, prev int64
		want      string
	}{
		{0, 0, "0.0"},         // nothing in either window
		{5, 0, "100.0"},       // growth from nothing is defined as +100%
		{0, 5, "-100.0"},      // everything gone
		{10, 10, "0.0"},       // flat
		{15, 10, "50.0"},      // growth
		{2, 3, "-33.3"},       // -33.33… rounds to one decimal
		{1, 3, "-66.7"},       // -66.66… rounds away from zero
		{1001, 1000, "0.1"},   // +0.1%
		{20001, 20000, "0.0"}, // +0.005% rounds to 0.0
		{20003, 20000, "0.0"}, // +0.015% rounds to 0.0 (0.15 tenths)
		{2003, 2000, "0.2"},   // +0.15% rounds half away from zero
		{1997, 2000, "-0.2"},  // -0.15% likewise
		{3, 1, "200.0"},
		{1_000_000_000_000_000_000, 1, "99999999999999999900.0"}, // beyond int64 tenths: no overflow
	} {
		got := PercentChange(big.NewInt(tc.cur), big.NewInt(tc.prev)).String()
		if got != tc.want {
			t.Errorf("PercentChange(%d, %d) = %s, want %s", tc.cur, tc.prev, got, tc.want)
		}
	}
}

func TestTotalString(t *testing.T) {
	t.Parallel()
	huge, _ := new(big.Int).SetString("123456789012345678901234", 10) // beyond int64
	for _, tc := range []struct {
		units *big.Int
		want  string
	}{
		{nil, "0"},
		{big.NewInt(0), "0"},
		{big.NewInt(1), "0.00000001"},
		{big.NewInt(int64(money.FromCents(30))), "0.3"},
		{big.NewInt(int64(money.Dollars(1250)) + 50_000_000), "1250.5"},
		{big.NewInt(-int64(money.Dollars(3)) - 25_000_000), "-3.25"},
		{huge, "1234567890123456.78901234"},
	} {
		if got := TotalOf(tc.units).String(); got != tc.want {
			t.Errorf("Total(%v) = %s, want %s", tc.units, got, tc.want)
		}
	}
	sum := TotalOf(big.NewInt(int64(money.FromCents(10)))).Add(TotalOf(big.NewInt(int64(money.FromCents(20)))))
	if sum.String() != "0.3" || sum.Float64() != 0.3 {
		t.Fatalf("0.1 + 0.2 = %s (%v)", sum, sum.Float64())
	}
}

func TestWindow(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 10, 12, 30, 0, 0, time.UTC)
	w := window(now, 0, Week)
	// (now − 7d, now]: now is inside, now − 7d is not.
	in := func(p Period, t time.Time) bool { return !t.Before(p.From) && t.Before(p.To) }
	if !in(w, now) || in(w, now.Add(-Week)) || !in(w, now.Add(-Week+time.Microsecond)) || in(w, now.Add(time.Microsecond)) {
		t.Fatalf("last week %v", w)
	}
	prev := window(now, Week, Week)
	if !in(prev, now.Add(-Week)) || in(prev, now.Add(-2*Week)) || prev.To != w.From {
		t.Fatalf("previous week %v (last week %v)", prev, w)
	}
}

func TestParseAdjustment(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want money.Amount
		err  error
	}{
		{"10", money.Dollars(10), nil},
		{"-0.01", -money.FromCents(1), nil},
		{"12.50", money.FromCents(1250), nil},
		{"1e2", money.Dollars(100), nil},
		{"0", 0, ErrAmountZero},
		{"-0.00", 0, ErrAmountZero},
		{"1.234", 0, ErrAmountInvalid},
		{"0.001", 0, ErrAmountInvalid},
		{"", 0, ErrAmountInvalid},
		{"abc", 0, ErrAmountInvalid},
		{"NaN", 0, ErrAmountInvalid},
		{"1e30", 0, ErrAmountTooLarge},
	} {
		got, err := parseAdjustment(tc.in)
		if !errors.Is(err, tc.err) || got != tc.want {
			t.Errorf("parseAdjustment(%q) = %s, %v; want %s, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestPageArgs(t *testing.T) {
	t.Parallel()
	n := func(v int) *int { return &v }
	for _, tc := range []struct {
		page, limit *int
		wantPage    int
		wantLimit   int
		wantOffset  int64
		err         error
	}{
		{nil, nil, 1, 10, 0, nil},
		{n(3), n(10), 3, 10, 20, nil},
		{n(2), n(100), 2, 100, 100, nil},
		{n(0), nil, 0, 0, 0, ErrPageInvalid},
		{n(-1), nil, 0, 0, 0, ErrPageInvalid},
		{nil, n(0), 0, 0, 0, ErrLimitInvalid},
		{nil, n(101), 0, 0, 0, ErrLimitInvalid},
		{n(2147483647), n(100), 2147483647, 100, 214748364600, nil},
	} {
		page, limit, offset, err := pageArgs(tc.page, tc.limit)
		if !errors.Is(err, tc.err) || page != tc.wantPage || limit != tc.wantLimit || offset != tc.wantOffset {
			t.Errorf("pageArgs(%v, %v) = %d, %d, %d, %v", tc.page, tc.limit, page, limit, offset, err)
		}
	}
	if totalPages(0, 10) != 1 || totalPages(10, 10) != 1 || totalPages(11, 10) != 2 {
		t.Fatal("totalPages")
	}
}

func TestEscapeLike(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"bob":      "bob",
		"a_b":      `a\_b`,
		"100%":     `100\%`,
		`back\sl`:  `back\\sl`,
		"@mail.io": "@mail.io",
	} {
		if got := escapeLike(in); got != want {
			t.Errorf("escapeLike(%q) = %q, want %q", in, got, want)
		}
	}
}
