// Package limits is responsible gambling: the limits a player sets on their
// own play (net loss and stakes per day, week and month), a break, a
// self-exclusion and the reality check.
//
// The rules that refuse a stake are one SQL function,
// fairplay_play_refusal (migration 00015), run inside the statement that
// places a bet and the one that takes a running game's extra stake, so they
// hold on every replica with no extra round trip; Refusal turns its answer
// into the message a player sees. This package owns the rest: how a change
// of limits applies (Change: a tighter limit at once, a looser one after
// Cooldown), what may be set (Parse, the break and exclusion lengths), and
// the Service the API calls.
package limits

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/problem"
)

// Period is a limit's period, counted in UTC.
type Period int

// The periods, shortest first (the order of every array here and of the
// SQL rules).
const (
	Day   Period = iota // a UTC day
	Week                // an ISO week, from Monday
	Month               // a calendar month
)

// Periods are the periods in order.
var Periods = [3]Period{Day, Week, Month}

// String is the period's name in the API: day, week or month.
func (p Period) String() string { return [...]string{"day", "week", "month"}[p] }

// adjective is the period as it reads in a message.
func (p Period) adjective() string { return [...]string{"daily", "weekly", "monthly"}[p] }

// Set is the six limits; 0 is none.
type Set struct {
	Loss  [3]money.Amount // the most the net loss (stakes − payouts) may reach
	Wager [3]money.Amount // the most the stakes may reach
}

// Cooldown is how long a looser limit waits before it applies.
const Cooldown = 24 * time.Hour

// Pending is a looser set of limits waiting out its Cooldown.
type Pending struct {
	Limits Set
	From   time.Time
}

// Usage is what was played in the current period.
type Usage struct {
	Wagered money.Amount
	NetLoss money.Amount // negative after a net win
	Resets  time.Time    // the next period's start
}

// State is a player's settings as they apply at Now (the database's clock,
// the one the rules run on).
type State struct {
	Limits        Set
	Pending       *Pending
	BreakUntil    time.Time // zero: none
	ExcludedUntil time.Time // zero: none
	Permanent     bool      // excluded permanently
	RealityCheck  int       // minutes; 0: off
	Usage         [3]Usage
	Now           time.Time
}

// CanBet reports whether no break or self-exclusion is running.
func (s State) CanBet() bool {
	return !s.Permanent && !s.ExcludedUntil.After(s.Now) && !s.BreakUntil.After(s.Now)
}

// tighter reports whether limit a is at least as strict as b (0: none).
func tighter(a, b money.Amount) bool { return a != 0 && (b == 0 || a <= b) }

// Change is what setting want does to the limits in force now, cur, at
// now, with pend the looser set already waiting (nil when none): each limit
// at least as strict as its current one applies at once, the others keep
// their current value; if any is looser, all of want applies from now +
// Cooldown — or from pend's time, if want is what pend already waits for. A
// change that loosens nothing clears what was pending.
func Change(cur Set, want Set, pend *Pending, now time.Time) (Set, *Pending) {
	apply := cur
	looser := false
	for _, p := range Periods {
		for _, pair := range [][2]*money.Amount{{&apply.Loss[p], &want.Loss[p]}, {&apply.Wager[p], &want.Wager[p]}} {
			if tighter(*pair[1], *pair[0]) {
				*pair[0] = *pair[1]
			} else if *pair[1] != *pair[0] {
				looser = true
			}
		}
	}
	switch {
	case !looser:
		return apply, nil
	case pend != nil && pend.Limits == want:
		return apply, pend
	}
	return apply, &Pending{Limits: want, From: now.Add(Cooldown)}
}

// The lengths a player may choose.
const (
	MinBreakDays = 1
	MaxBreakDays = 42 // six weeks
	// MinRealityCheck and MaxRealityCheck bound the reality check's
	// interval in minutes (0 turns it off).
	MinRealityCheck = 5
	MaxRealityCheck = 1440
)

// Exclusion is a self-exclusion's length.
type Exclusion string

// The self-exclusions a player may choose.
const (
	SixMonths Exclusion = "six_months"
	Forever   Exclusion = "permanent"
)

// Validation messages.
var (
	ErrLimitAmount  = problem.Invalid("A limit is an amount of at least 0.01 with at most two decimal places")
	ErrLimitTooBig  = problem.Invalid("A limit is at most " + Format(maxLimit))
	ErrRealityCheck = problem.Invalid(fmt.Sprintf(
		"The reality check is every %d to %d minutes, or 0 for none", MinRealityCheck, MaxRealityCheck))
	ErrBreakDays = problem.Invalid(fmt.Sprintf("A break lasts %d to %d days", MinBreakDays, MaxBreakDays))
	ErrExclusion = problem.Invalid(`Self-exclusion is "six_months" or "permanent"`)
)

// maxLimit is the largest limit: the most a balance may hold.
const maxLimit = money.Amount(10_000_000_000 * money.Scale)

const cent = money.Amount(money.Scale / 100)

// ParseLimit reads one limit: nil (absent or null) is none, else a
// positive amount in whole cents. A blank string is refused, not read as
// none: a request to set a limit that lost its value must not lift it.
func ParseLimit(s *string) (money.Amount, error) {
	if s == nil {
		return 0, nil
	}
	a, err := money.Parse(strings.TrimSpace(*s))
	switch {
	case err != nil || a <= 0 || a%cent != 0:
		return 0, ErrLimitAmount
	case a > maxLimit:
		return 0, ErrLimitTooBig
	}
	return a, nil
}

// CheckRealityCheck refuses an interval outside the bounds.
func CheckRealityCheck(minutes int) error {
	if minutes != 0 && (minutes < MinRealityCheck || minutes > MaxRealityCheck) {
		return ErrRealityCheck
	}
	return nil
}

// Format writes a limit as the app shows amounts: two decimals.
func Format(a money.Amount) string {
	c := int64(a / cent)
	return fmt.Sprintf("%d.%02d", c/100, c%100)
}

// Refusal turns fairplay_play_refusal's answer (migration 00015) into the
// error a refused stake gets: a 400 whose message says why and until when.
func Refusal(code string) error {
	kind, value, _ := strings.Cut(code, ":")
	when := func() string {
		secs, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			return value
		}
		return time.Unix(secs, 0).UTC().Format("2 January 2006, 15:04 UTC")
	}
	switch kind {
	case "excluded":
		if value == "permanent" {
			return problem.Invalid("You have excluded yourself from betting permanently")
		}
		return problem.Invalid("You have excluded yourself from betting until " + when())
	case "break":
		return problem.Invalid("You are taking a break from betting until " + when())
	}
	what, period, ok := strings.Cut(kind, "_")
	limit, err := strconv.ParseInt(value, 10, 64)
	p := map[string]Period{"day": Day, "week": Week, "month": Month}
	per, known := p[period]
	if !ok || err != nil || !known {
		return fmt.Errorf("limits: unknown refusal %q", code)
	}
	switch what {
	case "loss":
		return problem.Invalid(fmt.Sprintf("This bet could take your net loss past your %s loss limit of %s",
			per.adjective(), Format(money.Amount(limit))))
	case "wager":
		return problem.Invalid(fmt.Sprintf("This bet would take your wagers past your %s wager limit of %s",
			per.adjective(), Format(money.Amount(limit))))
	}
	return fmt.Errorf("limits: unknown refusal %q", code)
}

// RealityCheck is a session's play so far.
type RealityCheck struct {
	SignedInAt time.Time
	Bets       int64
	Wagered    money.Amount
	Net        money.Amount // payouts − stakes
	Interval   int          // minutes; 0: off
}

// Store keeps the settings on the player's row (see migration 00015).
type Store interface {
	// Get returns the player's settings (ErrNoPlayer for an unknown or
	// deleted one).
	Get(ctx context.Context, userID uuid.UUID) (State, error)
	// SetLimits runs change on the settings under the player's row lock and
	// stores the limits, the pending set and the reality check it returns.
	SetLimits(ctx context.Context, userID uuid.UUID,
		change func(State) (Set, *Pending, int, error)) (State, error)
	// ExtendBreak makes the break last at least until now + d.
	ExtendBreak(ctx context.Context, userID uuid.UUID, d time.Duration) (State, error)
	// Exclude makes the self-exclusion last at least six months from now,
	// or forever.
	Exclude(ctx context.Context, userID uuid.UUID, e Exclusion) (State, error)
	// RealityCheck sums the bets the player placed since the session signed
	// in.
	RealityCheck(ctx context.Context, userID, sessionID uuid.UUID) (RealityCheck, error)
}

// ErrNoPlayer answers for an unknown or deleted player.
var ErrNoPlayer = problem.NotFound("User not found")

// Service is responsible gambling's API.
type Service struct{ store Store }

// NewService returns the service on store.
func NewService(store Store) *Service { return &Service{store: store} }

// Get returns the player's settings.
func (s *Service) Get(ctx context.Context, userID uuid.UUID) (State, error) {
	return s.store.Get(ctx, userID)
}

// Wanted is a SetLimits request as the API received it.
type Wanted struct {
	Loss, Wager  [3]*string
	RealityCheck int
}

// SetLimits sets the player's limits (see Change) and reality check; bad
// input changes nothing.
func (s *Service) SetLimits(ctx context.Context, userID uuid.UUID, w Wanted) (State, error) {
	var want Set
	for _, p := range Periods {
		var err error
		if want.Loss[p], err = ParseLimit(w.Loss[p]); err != nil {
			return State{}, err
		}
		if want.Wager[p], err = ParseLimit(w.Wager[p]); err != nil {
			return State{}, err
		}
	}
	if err := CheckRealityCheck(w.RealityCheck); err != nil {
		return State{}, err
	}
	return s.store.SetLimits(ctx, userID, func(st State) (Set, *Pending, int, error) {
		apply, pend := Change(st.Limits, want, st.Pending, st.Now)
		return apply, pend, w.RealityCheck, nil
	})
}

// TakeBreak starts (or extends) a break of days days.
func (s *Service) TakeBreak(ctx context.Context, userID uuid.UUID, days int) (State, error) {
	if days < MinBreakDays || days > MaxBreakDays {
		return State{}, ErrBreakDays
	}
	return s.store.ExtendBreak(ctx, userID, time.Duration(days)*24*time.Hour)
}

// Exclude starts (or extends) a self-exclusion.
func (s *Service) Exclude(ctx context.Context, userID uuid.UUID, e Exclusion) (State, error) {
	if !e.Valid() {
		return State{}, ErrExclusion
	}
	return s.store.Exclude(ctx, userID, e)
}

// Valid reports whether e is a self-exclusion's length.
func (e Exclusion) Valid() bool { return e == SixMonths || e == Forever }

// RealityCheck returns the session's play so far.
func (s *Service) RealityCheck(ctx context.Context, userID, sessionID uuid.UUID) (RealityCheck, error) {
	if sessionID == uuid.Nil {
		return RealityCheck{}, errors.New("limits: reality check without a session")
	}
	return s.store.RealityCheck(ctx, userID, sessionID)
}

// NextPeriod is when the period p containing now ends, in UTC: the periods
// of Postgres' date_trunc('day'|'week'|'month', …, 'UTC'), which the SQL
// rules count in (a week starts on Monday).
func NextPeriod(p Period, now time.Time) time.Time {
	y, m, d := now.UTC().Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	switch p {
	case Week:
		monday := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
		return monday.AddDate(0, 0, 7)
	case Month:
		return time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC)
	}
	return day.AddDate(0, 0, 1)
}
