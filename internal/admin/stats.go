package admin

import (
	"context"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/money"
)

// The statistics' time windows. Each ends at the request's time (the
// service's clock) and includes it: "last week" is (now − 7 days, now].
// Percent changes compare a window with the one of the same length just
// before it, e.g. (now − 14 days, now − 7 days].
const (
	Week  = 7 * 24 * time.Hour
	Month = 30 * 24 * time.Hour
	// ActivityWindow is the span of the per-game activity figures.
	ActivityWindow = 24 * time.Hour
	// ActiveWindow is how recently a player must have bet to count as active.
	ActiveWindow = 15 * time.Minute
)

// window returns the d-long window that ends ago before now, (now − ago − d,
// now − ago], as the half-open Period [from + 1µs, to + 1µs): timestamps
// have microsecond resolution, so the two are the same set.
func window(now time.Time, ago, d time.Duration) Period {
	end := now.Add(-ago).Add(time.Microsecond)
	return Period{From: end.Add(-d), To: end}
}

// Total is an exact sum of money in units of 1e-8 dollars (money.Amount's
// unit). Unlike money.Amount it cannot overflow: ten million large bets add
// up to more than an int64 holds. The zero value is zero.
type Total struct{ units *big.Int }

// TotalOf returns the sum of units 1e-8 dollars; nil is zero.
func TotalOf(units *big.Int) Total {
	if units == nil {
		return Total{}
	}
	return Total{units: new(big.Int).Set(units)}
}

// Units returns the sum in 1e-8 dollars (a new value the caller may keep).
func (t Total) Units() *big.Int {
	if t.units == nil {
		return new(big.Int)
	}
	return new(big.Int).Set(t.units)
}

// Add returns t + u.
func (t Total) Add(u Total) Total { return Total{units: new(big.Int).Add(t.Units(), u.Units())} }

// String returns the exact dollars as the shortest decimal text, like
// money.Amount.String: "1250.5", "0", "0.00000001".
func (t Total) String() string {
	s := formatScaled(t.Units(), money.Decimals)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// Float64 returns the dollars as the nearest float64, for metrics only.
func (t Total) Float64() float64 {
	f, _ := strconv.ParseFloat(t.String(), 64)
	return f
}

// Change is a relative change rounded to a tenth of a percent.
type Change struct{ tenths *big.Int }

// PercentChange compares cur with prev: (cur − prev) / prev in percent,
// rounded half away from zero to one decimal. With prev = 0 it is defined as
// 100.0 when cur > 0 (growth from nothing counts as +100%, the convention
// dashboards use) and 0.0 when cur is 0 too; it is never NaN or infinite.
func PercentChange(cur, prev *big.Int) Change {
	switch {
	case prev.Sign() == 0 && cur.Sign() == 0:
		return Change{tenths: new(big.Int)}
	case prev.Sign() == 0:
		return Change{tenths: big.NewInt(int64(cur.Sign()) * 1000)}
	}
	num := new(big.Int).Sub(cur, prev)
	num.Mul(num, big.NewInt(1000))
	return Change{tenths: divRound(num, new(big.Int).Abs(prev))}
}

// Tenths returns the change in tenths of a percent (125 is 12.5%).
func (c Change) Tenths() *big.Int {
	if c.tenths == nil {
		return new(big.Int)
	}
	return new(big.Int).Set(c.tenths)
}

// String returns the change with exactly one decimal: "12.5", "-40.0", "0.0".
func (c Change) String() string { return formatScaled(c.Tenths(), 1) }

// divRound returns num / den rounded half away from zero (den > 0).
func divRound(num, den *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if r.Sign() != 0 && new(big.Int).Mul(new(big.Int).Abs(r), big.NewInt(2)).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(int64(num.Sign())))
	}
	return q
}

// formatScaled writes v / 10^places with exactly places decimals.
func formatScaled(v *big.Int, places int) string {
	digits := new(big.Int).Abs(v).String()
	if len(digits) <= places {
		digits = strings.Repeat("0", places-len(digits)+1) + digits
	}
	sign := ""
	if v.Sign() < 0 {
		sign = "-"
	}
	if places == 0 {
		return sign + digits
	}
	return sign + digits[:len(digits)-places] + "." + digits[len(digits)-places:]
}

// UserStats counts live (not deleted) accounts by creation time.
type UserStats struct {
	Total           int64
	LastMonth       int64
	LastMonthChange Change
	LastWeek        int64
	LastWeekChange  Change
}

// UserStats counts the live accounts: all of them, those created in the last
// month and week, and the changes against the windows before those. A
// deleted account no longer counts anywhere.
func (s *Service) UserStats(ctx context.Context, p accounts.Principal) (UserStats, error) {
	if err := requireAdmin(p); err != nil {
		return UserStats{}, err
	}
	now := s.clock()
	total, n, err := s.store.UserCounts(ctx, []Period{
		window(now, 0, Month), window(now, Month, Month), window(now, 0, Week), window(now, Week, Week),
	})
	if err != nil {
		return UserStats{}, fmt.Errorf("user stats: %w", err)
	}
	return UserStats{
		Total:           total,
		LastMonth:       n[0],
		LastMonthChange: PercentChange(big.NewInt(n[0]), big.NewInt(n[1])),
		LastWeek:        n[2],
		LastWeekChange:  PercentChange(big.NewInt(n[2]), big.NewInt(n[3])),
	}, nil
}

// WageringStats sums stakes (of every bet, running games included, by the
// time each was placed) in dollars.
type WageringStats struct {
	Total           Total
	LastMonth       Total
	LastMonthChange Change
	LastWeek        Total
	LastWeekChange  Change
}

// WageringStats sums the stakes of all bets, of those placed in the last
// month and week, and the changes against the windows before those.
func (s *Service) WageringStats(ctx context.Context, p accounts.Principal) (WageringStats, error) {
	if err := requireAdmin(p); err != nil {
		return WageringStats{}, err
	}
	now := s.clock()
	total, per, err := s.store.BetFigures(ctx, []Period{
		window(now, 0, Month), window(now, Month, Month), window(now, 0, Week), window(now, Week, Week),
	})
	if err != nil {
		return WageringStats{}, fmt.Errorf("wagering stats: %w", err)
	}
	w := make([]Total, len(per))
	for i, byGame := range per {
		w[i] = byGame.sum().Wagered
	}
	return WageringStats{
		Total:           total.sum().Wagered,
		LastMonth:       w[0],
		LastMonthChange: PercentChange(w[0].Units(), w[1].Units()),
		LastWeek:        w[2],
		LastWeekChange:  PercentChange(w[2].Units(), w[3].Units()),
	}, nil
}

func (g ByGame) sum() Figures {
	var f Figures
	for _, x := range g {
		f.Bets += x.Bets
		f.Wagered = f.Wagered.Add(x.Wagered)
		f.SettledWagered = f.SettledWagered.Add(x.SettledWagered)
		f.PaidOut = f.PaidOut.Add(x.PaidOut)
	}
	return f
}

// Game is one of the six games with its theoretical return to player.
type Game struct {
	Name string
	// TheoreticalRTP is the expected return in percent (two decimals).
	TheoreticalRTP string
}

// Games lists the six games with their theoretical RTPs, as the game
// packages (internal/games/*) and the reference (games.md) compute them:
//   - dice 98.99: 99/target pays on 100·target of the 10,001 equally likely
//     rolls, so RTP = 9900/10001 for every target (games.md §2).
//   - plinko 99.02: the mean of the 27 tables' RTPs (3 risks × 8–16 rows,
//     each 98.91–99.16, games.md §4); the default (medium, 8 rows) is 98.91.
//   - keno 98.93: the mean of the 40 tables' RTPs (4 risks × 1–10 picks,
//     each 98.65–99.07, games.md §6).
//   - mines 99.00: every cash-out pays 0.99 × the fair odds (games.md §3).
//   - pump 98.00: multipliers are 0.98 × the fair odds rounded to 2 decimals;
//     a cash-out after k pumps returns 97.68–98.44% (games.md §5).
//   - blackjack 99.43: optimal play under the split rules (split, double
//     after split, insurance declined), 99.4296% computed exactly in
//     internal/games/blackjack (Stake's published 0.57% edge).
var Games = []Game{
	{"dice", "98.99"}, {"plinko", "99.02"}, {"keno", "98.93"},
	{"mines", "99.00"}, {"pump", "98.00"}, {"blackjack", "99.43"},
}

// GameActivity is one game's bets placed in the activity window.
type GameActivity struct {
	Game    string
	Bets    int64
	Wagered Total
	PaidOut Total
	// SettledWagered is the stake of the bets that have settled, the base
	// of RTP (a running game has not paid out yet).
	SettledWagered Total
	// RTP is the realized return in hundredths of a percent (9899 is
	// 98.99%): PaidOut / SettledWagered, 0 when nothing settled.
	RTP int64
	// TheoreticalRTP is the game's expected return in percent, from Games.
	TheoreticalRTP string
}

// RTPString returns RTP in percent with two decimals.
func (g GameActivity) RTPString() string { return formatScaled(big.NewInt(g.RTP), 2) }

// Activity is the recent play: every game's last 24 hours and the players
// active in the last 15 minutes.
type Activity struct {
	Games         []GameActivity
	ActivePlayers int64
}

// Activity reports each game's bets placed in the last 24 hours (all six
// games, zeros included) and the distinct players who bet in the last 15
// minutes.
func (s *Service) Activity(ctx context.Context, p accounts.Principal) (Activity, error) {
	if err := requireAdmin(p); err != nil {
		return Activity{}, err
	}
	return s.activity(ctx)
}

// ActivityForMetrics is Activity without a caller, for the Prometheus
// collector (the metrics endpoint is not an admin call).
func (s *Service) ActivityForMetrics(ctx context.Context) (Activity, error) { return s.activity(ctx) }

func (s *Service) activity(ctx context.Context) (Activity, error) {
	now := s.clock()
	_, per, err := s.store.BetFigures(ctx, []Period{window(now, 0, ActivityWindow)})
	if err != nil {
		return Activity{}, fmt.Errorf("activity: %w", err)
	}
	active, err := s.store.ActivePlayers(ctx, window(now, 0, ActiveWindow))
	if err != nil {
		return Activity{}, fmt.Errorf("activity: %w", err)
	}
	out := Activity{ActivePlayers: active, Games: make([]GameActivity, 0, len(Games))}
	for _, g := range Games {
		f := per[0][g.Name]
		a := GameActivity{Game: g.Name, Bets: f.Bets, Wagered: f.Wagered, PaidOut: f.PaidOut,
			SettledWagered: f.SettledWagered, TheoreticalRTP: g.TheoreticalRTP}
		if sw := f.SettledWagered.Units(); sw.Sign() > 0 {
			a.RTP = divRound(new(big.Int).Mul(f.PaidOut.Units(), big.NewInt(10000)), sw).Int64()
		}
		out.Games = append(out.Games, a)
	}
	return out, nil
}
