package limits

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/problem"
)

func usd(c int64) money.Amount { return money.FromCents(c) }

func TestChange(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	later := now.Add(Cooldown)
	var none Set
	daily := func(loss, wager int64) Set {
		var s Set
		s.Loss[Day], s.Wager[Day] = usd(loss), usd(wager)
		return s
	}
	earlier := &Pending{Limits: daily(0, 0), From: now.Add(3 * time.Hour)}
	for _, tc := range []struct {
		name      string
		cur, want Set
		pend      *Pending
		apply     Set
		pending   *Pending
	}{
		{"a first limit applies at once", none, daily(5000, 0), nil, daily(5000, 0), nil},
		{"a tighter one applies at once", daily(5000, 9000), daily(2000, 8000), nil, daily(2000, 8000), nil},
		{"the same limits change nothing", daily(5000, 9000), daily(5000, 9000), nil, daily(5000, 9000), nil},
		{"a looser one waits a day", daily(5000, 0), daily(7000, 0), nil, daily(5000, 0),
			&Pending{Limits: daily(7000, 0), From: later}},
		{"removing a limit is looser", daily(5000, 0), none, nil, daily(5000, 0), &Pending{Limits: none, From: later}},
		{"tighter parts apply at once, the looser part waits", daily(5000, 9000), daily(7000, 1000), nil,
			daily(5000, 1000), &Pending{Limits: daily(7000, 1000), From: later}},
		{"asking again for what waits keeps its time", daily(5000, 0), daily(0, 0), earlier, daily(5000, 0), earlier},
		{"asking for something else looser restarts the wait", daily(5000, 0), daily(6000, 0), earlier, daily(5000, 0),
			&Pending{Limits: daily(6000, 0), From: later}},
		{"a change that loosens nothing clears what waits", daily(5000, 0), daily(4000, 0), earlier, daily(4000, 0), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apply, pend := Change(tc.cur, tc.want, tc.pend, now)
			if apply != tc.apply {
				t.Errorf("applies %+v, want %+v", apply, tc.apply)
			}
			switch {
			case (pend == nil) != (tc.pending == nil):
				t.Errorf("pending %+v, want %+v", pend, tc.pending)
			case pend != nil && (pend.Limits != tc.pending.Limits || !pend.From.Equal(tc.pending.From)):
				t.Errorf("pending %+v, want %+v", *pend, *tc.pending)
			}
		})
	}
}

func TestChangeEveryPeriodAndKind(t *testing.T) {
	now := time.Unix(1_800_000_000, 0).UTC()
	for _, p := range Periods {
		for _, loss := range []bool{true, false} {
			var cur, tight, loose Set
			field := func(s *Set) *money.Amount {
				if loss {
					return &s.Loss[p]
				}
				return &s.Wager[p]
			}
			*field(&cur), *field(&tight), *field(&loose) = usd(1000), usd(999), usd(1001)
			if apply, pend := Change(cur, tight, nil, now); apply != tight || pend != nil {
				t.Errorf("%s loss=%v: tighter gave %+v, %+v", p, loss, apply, pend)
			}
			if apply, pend := Change(cur, loose, nil, now); apply != cur || pend == nil || pend.Limits != loose {
				t.Errorf("%s loss=%v: looser gave %+v, %+v", p, loss, apply, pend)
			}
		}
	}
}

func TestParseLimit(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		in   *string
		want money.Amount
		err  error
	}{
		{nil, 0, nil},
		{str(""), 0, ErrLimitAmount},
		{str("  "), 0, ErrLimitAmount},
		{str("50"), usd(5000), nil},
		{str(" 12.34 "), usd(1234), nil},
		{str("0.01"), usd(1), nil},
		{str("10000000000"), usd(1_000_000_000_000), nil},
		{str("10000000000.01"), 0, ErrLimitTooBig},
		{str("0"), 0, ErrLimitAmount},
		{str("-5"), 0, ErrLimitAmount},
		{str("1.234"), 0, ErrLimitAmount},
		{str("ten"), 0, ErrLimitAmount},
	} {
		got, err := ParseLimit(tc.in)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("ParseLimit(%v) = %v, %v; want %v, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestCheckRealityCheck(t *testing.T) {
	for m, ok := range map[int]bool{0: true, 5: true, 30: true, 1440: true, 4: false, 1441: false, -5: false} {
		if err := CheckRealityCheck(m); (err == nil) != ok {
			t.Errorf("CheckRealityCheck(%d) = %v", m, err)
		}
	}
}

func TestRefusal(t *testing.T) {
	for code, want := range map[string]string{
		"excluded:permanent":      "You have excluded yourself from betting permanently",
		"excluded:1800000000":     "You have excluded yourself from betting until 15 January 2027, 08:00 UTC",
		"break:1800000000":        "You are taking a break from betting until 15 January 2027, 08:00 UTC",
		"loss_day:5000000000":     "This bet could take your net loss past your daily loss limit of 50.00",
		"loss_week:1234567890000": "This bet could take your net loss past your weekly loss limit of 12345.67",
		"wager_month:100000000":   "This bet would take your wagers past your monthly wager limit of 1.00",
	} {
		err := Refusal(code)
		var pe *problem.Error
		if !errors.As(err, &pe) || pe.Kind != problem.KindInvalid || pe.Message != want {
			t.Errorf("Refusal(%q) = %v, want the invalid-request %q", code, err, want)
		}
	}
	for _, code := range []string{"", "limit", "loss_year:5", "loss_day:x", "profit_day:5", "busy"} {
		err := Refusal(code)
		var pe *problem.Error
		if err == nil || errors.As(err, &pe) {
			t.Errorf("Refusal(%q) = %v, want an internal error (an unknown answer is a bug, not a message)", code, err)
		}
	}
}

func TestNextPeriod(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		p        Period
		now, end string
	}{
		{Day, "2026-11-24T12:00:00Z", "2026-11-25T00:00:00Z"},
		{Day, "2026-11-24T23:59:59Z", "2026-11-25T00:00:00Z"},
		{Day, "2026-11-25T00:00:00Z", "2026-11-26T00:00:00Z"},
		{Day, "2026-11-24T23:30:00-05:00", "2026-11-26T00:00:00Z"}, // 04:30 UTC on the 25th
		{Week, "2026-11-24T12:00:00Z", "2026-11-30T00:00:00Z"},     // a Tuesday
		{Week, "2026-11-29T23:59:59Z", "2026-11-30T00:00:00Z"},     // Sunday
		{Week, "2026-11-30T00:00:00Z", "2026-12-07T00:00:00Z"},     // Monday
		{Week, "2026-12-31T10:00:00Z", "2027-01-04T00:00:00Z"},
		{Month, "2026-11-24T12:00:00Z", "2026-12-01T00:00:00Z"},
		{Month, "2026-12-31T23:59:59Z", "2027-01-01T00:00:00Z"},
		{Month, "2028-02-29T12:00:00Z", "2028-03-01T00:00:00Z"},
	} {
		if got := NextPeriod(tc.p, at(tc.now)); !got.Equal(at(tc.end)) {
			t.Errorf("NextPeriod(%s, %s) = %s, want %s", tc.p, tc.now, got, tc.end)
		}
	}
}

// recordingStore counts the calls that would change something.
type recordingStore struct {
	Store
	writes int
	state  State
}

func (s *recordingStore) SetLimits(_ context.Context, _ uuid.UUID, change func(State) (Set, *Pending, int, error)) (State, error) {
	s.writes++
	set, pend, rc, err := change(s.state)
	if err != nil {
		return State{}, err
	}
	s.state.Limits, s.state.Pending, s.state.RealityCheck = set, pend, rc
	return s.state, nil
}

func (s *recordingStore) ExtendBreak(context.Context, uuid.UUID, time.Duration) (State, error) {
	s.writes++
	return s.state, nil
}

func (s *recordingStore) Exclude(context.Context, uuid.UUID, Exclusion) (State, error) {
	s.writes++
	return s.state, nil
}

func TestServiceRefusesBadInputBeforeTheStore(t *testing.T) {
	ctx, id := context.Background(), uuid.New()
	bad, good := "1.001", "20"
	st := &recordingStore{state: State{Now: time.Unix(1_800_000_000, 0)}}
	svc := NewService(st)
	for name, call := range map[string]func() error{
		"a limit with three decimals": func() error {
			_, err := svc.SetLimits(ctx, id, Wanted{Loss: [3]*string{&good, nil, &bad}})
			return err
		},
		"a reality check of 4 minutes": func() error {
			_, err := svc.SetLimits(ctx, id, Wanted{Wager: [3]*string{&good}, RealityCheck: 4})
			return err
		},
		"a break of 0 days":  func() error { _, err := svc.TakeBreak(ctx, id, 0); return err },
		"a break of 43 days": func() error { _, err := svc.TakeBreak(ctx, id, 43); return err },
		"a year's exclusion": func() error { _, err := svc.Exclude(ctx, id, "one_year"); return err },
	} {
		var pe *problem.Error
		if err := call(); !errors.As(err, &pe) || pe.Kind != problem.KindInvalid {
			t.Errorf("%s: %v, want an invalid-request error", name, err)
		}
	}
	if st.writes != 0 {
		t.Fatalf("bad input reached the store %d times", st.writes)
	}

	got, err := svc.SetLimits(ctx, id, Wanted{Loss: [3]*string{&good}, RealityCheck: 30})
	if err != nil || got.Limits.Loss[Day] != usd(2000) || got.RealityCheck != 30 || got.Pending != nil {
		t.Fatalf("SetLimits = %+v, %v", got, err)
	}
	if _, err := svc.TakeBreak(ctx, id, 42); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Exclude(ctx, id, Forever); err != nil {
		t.Fatal(err)
	}
	if st.writes != 3 {
		t.Fatalf("good input reached the store %d times, want 3", st.writes)
	}
}

func TestCanBet(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		name string
		s    State
		can  bool
	}{
		{"nothing set", State{Now: now}, true},
		{"a break running", State{Now: now, BreakUntil: now.Add(time.Second)}, false},
		{"a break over", State{Now: now, BreakUntil: now}, true},
		{"excluded", State{Now: now, ExcludedUntil: now.Add(time.Hour)}, false},
		{"an exclusion over", State{Now: now, ExcludedUntil: now.Add(-time.Hour)}, true},
		{"excluded for good", State{Now: now, Permanent: true}, false},
	} {
		if got := tc.s.CanBet(); got != tc.can {
			t.Errorf("%s: CanBet = %v", tc.name, got)
		}
	}
}
