// Package blackjack is the rules of Blackjack as a pure, serialisable state machine.
//
// Cards come from an unlimited deck, as in Stake's fairness docs (games.md §1, §7): each
// card is CARDS[floor(f × 52)] with CARDS in rank-major order 2♦ 2♥ 2♠ 2♣ 3♦ … A♦ A♥ A♠ A♣,
// every draw independent. A game pre-generates 52 cards (Stake's docs: 52 game events, so
// 52 floats from 7 HMAC rounds) and uses them in order. The deal order is player, dealer,
// player, dealer (cards 1 and 3 to the player, 2 and 4 to the dealer, the dealer's second
// card face down); public verifiers disagree on this and Stake does not document it. Hits
// and the dealer's draws take the following cards in order.
//
// Rules:
//   - Dealer stands on all 17s, soft 17 included.
//   - A natural (an ace and a ten-value card as the first two cards) ends the game at once.
//     The dealer peeks: a dealer natural beats every player hand except a player natural,
//     which pushes; a player natural against anything else pays 3:2 (2.5x total return).
//   - Player may Hit, Stand or Double. Double is allowed only on the first two cards: the
//     stake doubles, exactly one more card is drawn, then the dealer plays.
//   - A player reaching 21 stands automatically (hitting 21 is never right).
//   - A player bust loses at once, whatever the dealer would have drawn.
//   - Otherwise a dealer bust or a higher total wins 1:1 (2x), equal totals push (1x).
//   - Hand value: aces count 11, reduced to 1 one at a time while the total exceeds 21; a
//     hand is soft while an ace still counts 11.
//
// Split, insurance and surrender are not offered: the product has no buttons for them.
// Without split the RTP under optimal play is 98.91% (house edge 1.09%, computed exactly for
// the unlimited deck in the package tests), against the 0.57% edge Stake quotes for rules
// with split and double-after-split.
//
// Money stays outside: the game reports how many base stakes are at risk (Stakes, 1 or 2)
// and the total return on them (Multiplier: 0, 1, 2 or 2.5). The payout is
// money.MulFloor(bet × Stakes, Multiplier).
package blackjack

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/money"
)

// DeckSize is the number of cards pre-generated per game and the size of the card table.
const DeckSize = 52

// Suit is a card suit as the API spells it.
type Suit string

// The suits, in the order of the card table.
const (
	Diamonds Suit = "diamonds"
	Hearts   Suit = "hearts"
	Spades   Suit = "spades"
	Clubs    Suit = "clubs"
)

var (
	suits   = [4]Suit{Diamonds, Hearts, Spades, Clubs}
	symbols = map[Suit]string{Diamonds: "♦", Hearts: "♥", Spades: "♠", Clubs: "♣"}
	ranks   = [13]string{"2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"}
)

// Card is one of the 52 cards of the card table, by index: rank i/4 (2 … 10, J, Q, K, A)
// and suit i%4 (diamonds, hearts, spades, clubs). It serialises as its index, which keeps a
// stored game small; Face is the form the API shows.
type Card uint8

// CardAt returns card i (0 … 51) of the card table. It panics for any other i.
func CardAt(i int) Card {
	if i < 0 || i >= DeckSize {
		panic("blackjack: card index out of range")
	}
	return Card(i)
}

// DrawCard reads one float from src and returns CARDS[floor(f × 52)].
func DrawCard(src event.Source) Card {
	return Card(event.Index(src.Float(), DeckSize))
}

// NewDeck reads 52 floats from src: the cards of one game, in dealing order.
func NewDeck(src event.Source) []Card {
	deck := make([]Card, DeckSize)
	for i := range deck {
		deck[i] = DrawCard(src)
	}
	return deck
}

// Value returns the card's rank as the API spells it: "2" … "10", "J", "Q", "K", "A".
func (c Card) Value() string { return ranks[c/4] }

// Suit returns the card's suit.
func (c Card) Suit() Suit { return suits[c%4] }

// NumericValue returns the card's count: 2 … 10, 10 for a face card, 11 for an ace (which
// hand totals reduce to 1 as needed).
func (c Card) NumericValue() int {
	switch r := int(c / 4); {
	case r == 12:
		return 11
	case r >= 8:
		return 10
	default:
		return r + 2
	}
}

// String returns the card as rank and suit symbol, "10♥" or "A♠".
func (c Card) String() string { return c.Value() + symbols[c.Suit()] }

// MarshalJSON writes the card as its index. (Having it also keeps encoding/json from
// writing a []Card as base64, as it would for other byte slices.)
func (c Card) MarshalJSON() ([]byte, error) {
	return strconv.AppendUint(nil, uint64(c), 10), nil
}

// UnmarshalJSON reads a card index, rejecting anything but 0 … 51.
func (c *Card) UnmarshalJSON(data []byte) error {
	i, err := strconv.ParseUint(string(data), 10, 8)
	if err != nil || i >= DeckSize {
		return fmt.Errorf("blackjack card %s: %w", data, ErrInvalidState)
	}
	*c = Card(i)
	return nil
}

// Face returns the card as the API shows it.
func (c Card) Face() Face {
	return Face{Value: c.Value(), Suit: c.Suit(), NumericValue: c.NumericValue()}
}

// Face is a card as the API shows it. The dealer's face-down card is Face{Hidden: true},
// carrying no value, so a client cannot peek.
type Face struct {
	Value        string `json:"value"`        // "2" … "10", "J", "Q", "K", "A"
	Suit         Suit   `json:"suit"`         // "diamonds", "hearts", "spades", "clubs"
	NumericValue int    `json:"numericValue"` // 2 … 10, 10 for faces, 11 for an ace
	Hidden       bool   `json:"hidden"`
}

// faces returns the API form of a hand.
func faces(cards []Card) []Face {
	f := make([]Face, len(cards))
	for i, c := range cards {
		f[i] = c.Face()
	}
	return f
}

// Value returns the best total of a hand and whether it is soft (an ace counting 11).
func Value(cards []Card) (total int, soft bool) {
	aces := 0
	for _, c := range cards {
		n := c.NumericValue()
		total += n
		if n == 11 {
			aces++
		}
	}
	for total > 21 && aces > 0 {
		total -= 10
		aces--
	}
	return total, aces > 0
}

// isNatural reports a two-card 21.
func isNatural(cards []Card) bool {
	total, _ := Value(cards)
	return len(cards) == 2 && total == 21
}

// Outcome is how a game ended; the zero value means it is still in play.
type Outcome string

// Outcomes.
const (
	InPlay          Outcome = ""
	PlayerBlackjack Outcome = "blackjack"        // player natural, dealer none: 3:2
	DealerBust      Outcome = "dealer_bust"      // 1:1
	PlayerWins      Outcome = "win"              // higher total: 1:1
	Push            Outcome = "push"             // equal totals, or both naturals
	DealerWins      Outcome = "lose"             // lower total
	DealerBlackjack Outcome = "dealer_blackjack" // dealer natural, player none
	PlayerBust      Outcome = "bust"             // player over 21
)

// results maps outcomes to the banner text. The product colours a banner green when it
// contains "You win", blue when it contains "Push" and red otherwise.
var results = map[Outcome]string{
	PlayerBlackjack: "Blackjack! You win",
	DealerBust:      "Dealer busts! You win",
	PlayerWins:      "You win",
	Push:            "Push",
	DealerWins:      "Dealer wins",
	DealerBlackjack: "Dealer has Blackjack! Dealer wins",
	PlayerBust:      "Bust! Dealer wins",
}

// multipliers maps outcomes to the total return on the total stake.
var multipliers = map[Outcome]money.Multiplier{
	PlayerBlackjack: 25_000,
	DealerBust:      2 * money.One,
	PlayerWins:      2 * money.One,
	Push:            money.One,
}

// Errors of the rules. Texts are worded for users, since a handler may show them as is.
var (
	ErrGameOver      = errors.New("Game is already over")
	ErrCannotDouble  = errors.New("You can only double down on your first two cards")
	ErrDeckExhausted = errors.New("The game ran out of pre-generated cards")
	ErrInvalidState  = errors.New("Stored blackjack game is inconsistent with its deck")
)

// Game is a Blackjack game between actions. Its exported fields serialise to compact JSON
// (cards as their indexes) so a server can keep it in a database row. Deck, and the dealer's hole card while the game is
// in play, are secret: send View to the client, never the Game.
type Game struct {
	Deck    []Card  `json:"deck"`    // pre-generated cards in dealing order
	Next    int     `json:"next"`    // index in Deck of the next card to deal
	Player  []Card  `json:"player"`  // the player's hand
	Dealer  []Card  `json:"dealer"`  // the dealer's hand; Dealer[1] is the hole card
	Doubled bool    `json:"doubled"` // the player doubled down
	Outcome Outcome `json:"outcome"` // InPlay until the game ends
}

// New deals a game from a pre-generated deck (normally NewDeck's 52 cards; at least 4; a
// card outside the table is ErrInvalidState):
// player, dealer, player, dealer. If either side has a natural the game is over at once.
func New(deck []Card) (*Game, error) {
	if len(deck) < 4 {
		return nil, ErrDeckExhausted
	}
	for _, c := range deck {
		if c >= DeckSize {
			return nil, ErrInvalidState
		}
	}
	g := &Game{
		Deck:   slices.Clone(deck),
		Next:   4,
		Player: []Card{deck[0], deck[2]},
		Dealer: []Card{deck[1], deck[3]},
	}
	switch p, d := isNatural(g.Player), isNatural(g.Dealer); {
	case p && d:
		g.Outcome = Push
	case p:
		g.Outcome = PlayerBlackjack
	case d:
		g.Outcome = DealerBlackjack
	}
	return g, nil
}

// Over reports whether the game has ended.
func (g *Game) Over() bool { return g.Outcome != InPlay }

// CanDouble reports whether Double is allowed now: in play, with the first two cards.
func (g *Game) CanDouble() bool { return !g.Over() && len(g.Player) == 2 }

// Hit deals the player one card. A bust ends the game; reaching 21 stands automatically.
func (g *Game) Hit() error {
	return g.apply(func(g *Game) error {
		if err := g.draw(&g.Player); err != nil {
			return err
		}
		switch total, _ := Value(g.Player); {
		case total > 21:
			g.Outcome = PlayerBust
		case total == 21:
			return g.dealerPlays()
		}
		return nil
	})
}

// Stand ends the player's turn: the dealer plays and the game is settled.
func (g *Game) Stand() error {
	return g.apply(func(g *Game) error { return g.dealerPlays() })
}

// Double doubles the stake on the first two cards, deals exactly one more card and, unless
// the player busts, lets the dealer play. The caller must have taken the second stake.
func (g *Game) Double() error {
	return g.apply(func(g *Game) error {
		if len(g.Player) != 2 {
			return ErrCannotDouble
		}
		g.Doubled = true
		if err := g.draw(&g.Player); err != nil {
			return err
		}
		if total, _ := Value(g.Player); total > 21 {
			g.Outcome = PlayerBust
			return nil
		}
		return g.dealerPlays()
	})
}

// apply runs an action on a copy of an in-play game and keeps the result only if it
// succeeds, so a failed action leaves the game exactly as it was.
func (g *Game) apply(action func(*Game) error) error {
	if g.Over() {
		return ErrGameOver
	}
	if !g.valid() {
		return ErrInvalidState
	}
	c := *g
	c.Player = slices.Clone(g.Player)
	c.Dealer = slices.Clone(g.Dealer)
	if err := action(&c); err != nil {
		return err
	}
	*g = c
	return nil
}

// valid reports whether a game, typically one just read back from storage, is consistent:
// every card on the table, at least the deal dealt, and no more dealt than the deck holds.
func (g *Game) valid() bool {
	if g.Next < 4 || g.Next > len(g.Deck) || len(g.Player) < 2 || len(g.Dealer) < 2 ||
		len(g.Player)+len(g.Dealer) != g.Next {
		return false
	}
	for _, hand := range [][]Card{g.Deck, g.Player, g.Dealer} {
		for _, c := range hand {
			if c >= DeckSize {
				return false
			}
		}
	}
	return true
}

// draw moves the next card of the deck onto a hand.
func (g *Game) draw(hand *[]Card) error {
	if g.Next >= len(g.Deck) {
		return ErrDeckExhausted
	}
	*hand = append(*hand, g.Deck[g.Next])
	g.Next++
	return nil
}

// dealerPlays draws for the dealer below 17 (standing on soft 17) and settles.
func (g *Game) dealerPlays() error {
	for {
		if total, _ := Value(g.Dealer); total >= 17 {
			break
		}
		if err := g.draw(&g.Dealer); err != nil {
			return err
		}
	}
	player, _ := Value(g.Player)
	dealer, _ := Value(g.Dealer)
	switch {
	case dealer > 21:
		g.Outcome = DealerBust
	case player > dealer:
		g.Outcome = PlayerWins
	case player == dealer:
		g.Outcome = Push
	default:
		g.Outcome = DealerWins
	}
	return nil
}

// Result returns the banner text of a finished game ("Blackjack! You win", "Push",
// "Bust! Dealer wins", …), or "" while it is in play.
func (g *Game) Result() string { return results[g.Outcome] }

// Stakes returns the number of base bets at risk: 2 after a double, else 1.
func (g *Game) Stakes() int64 {
	if g.Doubled {
		return 2
	}
	return 1
}

// Multiplier returns the total return on the total stake of a finished game: 2.5 for a
// player natural, 2 for a win, 1 for a push, 0 for a loss, and 0 while in play.
func (g *Game) Multiplier() money.Multiplier { return multipliers[g.Outcome] }

// View is what the client may see of a game: while it is in play the dealer's hole card
// is hidden and the dealer's total counts the up card only.
type View struct {
	PlayerHand  []Face `json:"playerHand"`
	DealerHand  []Face `json:"dealerHand"`
	PlayerValue int    `json:"playerValue"`
	PlayerSoft  bool   `json:"playerSoft"`
	DealerValue int    `json:"dealerValue"`
	Result      string `json:"result"`
	GameOver    bool   `json:"gameOver"`
	CanDouble   bool   `json:"canDouble"`
}

// View returns the client's view of the game.
func (g *Game) View() View {
	v := View{
		PlayerHand: faces(g.Player),
		DealerHand: faces(g.Dealer),
		Result:     g.Result(),
		GameOver:   g.Over(),
		CanDouble:  g.CanDouble(),
	}
	v.PlayerValue, v.PlayerSoft = Value(g.Player)
	if !g.Over() && len(v.DealerHand) > 1 {
		v.DealerHand[1] = Face{Hidden: true}
		v.DealerValue, _ = Value(g.Dealer[:1])
	} else {
		v.DealerValue, _ = Value(g.Dealer)
	}
	return v
}

// FormatHand renders a hand for logs and the verifier: "A♠ 10♥ (21, soft)".
func FormatHand(cards []Card) string {
	b := make([]byte, 0, 4*len(cards)+12)
	for i, c := range cards {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, c.String()...)
	}
	total, soft := Value(cards)
	b = append(b, " ("...)
	b = strconv.AppendInt(b, int64(total), 10)
	if soft {
		b = append(b, ", soft"...)
	}
	return string(append(b, ')'))
}
