package blackjack_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games/blackjack"
	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/games/gamestest"
	"github.com/fairplay/fairplay/internal/money"
)

// cards parses "A♠ 10♥ K♣" into cards of the table.
func cards(t *testing.T, s string) []blackjack.Card {
	t.Helper()
	var out []blackjack.Card
	for _, f := range strings.Fields(s) {
		found := false
		for i := range blackjack.DeckSize {
			if c := blackjack.CardAt(i); c.String() == f {
				out = append(out, c)
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("no card %q", f)
		}
	}
	return out
}

func TestCardTable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		i       int
		text    string
		numeric int
	}{
		{0, "2♦", 2}, {1, "2♥", 2}, {2, "2♠", 2}, {3, "2♣", 2}, {4, "3♦", 3},
		{31, "9♣", 9}, {32, "10♦", 10}, {36, "J♦", 10}, {41, "Q♥", 10}, {46, "K♠", 10},
		{48, "A♦", 11}, {49, "A♥", 11}, {50, "A♠", 11}, {51, "A♣", 11},
	}
	for _, tt := range tests {
		if c := blackjack.CardAt(tt.i); c.String() != tt.text || c.NumericValue() != tt.numeric {
			t.Errorf("CardAt(%d) = %+v, want %s worth %d", tt.i, c, tt.text, tt.numeric)
		}
	}
	seen := map[string]bool{}
	perSuit := map[blackjack.Suit]int{}
	for i := range blackjack.DeckSize {
		c := blackjack.CardAt(i)
		seen[c.String()] = true
		perSuit[c.Suit()]++
	}
	if len(seen) != 52 || len(perSuit) != 4 || perSuit[blackjack.Hearts] != 13 {
		t.Fatalf("card table has %d distinct cards, suits %v", len(seen), perSuit)
	}
	if got, _ := json.Marshal(blackjack.CardAt(46).Face()); string(got) != `{"value":"K","suit":"spades","numericValue":10,"hidden":false}` {
		t.Fatalf("card face JSON %s", got)
	}
	if got, _ := json.Marshal([]blackjack.Card{0, 46, 51}); string(got) != `[0,46,51]` {
		t.Fatalf("stored cards JSON %s", got)
	}
	var back []blackjack.Card
	if err := json.Unmarshal([]byte(`[0,46,51]`), &back); err != nil || !slices.Equal(back, []blackjack.Card{0, 46, 51}) {
		t.Fatalf("decoded %v, %v", back, err)
	}
	for _, bad := range []string{`[52]`, `[-1]`, `["A"]`, `[1.5]`} {
		if err := json.Unmarshal([]byte(bad), &back); !errors.Is(err, blackjack.ErrInvalidState) {
			t.Errorf("decoding %s: %v, want ErrInvalidState", bad, err)
		}
	}
}

func TestCardVector(t *testing.T) {
	t.Parallel()
	ref := gamestest.Load(t)
	if len(ref.Fairness.TestVectors.Cards) == 0 {
		t.Fatal("no card vectors in games.json")
	}
	for _, v := range ref.Fairness.TestVectors.Cards {
		deck := blackjack.NewDeck(fair.NewStream(v.ServerSeed, v.ClientSeed, v.Nonce))
		if len(deck) != blackjack.DeckSize {
			t.Fatalf("deck of %d cards", len(deck))
		}
		for i, want := range v.First4 {
			if deck[i].String() != want {
				t.Errorf("card %d = %s, want %s", i, deck[i], want)
			}
		}
		// Dealt P, D, P, D: the player holds cards 1 and 3, the dealer 2 and 4.
		g, err := blackjack.New(deck)
		if err != nil {
			t.Fatal(err)
		}
		if got := blackjack.FormatHand(g.Player) + " | " + blackjack.FormatHand(g.Dealer); got != "J♠ 5♥ (15) | 10♥ K♣ (20)" {
			t.Errorf("deal = %s", got)
		}
	}
}

func TestValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		hand  string
		total int
		soft  bool
	}{
		{"", 0, false},
		{"10♠ Q♥", 20, false},
		{"A♠ K♦", 21, true},
		{"A♠ 6♦", 17, true},
		{"A♠ 6♦ 10♣", 17, false},
		{"A♠ A♥", 12, true},
		{"A♠ A♥ 9♦", 21, true},
		{"A♠ A♥ A♦ A♣ A♠ A♥ A♦ A♣ A♠ A♥ A♦", 21, true},
		{"A♠ A♥ A♦ A♣ A♠ A♥ A♦ A♣ A♠ A♥ A♦ A♣", 12, false},
		{"10♠ 6♥ A♦ 5♣", 22, false},
		{"5♠ 6♥", 11, false},
	}
	for _, tt := range tests {
		t.Run(tt.hand, func(t *testing.T) {
			t.Parallel()
			total, soft := blackjack.Value(cards(t, tt.hand))
			if total != tt.total || soft != tt.soft {
				t.Fatalf("Value(%s) = %d soft=%v, want %d soft=%v", tt.hand, total, soft, tt.total, tt.soft)
			}
		})
	}
}

// TestRules plays scripted games. The deck lists the cards in dealing order: player,
// dealer, player, dealer (hole card), then hits and dealer draws.
func TestRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		deck    string
		actions string // h = Hit, s = Stand, d = Double
		errs    map[int]error
		outcome blackjack.Outcome
		result  string
		mult    string
		stakes  int64
		player  string
		dealer  string
	}{
		{name: "player natural", deck: "A♠ 9♦ K♥ 7♣", outcome: blackjack.PlayerBlackjack, result: "Blackjack! You win", mult: "2.5", stakes: 1, player: "A♠ K♥ (21, soft)", dealer: "9♦ 7♣ (16)"},
		{name: "both naturals push", deck: "A♠ A♦ Q♥ J♣", outcome: blackjack.Push, result: "Push", mult: "1", stakes: 1, player: "A♠ Q♥ (21, soft)", dealer: "A♦ J♣ (21, soft)"},
		{name: "dealer natural, ace up", deck: "10♠ A♦ Q♥ K♣", outcome: blackjack.DealerBlackjack, result: "Dealer has Blackjack! Dealer wins", mult: "0", stakes: 1, dealer: "A♦ K♣ (21, soft)"},
		{name: "dealer natural peeked, ten up", deck: "10♠ K♦ 9♥ A♣", outcome: blackjack.DealerBlackjack, mult: "0", stakes: 1},
		{name: "dealer natural beats player 21 made by hitting", deck: "10♠ K♦ 9♥ A♣", actions: "h", errs: map[int]error{0: blackjack.ErrGameOver}, outcome: blackjack.DealerBlackjack, mult: "0", stakes: 1},
		{name: "player busts, dealer does not draw", deck: "10♠ 9♦ 6♥ 7♣ K♦ 5♣", actions: "h", outcome: blackjack.PlayerBust, result: "Bust! Dealer wins", mult: "0", stakes: 1, player: "10♠ 6♥ K♦ (26)", dealer: "9♦ 7♣ (16)"},
		{name: "stand 20 vs 17", deck: "10♠ 10♦ K♥ 7♣", actions: "s", outcome: blackjack.PlayerWins, result: "You win", mult: "2", stakes: 1},
		{name: "dealer stands on soft 17", deck: "10♠ A♦ 8♥ 6♣ 2♠", actions: "s", outcome: blackjack.PlayerWins, mult: "2", stakes: 1, dealer: "A♦ 6♣ (17, soft)"},
		{name: "dealer hits 16 and busts", deck: "10♠ 10♦ 2♥ 6♣ K♠", actions: "s", outcome: blackjack.DealerBust, result: "Dealer busts! You win", mult: "2", stakes: 1, dealer: "10♦ 6♣ K♠ (26)"},
		{name: "dealer stands on soft 20", deck: "10♠ 2♦ 8♥ 3♣ A♠ 4♦ 10♥", actions: "s", outcome: blackjack.DealerWins, result: "Dealer wins", mult: "0", stakes: 1, dealer: "2♦ 3♣ A♠ 4♦ (20, soft)"},
		{name: "dealer soft 16 turns hard 15 and draws on", deck: "10♠ 2♦ 8♥ 3♣ A♠ 9♦ 4♥", actions: "s", outcome: blackjack.DealerWins, mult: "0", stakes: 1, dealer: "2♦ 3♣ A♠ 9♦ 4♥ (19)"},
		{name: "dealer soft 16 hits", deck: "10♠ A♦ 7♥ 5♣ 5♠", actions: "s", outcome: blackjack.DealerWins, mult: "0", stakes: 1, dealer: "A♦ 5♣ 5♠ (21, soft)"},
		{name: "equal totals push", deck: "10♠ 10♦ 8♥ 8♣", actions: "s", outcome: blackjack.Push, result: "Push", mult: "1", stakes: 1},
		{name: "lower total loses", deck: "10♠ 10♦ 7♥ 9♣", actions: "s", outcome: blackjack.DealerWins, mult: "0", stakes: 1},
		{name: "soft hand hit stays alive", deck: "A♠ 10♦ 5♥ 7♣ K♥", actions: "hs", outcome: blackjack.DealerWins, mult: "0", stakes: 1, player: "A♠ 5♥ K♥ (16)"},
		{name: "hitting to 21 stands automatically", deck: "5♠ 10♦ 6♥ 7♣ K♥", actions: "hs", errs: map[int]error{1: blackjack.ErrGameOver}, outcome: blackjack.PlayerWins, mult: "2", stakes: 1, player: "5♠ 6♥ K♥ (21)"},
		{name: "double and win", deck: "5♠ 10♦ 6♥ 7♣ 10♥", actions: "d", outcome: blackjack.PlayerWins, mult: "2", stakes: 2, player: "5♠ 6♥ 10♥ (21)"},
		{name: "double draws exactly one card", deck: "5♠ 10♦ 6♥ 9♣ 2♥ 3♦", actions: "d", outcome: blackjack.DealerWins, mult: "0", stakes: 2, player: "5♠ 6♥ 2♥ (13)"},
		{name: "double and push", deck: "5♠ 10♦ 6♥ 10♣ 9♥", actions: "d", outcome: blackjack.Push, mult: "1", stakes: 2},
		{name: "double and bust", deck: "10♠ 10♦ 6♥ 7♣ K♥", actions: "d", outcome: blackjack.PlayerBust, mult: "0", stakes: 2, dealer: "10♦ 7♣ (17)"},
		{name: "double soft hand", deck: "A♠ 6♦ 7♥ 10♣ 3♥ 2♣", actions: "d", outcome: blackjack.PlayerWins, mult: "2", stakes: 2, player: "A♠ 7♥ 3♥ (21, soft)"},
		{name: "double after hit refused", deck: "2♠ 10♦ 3♥ 7♣ 4♥ 10♠", actions: "hdhs", errs: map[int]error{1: blackjack.ErrCannotDouble}, outcome: blackjack.PlayerWins, mult: "2", stakes: 1, player: "2♠ 3♥ 4♥ 10♠ (19)"},
		{name: "no action after the end", deck: "10♠ 10♦ K♥ 7♣", actions: "shds", errs: map[int]error{1: blackjack.ErrGameOver, 2: blackjack.ErrGameOver, 3: blackjack.ErrGameOver}, outcome: blackjack.PlayerWins, mult: "2", stakes: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := blackjack.New(cards(t, tt.deck))
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range tt.actions {
				var err error
				switch a {
				case 'h':
					err = g.Hit()
				case 's':
					err = g.Stand()
				case 'd':
					err = g.Double()
				}
				if want := tt.errs[i]; !errors.Is(err, want) || (want == nil) != (err == nil) {
					t.Fatalf("action %d (%c): error %v, want %v", i, a, err, want)
				}
			}
			if !g.Over() || g.Outcome != tt.outcome || g.Multiplier().String() != tt.mult || g.Stakes() != money.Multiplier(tt.stakes)*money.One {
				t.Fatalf("outcome %q ×%s on %d stakes; want %q ×%s on %d (player %s, dealer %s)",
					g.Outcome, g.Multiplier(), g.Stakes(), tt.outcome, tt.mult, tt.stakes, blackjack.FormatHand(g.Player), blackjack.FormatHand(g.Dealer))
			}
			if tt.result != "" && g.Result() != tt.result {
				t.Fatalf("result %q, want %q", g.Result(), tt.result)
			}
			if tt.player != "" && blackjack.FormatHand(g.Player) != tt.player {
				t.Fatalf("player %s, want %s", blackjack.FormatHand(g.Player), tt.player)
			}
			if tt.dealer != "" && blackjack.FormatHand(g.Dealer) != tt.dealer {
				t.Fatalf("dealer %s, want %s", blackjack.FormatHand(g.Dealer), tt.dealer)
			}
		})
	}
}

// TestResultTexts pins the banner colour rule: "You win" exactly for paying outcomes,
// "Push" exactly for pushes.
func TestResultTexts(t *testing.T) {
	t.Parallel()
	decks := map[blackjack.Outcome]string{
		blackjack.PlayerBlackjack: "A♠ 9♦ K♥ 7♣",
		blackjack.DealerBust:      "10♠ 10♦ 2♥ 6♣ K♠",
		blackjack.PlayerWins:      "10♠ 10♦ K♥ 7♣",
		blackjack.Push:            "10♠ 10♦ 8♥ 8♣",
		blackjack.DealerWins:      "10♠ 10♦ 7♥ 9♣",
		blackjack.DealerBlackjack: "10♠ A♦ Q♥ K♣",
		blackjack.PlayerBust:      "10♠ 9♦ 6♥ 7♣ K♦",
	}
	for outcome, deck := range decks {
		g, err := blackjack.New(cards(t, deck))
		if err != nil {
			t.Fatal(err)
		}
		if !g.Over() {
			if outcome == blackjack.PlayerBust {
				err = g.Hit()
			} else {
				err = g.Stand()
			}
		}
		if err != nil || g.Outcome != outcome {
			t.Fatalf("deck %s: outcome %q, %v; want %q", deck, g.Outcome, err, outcome)
		}
		text, m := g.Result(), g.Multiplier()
		if strings.Contains(text, "You win") != (m >= 20_000) || strings.Contains(text, "Push") != (m == 10_000) || text == "" {
			t.Errorf("%s: text %q with multiplier %s", outcome, text, m)
		}
	}
}

func TestView(t *testing.T) {
	t.Parallel()
	g, err := blackjack.New(cards(t, "10♠ A♦ 6♥ 9♣ 3♠"))
	if err != nil {
		t.Fatal(err)
	}
	v := g.View()
	if !v.DealerHand[1].Hidden || v.DealerHand[1].Value != "" || v.DealerValue != 11 || v.PlayerValue != 16 || v.GameOver || !v.CanDouble || v.Result != "" {
		t.Fatalf("in-play view %+v", v)
	}
	data, _ := json.Marshal(v)
	if strings.Contains(string(data), `"9"`) || strings.Contains(string(data), `"3"`) {
		t.Fatalf("view leaks the hole card or the deck: %s", data)
	}
	if err := g.Stand(); err != nil {
		t.Fatal(err)
	}
	v = g.View()
	if v.DealerHand[1].Hidden || v.DealerValue != 20 || !v.GameOver || v.CanDouble || v.Result != "Dealer wins" {
		t.Fatalf("final view %+v", v)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	g, err := blackjack.New(cards(t, "2♠ 10♦ 3♥ 7♣ 4♥ 10♠ 5♦"))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Hit(); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	var back blackjack.Game
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*g, back) {
		t.Fatalf("round trip %s gave %+v", data, back)
	}
	if err := back.Hit(); err != nil || back.Over() || blackjack.FormatHand(back.Player) != "2♠ 3♥ 4♥ 10♠ (19)" {
		t.Fatalf("hit after reload: %v, %q, %s", err, back.Outcome, blackjack.FormatHand(back.Player))
	}
	if err := back.Stand(); err != nil || back.Outcome != blackjack.PlayerWins {
		t.Fatalf("stand after reload: %v, %q", err, back.Outcome)
	}
}

func TestDeckExhaustionLeavesGameUnchanged(t *testing.T) {
	t.Parallel()
	if _, err := blackjack.New(cards(t, "10♠ 10♦ 2♥")); !errors.Is(err, blackjack.ErrDeckExhausted) {
		t.Fatalf("New with 3 cards: %v", err)
	}
	g, err := blackjack.New(cards(t, "10♠ 2♦ 2♥ 3♣ 2♠"))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Hit(); err != nil { // uses the last card
		t.Fatal(err)
	}
	before, _ := json.Marshal(g)
	for name, action := range map[string]func() error{"hit": g.Hit, "stand": g.Stand} {
		if err := action(); !errors.Is(err, blackjack.ErrDeckExhausted) {
			t.Fatalf("%s: %v, want ErrDeckExhausted", name, err)
		}
		if after, _ := json.Marshal(g); string(after) != string(before) {
			t.Fatalf("%s changed the game:\n%s\n%s", name, before, after)
		}
	}
	for name, corrupt := range map[string]func(g *blackjack.Game){
		"next beyond deck":      func(g *blackjack.Game) { g.Next = 99 },
		"next behind hands":     func(g *blackjack.Game) { g.Next = 4 },
		"card off the table":    func(g *blackjack.Game) { g.Deck[4] = 52 },
		"dealer hand too short": func(g *blackjack.Game) { g.Dealer = g.Dealer[:1] },
	} {
		c := *g
		c.Deck = slices.Clone(g.Deck)
		corrupt(&c)
		if err := c.Stand(); !errors.Is(err, blackjack.ErrInvalidState) {
			t.Errorf("%s: Stand error %v, want ErrInvalidState", name, err)
		}
	}
	if _, err := blackjack.New([]blackjack.Card{1, 2, 3, 200}); !errors.Is(err, blackjack.ErrInvalidState) {
		t.Errorf("New with card 200: %v", err)
	}
}

func TestDrawCard(t *testing.T) {
	t.Parallel()
	src := event.Floats{0, 0.999, 0.5}
	for _, want := range []string{"2♦", "A♣", "8♠"} {
		if c := blackjack.DrawCard(&src); c.String() != want {
			t.Fatalf("DrawCard = %s, want %s", c, want)
		}
	}
}

// FuzzGame plays arbitrary decks and action sequences and checks the invariants of every
// finished game, and that a stored game reloads to the same state.
func FuzzGame(f *testing.F) {
	f.Add([]byte{48, 36, 32, 20, 4, 8, 12}, []byte{0, 1})
	f.Add([]byte{0, 1, 2, 3}, []byte{2})
	f.Add([]byte{51, 50, 49, 48, 47}, []byte{0, 0, 0})
	f.Add([]byte{24, 48, 25, 20, 4, 8, 12, 16, 40}, []byte{5, 3, 0, 1, 0})
	f.Add([]byte{48, 49, 50, 20, 4, 8}, []byte{4, 1})
	f.Fuzz(func(t *testing.T, deckBytes, actions []byte) {
		deck := make([]blackjack.Card, len(deckBytes))
		for i, b := range deckBytes {
			deck[i] = blackjack.CardAt(int(b) % blackjack.DeckSize)
		}
		// Odd-length decks are dealt under the split rules.
		g, err := blackjack.Deal(deck, blackjack.Rules(len(deck)%2))
		if len(deck) < 4 {
			if !errors.Is(err, blackjack.ErrDeckExhausted) {
				t.Fatalf("New with %d cards: %v", len(deck), err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range actions {
			wasOver, before := g.Over(), *g
			err = act(g, rune("hsdpin"[a%6]))
			if wasOver && !errors.Is(err, blackjack.ErrGameOver) {
				t.Fatalf("action on a finished game: %v", err)
			}
			if err != nil && !reflect.DeepEqual(*g, before) {
				t.Fatalf("failed action %d changed the game", a%6)
			}
		}
		data, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		var back blackjack.Game
		if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(*g, back) {
			t.Fatalf("reload of %s: %+v, %v", data, back, err)
		}
		if !g.Over() {
			if g.Multiplier() != 0 || g.Return() != 0 || g.Result() != "" {
				t.Fatalf("game in play pays %s, says %q", g.Multiplier(), g.Result())
			}
			return
		}
		dealer, _ := blackjack.Value(g.Dealer)
		natural := func(h []blackjack.Card) bool { v, _ := blackjack.Value(h); return len(h) == 2 && v == 21 }
		split := len(g.Second) > 0
		checkHand := func(hand []blackjack.Card, outcome blackjack.Outcome, doubled bool) {
			player, _ := blackjack.Value(hand)
			var ok bool
			switch outcome {
			case blackjack.PlayerBlackjack:
				ok = !split && natural(hand) && !natural(g.Dealer)
			case blackjack.EvenMoney:
				ok = !split && natural(hand) && g.Insurance == blackjack.EvenMoneyTaken
			case blackjack.DealerBlackjack:
				ok = !split && natural(g.Dealer) && !natural(hand)
			case blackjack.PlayerBust:
				ok = player > 21
			case blackjack.DealerBust:
				ok = player <= 21 && dealer > 21 && len(g.Dealer) > 2
			case blackjack.PlayerWins:
				ok = player <= 21 && dealer >= 17 && player > dealer
			case blackjack.DealerWins:
				ok = dealer <= 21 && dealer >= 17 && player < dealer
			case blackjack.Push:
				ok = player == dealer && (dealer >= 17 || natural(g.Dealer))
			default:
				ok = false
			}
			if !ok {
				t.Fatalf("outcome %q with player %s, dealer %s", outcome, blackjack.FormatHand(hand), blackjack.FormatHand(g.Dealer))
			}
			if doubled && len(hand) != 3 {
				t.Fatalf("doubled hand holds %d cards", len(hand))
			}
		}
		checkHand(g.Player, g.Outcome, g.Doubled)
		if split {
			checkHand(g.Second, g.SecondOutcome, g.SecondDoubled)
		}
		if g.Rules == blackjack.RulesClassic && (split || g.Insurance != blackjack.NoInsurance) {
			t.Fatalf("classic game split or insured: %s", data)
		}
	})
}
