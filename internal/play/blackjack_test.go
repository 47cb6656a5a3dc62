package play

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/games/blackjack"
	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/money"
)

// A double the player's own rules refuse is refused before its card is
// drawn. It used to be drawn first and refused by the save's statement
// after: the double, and the dealer's play when it ended the hand, ran
// before the refusal, and a refused action keeps the game as it was, so the
// player could tighten a wager limit below the double's stake and ask "does
// the next card bust me?" as often as they liked, reading the answer in the
// work (159 allocations when the double busts, 160–165 when the dealer then
// draws; a finding of a review playing a hostile player). The store now
// reads the player's headroom with their row locked (Funds, GameAction.
// Stakes), and step refuses a stake above it, or above the balance, having
// drawn nothing (the deck's next card is where it was): exactly the same
// work whatever the next cards are.
func TestRefusedDoubleDrawsNothing(t *testing.T) {
	l := DefaultLimits()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	stake := money.Dollars(5)
	pair := SeedPair{ServerSeed: "5be1f0c3a9d2e4b6c8a0f1e2d3c4b5a697886766554433221100ffeeddccbbaa", ClientSeed: "hostile"}
	params := games.Params{Rules: int(blackjack.RulesSplit)}
	deal := func(src event.Source) (*blackjack.Game, error) {
		return blackjack.Deal(blackjack.NewDeck(src), blackjack.RulesSplit)
	}
	plenty := Funds{Balance: 100 * stake, Locked: true}
	// One game that a double would leave in each class: the hand bust, or
	// the dealer playing to 2, 3, 4… cards.
	rows := map[string]BetWithSeeds{}
	for n := int64(1); n <= 3000; n++ {
		pair.Nonce = n
		bet := Bet{ID: [16]byte{byte(n), byte(n >> 8)}, Game: Blackjack, Status: StatusActive, Amount: stake, CreatedAt: now}
		r, err := open(blackjackKind, l, bet, params, pair, now, deal)
		if err != nil {
			t.Fatal(err)
		}
		if r.Over() || r.Game.InsurancePending() || !r.Game.CanDouble() {
			continue
		}
		row := BetWithSeeds{Bet: r.Bet, Pair: pair}
		played, _, err := step(blackjackKind, l, row, plenty, now, nil, blackjackDouble)
		if err != nil {
			t.Fatal(err)
		}
		class := fmt.Sprintf("dealer holds %d cards", len(played.Game.Dealer))
		if played.Game.Outcome == blackjack.PlayerBust {
			class = "bust"
		}
		if _, ok := rows[class]; !ok {
			rows[class] = row
		}
	}
	if _, ok := rows["bust"]; !ok || len(rows) < 3 {
		t.Fatalf("the games do not cover a bust and the dealer's draws: %v", len(rows))
	}
	overLimits := func(err error) bool {
		var over *OverLimitsError
		return errors.As(err, &over) && over.Stake == stake
	}
	for _, tc := range []struct {
		name  string
		funds Funds
		want  func(error) bool
	}{
		{"a wager limit below the stake", Funds{Balance: 100 * stake, Locked: true, Capped: true,
			Headroom: stake - money.FromCents(1)}, overLimits},
		{"a break", Funds{Balance: 100 * stake, Locked: true, Capped: true, Headroom: -1}, overLimits},
		// The limits are named first, as the save's statement and a bet's
		// would name them.
		{"a limit and a short balance", Funds{Balance: stake - money.FromCents(1), Locked: true, Capped: true},
			overLimits},
		{"a short balance", Funds{Balance: stake - money.FromCents(1), Locked: true, Capped: true, Headroom: stake},
			func(err error) bool { return errors.Is(err, ErrInsufficientBalance) }},
		// Funds read from a copy, without the player's row locked: no stake
		// is taken on them (the store decides again, locked).
		{"funds not read locked", Funds{Balance: 100 * stake},
			func(err error) bool { return errors.Is(err, errStakeUnlocked) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Nothing is drawn: the deck's next card, the hands and the
			// recorded actions are as they were.
			for class, row := range rows {
				r, err := resume(row, blackjackKind, l)
				if err != nil {
					t.Fatal(err)
				}
				r.Balance, r.funds = tc.funds.Balance, tc.funds
				next, player, dealer, actions := r.Game.Next, len(r.Game.Player), len(r.Game.Dealer), r.Params.Actions
				if err := blackjackDouble(r); !tc.want(err) {
					t.Fatalf("%s: the double answered %v", class, err)
				}
				if r.Game.Next != next || len(r.Game.Player) != player || len(r.Game.Dealer) != dealer ||
					r.Params.Actions != actions || r.stake != 0 {
					t.Fatalf("%s: the refused double drew: next card %d → %d, hands %d+%d → %d+%d, actions %q → %q",
						class, next, r.Game.Next, player, dealer, len(r.Game.Player), len(r.Game.Dealer), actions,
						r.Params.Actions)
				}
			}
			allocs := map[string]float64{}
			for class, row := range rows {
				allocs[class] = testing.AllocsPerRun(50, func() {
					if _, _, err := step(blackjackKind, l, row, tc.funds, now, nil, blackjackDouble); !tc.want(err) {
						t.Fatalf("%s: the double answered %v", class, err)
					}
				})
			}
			first := -1.0
			for _, a := range allocs {
				if first >= 0 && a != first {
					t.Fatalf("the refused double's allocations tell the next cards apart: %v", allocs)
				}
				first = a
			}
			t.Logf("%d classes (%v), %v allocations each", len(allocs), keys(allocs), first)
		})
	}
}

func keys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
