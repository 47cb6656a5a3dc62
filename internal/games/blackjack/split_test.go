package blackjack_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/fairplay/fairplay/internal/games/blackjack"
)

// TestSplitRules plays scripted games under the split rules. The deck lists the cards in
// dealing order: player, dealer, player, dealer (hole card), then, after a split, the first
// hand's second card, the second hand's second card, then hits and dealer draws.
func TestSplitRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		deck    string
		actions string // h Hit, s Stand, d Double, p Split, i insurance (even money), n decline
		errs    map[int]error
		result  string
		hands   []string // HandResults
		stakes  string
		ret     string
		mult    string
		player  string
		second  string
		dealer  string
	}{
		{name: "split eights, both stand, one wins one loses", deck: "8♠ 10♦ 8♥ 8♣ 10♠ 9♦", actions: "pss",
			result: "Hand 1: Push. Hand 2: Dealer wins", hands: []string{"Push", "Dealer wins"}, stakes: "2", ret: "1", mult: "0.5",
			player: "8♠ 10♠ (18)", second: "8♥ 9♦ (17)", dealer: "10♦ 8♣ (18)"},
		{name: "split then hit each hand in order", deck: "7♠ 10♦ 7♥ 7♣ 3♠ 4♦ 10♥ 10♣", actions: "phsh",
			result: "Hand 1: You win. Hand 2: You win", stakes: "2", ret: "4",
			player: "7♠ 3♠ 10♥ (20)", second: "7♥ 4♦ 10♣ (21)", dealer: "10♦ 7♣ (17)"},
		{name: "double after split on both hands", deck: "9♠ 6♦ 9♥ 10♣ 2♠ A♦ 10♥ 9♦ 10♠", actions: "pdd",
			result: "Hand 1: Dealer busts! You win. Hand 2: Dealer busts! You win", stakes: "4", ret: "8", mult: "2",
			player: "9♠ 2♠ 10♥ (21)", second: "9♥ A♦ 9♦ (19)", dealer: "6♦ 10♣ 10♠ (26)"},
		{name: "split aces take one card each and stand", deck: "A♠ 9♦ A♥ 8♣ K♠ 5♦ 4♣", actions: "p",
			result: "Hand 1: You win. Hand 2: Dealer wins", stakes: "2", ret: "2",
			player: "A♠ K♠ (21, soft)", second: "A♥ 5♦ (16, soft)", dealer: "9♦ 8♣ (17)"},
		{name: "split aces: no action after", deck: "A♠ 9♦ A♥ 8♣ K♠ 5♦", actions: "phs",
			errs: map[int]error{1: blackjack.ErrGameOver, 2: blackjack.ErrGameOver}, stakes: "2", ret: "2"},
		{name: "21 on a split hand pays 1:1 and stands", deck: "K♠ 9♦ K♥ 10♣ A♠ 9♥", actions: "ps",
			result: "Hand 1: You win. Hand 2: Push", stakes: "2", ret: "3", player: "K♠ A♠ (21, soft)", second: "K♥ 9♥ (19)"},
		{name: "no re-split", deck: "8♠ 10♦ 8♥ 7♣ 8♦ 2♠ 10♠", actions: "pps",
			errs: map[int]error{1: blackjack.ErrCannotSplit}, stakes: "2"},
		{name: "ten and king do not split", deck: "10♠ 7♦ K♥ 10♣", actions: "ps",
			errs: map[int]error{0: blackjack.ErrCannotSplit}, result: "You win", stakes: "1", ret: "2"},
		{name: "no split after a hit", deck: "2♠ 7♦ 2♥ 10♣ 2♦ 10♠", actions: "hps",
			errs: map[int]error{1: blackjack.ErrCannotSplit}, stakes: "1"},
		{name: "both split hands bust: dealer draws nothing", deck: "6♠ 5♦ 6♥ 10♣ 6♦ 6♣ 10♠ 10♥", actions: "phh",
			result: "Hand 1: Bust! Dealer wins. Hand 2: Bust! Dealer wins", stakes: "2", ret: "0", dealer: "5♦ 10♣ (15)"},
		{name: "insurance offered, declined, no dealer natural, play on", deck: "10♠ A♦ 9♥ 7♣", actions: "ns",
			result: "You win", stakes: "1", ret: "2", dealer: "A♦ 7♣ (18, soft)"},
		{name: "insurance taken, dealer natural: insurance pays 2:1", deck: "10♠ A♦ 9♥ K♣", actions: "i",
			result: "Dealer has Blackjack! Dealer wins. Insurance pays 2:1", stakes: "1.5", ret: "1.5", mult: "1"},
		{name: "insurance declined, dealer natural", deck: "10♠ A♦ 9♥ K♣", actions: "n",
			result: "Dealer has Blackjack! Dealer wins", stakes: "1", ret: "0"},
		{name: "insurance taken, no dealer natural: lost, play on", deck: "10♠ A♦ 10♥ 7♣", actions: "is",
			result: "You win", stakes: "1.5", ret: "2", mult: "1.3333"},
		{name: "actions wait for the insurance decision", deck: "10♠ A♦ 10♥ 7♣", actions: "hdsp" + "n" + "s",
			errs:   map[int]error{0: blackjack.ErrInsuranceFirst, 1: blackjack.ErrInsuranceFirst, 2: blackjack.ErrInsuranceFirst, 3: blackjack.ErrInsuranceFirst},
			result: "You win", stakes: "1", ret: "2"},
		{name: "even money ends the game at 1:1", deck: "A♠ A♦ K♥ K♣", actions: "i",
			result: "Even money! You win", stakes: "1", ret: "2", mult: "2"},
		{name: "even money declined, dealer natural: push", deck: "A♠ A♦ K♥ K♣", actions: "n",
			result: "Push", stakes: "1", ret: "1"},
		{name: "even money declined, no dealer natural: 3:2", deck: "A♠ A♦ K♥ 7♣", actions: "n",
			result: "Blackjack! You win", stakes: "1", ret: "2.5"},
		{name: "no insurance without an ace up", deck: "10♠ 9♦ 10♥ 7♣ 2♦", actions: "is",
			errs: map[int]error{0: blackjack.ErrNoInsurance}, stakes: "1", ret: "2"},
		{name: "ten up: dealer natural peeked at once", deck: "10♠ K♦ 9♥ A♣", actions: "n",
			errs: map[int]error{0: blackjack.ErrGameOver}, result: "Dealer has Blackjack! Dealer wins", stakes: "1", ret: "0"},
		{name: "insurance then split", deck: "8♠ A♦ 8♥ 9♣ 3♠ 3♦ 10♥ 10♣", actions: "nphh",
			result: "Hand 1: You win. Hand 2: You win", stakes: "2", ret: "4",
			player: "8♠ 3♠ 10♥ (21)", second: "8♥ 3♦ 10♣ (21)", dealer: "A♦ 9♣ (20, soft)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := blackjack.Deal(cards(t, tt.deck), blackjack.RulesSplit)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range tt.actions {
				before := *g
				err := act(g, a)
				if want := tt.errs[i]; !errors.Is(err, want) || (want == nil) != (err == nil) {
					t.Fatalf("action %d (%c): error %v, want %v", i, a, err, want)
				}
				if err != nil && !reflect.DeepEqual(*g, before) {
					t.Fatalf("refused action %c changed the game", a)
				}
			}
			check := func(what, got, want string) {
				if want != "" && got != want {
					t.Errorf("%s %q, want %q", what, got, want)
				}
			}
			check("result", g.Result(), tt.result)
			check("stakes", g.Stakes().String(), tt.stakes)
			check("return", g.Return().String(), tt.ret)
			check("multiplier", g.Multiplier().String(), tt.mult)
			check("player", blackjack.FormatHand(g.Player), tt.player)
			if tt.second != "" {
				check("second", blackjack.FormatHand(g.Second), tt.second)
			}
			check("dealer", blackjack.FormatHand(g.Dealer), tt.dealer)
			if tt.hands != nil && !reflect.DeepEqual(g.HandResults(), tt.hands) {
				t.Errorf("hand results %q, want %q", g.HandResults(), tt.hands)
			}
			if tt.result != "" && !g.Over() {
				t.Errorf("game still in play")
			}
		})
	}
}

func act(g *blackjack.Game, a rune) error {
	switch a {
	case 'h':
		return g.Hit()
	case 's':
		return g.Stand()
	case 'd':
		return g.Double()
	case 'p':
		return g.Split()
	case 'i':
		return g.Insure(true)
	case 'n':
		return g.Insure(false)
	}
	panic("unknown action")
}

// TestInsuranceOfferHidesTheHoleCard deals every hole card under an ace and checks that
// the view, and the answer to every action but the decision, is the same whatever it is.
func TestInsuranceOfferHidesTheHoleCard(t *testing.T) {
	t.Parallel()
	var first []byte
	for hole := range blackjack.DeckSize {
		deck := []blackjack.Card{cards(t, "9♠")[0], cards(t, "A♦")[0], cards(t, "7♥")[0], blackjack.CardAt(hole), cards(t, "5♣")[0]}
		g, err := blackjack.Deal(deck, blackjack.RulesSplit)
		if err != nil {
			t.Fatal(err)
		}
		view, err := json.Marshal(g.View())
		if err != nil {
			t.Fatal(err)
		}
		var refusals []string
		for _, a := range "hsdp" {
			refusals = append(refusals, act(g, a).Error())
		}
		view = append(view, strings.Join(refusals, "|")...)
		if first == nil {
			first = view
		} else if string(view) != string(first) {
			t.Fatalf("hole card %s changes what the player sees:\n%s\n%s", blackjack.CardAt(hole), first, view)
		}
	}
	if !strings.Contains(string(first), `"insurance":"offered"`) || !strings.Contains(string(first), `"hidden":true`) {
		t.Fatalf("view %s", first)
	}
}

// TestClassicRulesUnchanged: the classic rules have no insurance offer (an ace up peeks at
// once), no split, and a stored classic game reads and writes without the new fields.
func TestClassicRulesUnchanged(t *testing.T) {
	t.Parallel()
	g, err := blackjack.New(cards(t, "8♠ A♦ 8♥ 7♣ 2♦"))
	if err != nil {
		t.Fatal(err)
	}
	if g.InsurancePending() || g.CanSplit() {
		t.Fatalf("classic game offers insurance or split: %+v", g.View())
	}
	if err := g.Split(); !errors.Is(err, blackjack.ErrCannotSplit) {
		t.Fatalf("classic split: %v", err)
	}
	if err := g.Insure(false); !errors.Is(err, blackjack.ErrNoInsurance) {
		t.Fatalf("classic insurance: %v", err)
	}
	data, _ := json.Marshal(g)
	for _, f := range []string{"rules", "insurance", "second", "hand"} {
		if strings.Contains(string(data), `"`+f+`"`) {
			t.Fatalf("classic game JSON has %q: %s", f, data)
		}
	}
	// A split game round-trips.
	s, err := blackjack.Deal(cards(t, "8♠ 9♦ 8♥ 7♣ 2♦ 3♠ 5♦"), blackjack.RulesSplit)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Split(); err != nil {
		t.Fatal(err)
	}
	data, _ = json.Marshal(s)
	var back blackjack.Game
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(*s, back) {
		t.Fatalf("round trip %s: %+v, %v", data, back, err)
	}
	if err := back.Hit(); err != nil || back.Hand != 0 || blackjack.FormatHand(back.Player) != "8♠ 2♦ 5♦ (15)" {
		t.Fatalf("hit after reload: %v, hand %d, %s", err, back.Hand, blackjack.FormatHand(back.Player))
	}
	// A stored game claiming split under the classic rules is refused.
	bad := back
	bad.Rules = blackjack.RulesClassic
	if err := bad.Stand(); !errors.Is(err, blackjack.ErrInvalidState) {
		t.Fatalf("inconsistent stored game: %v", err)
	}
}
