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
// Rules (RulesSplit, the rules every game is dealt under since issue 19; the classic rules,
// RulesClassic, are the same without split, insurance and even money, and remain only so
// that older bets replay exactly):
//   - Dealer stands on all 17s, soft 17 included. Blackjack pays 3:2.
//   - The hole card is the deck's fourth card, fixed by the deal like every later card.
//   - Dealer's up card an ace: before anything else the player is offered insurance (half a
//     stake, paying 2:1 if the dealer has a natural) or, holding a natural, even money (1:1
//     at once, which ends the game whatever the hole card). Accept or decline; then the
//     dealer peeks. Until the decision nothing the player sees depends on the hole card,
//     and every other action is refused with the same message.
//   - Dealer's up card ten-valued: the dealer peeks at once. A dealer natural beats every
//     player hand except a player natural, which pushes; the player loses only the
//     original stake. A player natural against anything else pays 3:2 (2.5x total return).
//   - Player may Hit, Stand, Double or Split. Double is allowed on the first two cards of a
//     hand, after a split too: the hand's stake doubles, exactly one more card is drawn and
//     the hand ends.
//   - Split: the first two cards of the same rank (so 10-10 and K-K split, 10-K does not;
//     Stake does not document this) become two hands, each with the original stake. The
//     first hand takes the next card of the deck, the second hand the card after it; hand
//     1 is played to the end, then hand 2, each drawing the following cards in order. One
//     split per game (no re-split). Split aces take their one card each and stand. A 21 on
//     a split hand is not a natural: it pays 1:1.
//   - A hand reaching 21 stands automatically (hitting 21 is never right).
//   - A bust hand loses at once, whatever the dealer would have drawn; if every hand busts
//     the dealer draws nothing.
//   - Otherwise a dealer bust or a higher total wins 1:1 (2x), equal totals push (1x).
//   - Hand value: aces count 11, reduced to 1 one at a time while the total exceeds 21; a
//     hand is soft while an ace still counts 11.
//
// RTP, computed exactly in the package tests (rtp_test.go) by a recursion over card
// probabilities (each rank 1/13, ten-valued cards 4/13; the dealer's hand conditioned on no
// natural once the dealer has peeked) with the expected-value-maximising decision at every
// point — stand, hit, double, split (each split hand played optimally, with double after
// split), insurance and even money declined (insurance returns 12/13 of its stake here, an
// edge of 7.69%; even money returns 1 against the 1.0385 of declining) — is 99.4296%: a house
// edge of 0.5704%, Stake's published 0.57%. The classic rules' RTP is 98.91%. A simulation
// through the real fairness stream checks the figure.
//
// Money stays outside: the game reports how many base stakes are at risk (Stakes: 1, plus 1
// per double, 1 for a split, 0.5 for insurance) and the total return per base stake
// (Return). The payout is money.MulFloor(base stake, Return); Multiplier is the return on
// the total stake, for display.
package blackjack

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
func (c Card) String() string {
	if int(c) < DeckSize {
		return cardNames[c]
	}
	return c.Value() + symbols[c.Suit()]
}

// cardNames are the cards' texts, made once: a text made per call took an
// allocation whose size told a ten (five bytes) from another rank.
var cardNames = func() (n [DeckSize]string) {
	for i := range n {
		c := Card(i)
		n[i] = c.Value() + symbols[c.Suit()]
	}
	return n
}()

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

// Outcome is how a hand ended; the zero value means it is still in play.
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
	EvenMoney       Outcome = "even_money"       // player natural, dealer ace up, even money taken: 1:1
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
	EvenMoney:       "Even money! You win",
}

// multipliers maps outcomes to the total return on a hand's stake.
var multipliers = map[Outcome]money.Multiplier{
	PlayerBlackjack: 25_000,
	DealerBust:      2 * money.One,
	PlayerWins:      2 * money.One,
	Push:            money.One,
	EvenMoney:       2 * money.One,
}

// Rules is a rule set. A game records the rules it was dealt under, and the verifier replays
// a bet under the rules its parameters name, so bets placed before split and insurance
// existed still verify exactly as they were played.
type Rules int

// The rule sets.
const (
	// RulesClassic are the first rules: Hit, Stand and Double only; with an ace up the
	// dealer peeks at once, as with a ten up.
	RulesClassic Rules = 0
	// RulesSplit add split, double after split, insurance and even money.
	RulesSplit Rules = 1
)

// Insurance is the state of the insurance (or even money) offer.
type Insurance string

// Insurance states.
const (
	NoInsurance       Insurance = ""           // never offered: the dealer's up card is not an ace
	InsuranceOffered  Insurance = "offered"    // the dealer shows an ace: the player must decide first
	InsuranceTaken    Insurance = "taken"      // half a stake, pays 2:1 if the dealer has a natural
	InsuranceDeclined Insurance = "declined"   // declined (insurance or even money)
	EvenMoneyTaken    Insurance = "even_money" // a player natural took 1:1 at once
)

// insuranceWin is the total return of a won insurance bet, per base stake: half a stake
// back plus 2:1 on it.
const insuranceWin = 15_000

// Errors of the rules. Texts are worded for users, since a handler may show them as is.
var (
	ErrGameOver       = errors.New("Game is already over")
	ErrCannotDouble   = errors.New("You can only double down on your first two cards")
	ErrCannotSplit    = errors.New("Split is not allowed now: only the first two cards of equal rank, once per game")
	ErrInsuranceFirst = errors.New("Accept or decline insurance first")
	ErrNoInsurance    = errors.New("Insurance is not offered now")
	ErrDeckExhausted  = errors.New("The game ran out of pre-generated cards")
	ErrInvalidState   = errors.New("Stored blackjack game is inconsistent with its deck")
	ErrUnknownRules   = errors.New("Unknown blackjack rules")
)

// Game is a Blackjack game between actions. Its exported fields serialise to compact JSON
// (cards as their indexes) so a server can keep it in a database row; the fields the split
// rules added are omitted when unused, so a classic game reads and writes as it always did.
// Deck, and the dealer's hole card while the game is in play, are secret: send View to the
// client, never the Game.
type Game struct {
	Deck    []Card  `json:"deck"`    // pre-generated cards in dealing order
	Next    int     `json:"next"`    // index in Deck of the next card to deal
	Player  []Card  `json:"player"`  // the player's hand; after a split, the first hand
	Dealer  []Card  `json:"dealer"`  // the dealer's hand; Dealer[1] is the hole card
	Doubled bool    `json:"doubled"` // the (first) hand doubled down
	Outcome Outcome `json:"outcome"` // how the (first) hand ended; InPlay until then

	Rules     Rules     `json:"rules,omitempty"`     // the rule set the game was dealt under
	Insurance Insurance `json:"insurance,omitempty"` // the insurance offer and the decision
	// After a split: the second hand, whether it doubled and how it ended.
	Second        []Card  `json:"second,omitempty"`
	SecondDoubled bool    `json:"secondDoubled,omitempty"`
	SecondOutcome Outcome `json:"secondOutcome,omitempty"`
	// Hand is the hand in play: 0 the first, 1 the second (after a split).
	Hand int `json:"hand,omitempty"`
}

// New deals a game under the classic rules (RulesClassic): see Deal.
func New(deck []Card) (*Game, error) { return Deal(deck, RulesClassic) }

// Deal deals a game under the given rules from a pre-generated deck (normally NewDeck's 52
// cards; at least 4; a card outside the table is ErrInvalidState): player, dealer, player,
// dealer. The hole card is therefore fixed by the deal, before any decision.
//
// If the dealer's up card is an ace and the rules have insurance, the game waits for the
// insurance decision (Insure) before the dealer peeks: the offer, and everything the
// player sees until the decision, is the same whatever the hole card. Otherwise the dealer
// peeks at once: a natural on either side ends the game.
func Deal(deck []Card, rules Rules) (*Game, error) {
	if rules != RulesClassic && rules != RulesSplit {
		return nil, ErrUnknownRules
	}
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
		Rules:  rules,
	}
	if rules == RulesSplit && g.Dealer[0].NumericValue() == 11 {
		g.Insurance = InsuranceOffered
		return g, nil
	}
	g.peek()
	return g, nil
}

// peek settles the naturals: the dealer's (which beats every player hand except a player
// natural) and the player's (which pays 3:2).
func (g *Game) peek() {
	switch p, d := isNatural(g.Player), isNatural(g.Dealer); {
	case p && d:
		g.Outcome = Push
	case p:
		g.Outcome = PlayerBlackjack
	case d:
		g.Outcome = DealerBlackjack
	}
}

// split reports whether the player has split.
func (g *Game) split() bool { return len(g.Second) > 0 }

// Over reports whether the game has ended: every hand has an outcome.
func (g *Game) Over() bool {
	return g.Outcome != InPlay && (!g.split() || g.SecondOutcome != InPlay)
}

// InsurancePending reports whether the game waits for the insurance decision.
func (g *Game) InsurancePending() bool { return !g.Over() && g.Insurance == InsuranceOffered }

// EvenMoneyOffered reports whether the pending offer is even money (the player has a natural).
func (g *Game) EvenMoneyOffered() bool { return g.InsurancePending() && isNatural(g.Player) }

// hand returns the hand in play, whether it doubled and its outcome.
func (g *Game) hand() (*[]Card, *bool, *Outcome) {
	if g.Hand == 1 {
		return &g.Second, &g.SecondDoubled, &g.SecondOutcome
	}
	return &g.Player, &g.Doubled, &g.Outcome
}

// CanDouble reports whether Double is allowed now: in play, no insurance decision pending,
// with the first two cards of the hand in play (after a split too).
func (g *Game) CanDouble() bool {
	if g.Over() || g.InsurancePending() {
		return false
	}
	cards, _, _ := g.hand()
	return len(*cards) == 2
}

// CanSplit reports whether Split is allowed now: under the split rules, in play, no
// insurance decision pending, not split yet, and the first two cards of the same rank
// (10-10 and K-K split, 10-K does not).
func (g *Game) CanSplit() bool {
	return g.Rules == RulesSplit && !g.Over() && !g.InsurancePending() && !g.split() &&
		len(g.Player) == 2 && g.Player[0].Value() == g.Player[1].Value()
}

// Insure records the insurance decision while it is pending. Accepting with a player
// natural is even money: the game ends at once paying 1:1 whatever the hole card.
// Otherwise accepting takes insurance (the caller must have taken half a stake), then the
// dealer peeks: a dealer natural ends the game (insurance paying 2:1), else insurance is
// lost and a player natural pays 3:2 or the player plays on.
func (g *Game) Insure(accept bool) error {
	return g.apply(func(g *Game) error {
		if !g.InsurancePending() {
			return ErrNoInsurance
		}
		switch {
		case accept && isNatural(g.Player):
			g.Insurance, g.Outcome = EvenMoneyTaken, EvenMoney
			return nil
		case accept:
			g.Insurance = InsuranceTaken
		default:
			g.Insurance = InsuranceDeclined
		}
		g.peek()
		return nil
	})
}

// Hit deals one card to the hand in play. A bust ends the hand (and the game, once no hand
// is left standing); reaching 21 stands automatically.
func (g *Game) Hit() error {
	return g.play(func(g *Game) error {
		cards, _, outcome := g.hand()
		if err := g.draw(cards); err != nil {
			return err
		}
		switch total, _ := Value(*cards); {
		case total > 21:
			*outcome = PlayerBust
			return g.nextHand()
		case total == 21:
			return g.nextHand()
		}
		return nil
	})
}

// Stand ends the hand in play: the next hand is played, or the dealer plays and the game
// is settled.
func (g *Game) Stand() error {
	return g.play(func(g *Game) error { return g.nextHand() })
}

// Double doubles the stake of the hand in play on its first two cards (also after a
// split), deals exactly one more card and ends the hand. The caller must have taken the
// extra stake.
func (g *Game) Double() error {
	return g.play(func(g *Game) error {
		cards, doubled, outcome := g.hand()
		if len(*cards) != 2 {
			return ErrCannotDouble
		}
		*doubled = true
		if err := g.draw(cards); err != nil {
			return err
		}
		if total, _ := Value(*cards); total > 21 {
			*outcome = PlayerBust
		}
		return g.nextHand()
	})
}

// Split splits two cards of the same rank into two hands, each with a stake equal to the
// first (the caller must have taken the second stake). The first hand then takes the next
// card of the deck and the second hand the card after it; the first hand is played, then
// the second. Split aces take their one card each and stand. There is no re-split, and a
// 21 on a split hand is not a natural (it pays 1:1).
func (g *Game) Split() error {
	return g.play(func(g *Game) error {
		if !g.CanSplit() {
			return ErrCannotSplit
		}
		aces := g.Player[0].NumericValue() == 11
		g.Second = []Card{g.Player[1]}
		g.Player = g.Player[:1]
		if err := g.draw(&g.Player); err != nil {
			return err
		}
		if err := g.draw(&g.Second); err != nil {
			return err
		}
		if aces {
			g.Hand = 1
			return g.dealerPlays()
		}
		if total, _ := Value(g.Player); total == 21 {
			return g.nextHand()
		}
		return nil
	})
}

// nextHand ends the hand in play: after the first of two split hands the second is played
// (standing at once on 21); after the last hand the dealer plays.
func (g *Game) nextHand() error {
	if g.split() && g.Hand == 0 {
		g.Hand = 1
		if total, _ := Value(g.Second); total == 21 {
			return g.nextHand()
		}
		return nil
	}
	return g.dealerPlays()
}

// play runs a playing action (not the insurance decision), refused while insurance is
// pending.
func (g *Game) play(action func(*Game) error) error {
	if g.InsurancePending() {
		return ErrInsuranceFirst
	}
	return g.apply(action)
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
	c.Second = slices.Clone(g.Second)
	if err := action(&c); err != nil {
		return err
	}
	*g = c
	return nil
}

// valid reports whether a game, typically one just read back from storage, is consistent:
// every card on the table, at least the deal dealt, no more dealt than the deck holds, and
// the split and insurance fields only where the rules have them.
func (g *Game) valid() bool {
	if g.Next < 4 || g.Next > len(g.Deck) || len(g.Player) < 2 || len(g.Dealer) < 2 ||
		len(g.Player)+len(g.Dealer)+len(g.Second) != g.Next {
		return false
	}
	switch {
	case g.Rules != RulesClassic && g.Rules != RulesSplit,
		g.Rules == RulesClassic && (g.split() || g.Insurance != NoInsurance),
		g.split() && len(g.Second) < 2,
		g.Hand != 0 && (g.Hand != 1 || !g.split()):
		return false
	}
	for _, hand := range [][]Card{g.Deck, g.Player, g.Dealer, g.Second} {
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

// dealerPlays draws for the dealer below 17 (standing on soft 17) and settles every hand
// still standing. If every hand has bust the dealer draws nothing.
func (g *Game) dealerPlays() error {
	standing := g.Outcome == InPlay || (g.split() && g.SecondOutcome == InPlay)
	if !standing {
		return nil
	}
	for {
		if total, _ := Value(g.Dealer); total >= 17 {
			break
		}
		if err := g.draw(&g.Dealer); err != nil {
			return err
		}
	}
	dealer, _ := Value(g.Dealer)
	settle := func(cards []Card, outcome *Outcome) {
		if *outcome != InPlay {
			return
		}
		switch player, _ := Value(cards); {
		case dealer > 21:
			*outcome = DealerBust
		case player > dealer:
			*outcome = PlayerWins
		case player == dealer:
			*outcome = Push
		default:
			*outcome = DealerWins
		}
	}
	settle(g.Player, &g.Outcome)
	if g.split() {
		settle(g.Second, &g.SecondOutcome)
	}
	return nil
}

// insurancePays reports a won insurance bet.
func (g *Game) insurancePays() bool {
	return g.Insurance == InsuranceTaken && g.Over() && isNatural(g.Dealer)
}

// Result returns the banner text of a finished game ("Blackjack! You win", "Push",
// "Bust! Dealer wins", …), or "" while it is in play. After a split it gives both hands,
// "Hand 1: You win. Hand 2: Push"; a won insurance adds ". Insurance pays 2:1".
func (g *Game) Result() string {
	if !g.Over() {
		return ""
	}
	text := results[g.Outcome]
	if g.split() {
		text = "Hand 1: " + text + ". Hand 2: " + results[g.SecondOutcome]
	}
	if g.insurancePays() {
		text += ". Insurance pays 2:1"
	}
	return text
}

// HandResults returns the banner text of each hand once the game is over: one entry, or
// two after a split; nil while it is in play.
func (g *Game) HandResults() []string {
	if !g.Over() {
		return nil
	}
	if !g.split() {
		return []string{results[g.Outcome]}
	}
	return []string{results[g.Outcome], results[g.SecondOutcome]}
}

// Stakes returns the total stake in base stakes: 1, plus 1 for each doubled hand, 1 for a
// split and 0.5 for insurance (1, 1.5, 2, 3 or 4).
func (g *Game) Stakes() money.Multiplier {
	s := money.One
	if g.Doubled {
		s += money.One
	}
	if g.split() {
		s += money.One
		if g.SecondDoubled {
			s += money.One
		}
	}
	if g.Insurance == InsuranceTaken {
		s += money.One / 2
	}
	return s
}

// Return returns the total return of a finished game per base stake, exactly: each hand's
// return (2.5 for a natural, 2 for a win or even money, 1 for a push, 0 for a loss, twice
// that for a doubled hand) plus 1.5 for a won insurance; 0 while the game is in play. The
// payout is money.MulFloor(base stake, Return).
func (g *Game) Return() money.Multiplier {
	if !g.Over() {
		return 0
	}
	hand := func(o Outcome, doubled bool) money.Multiplier {
		if doubled {
			return 2 * multipliers[o]
		}
		return multipliers[o]
	}
	r := hand(g.Outcome, g.Doubled)
	if g.split() {
		r += hand(g.SecondOutcome, g.SecondDoubled)
	}
	if g.insurancePays() {
		r += insuranceWin
	}
	return r
}

// Multiplier returns the total return on the total stake of a finished game (Return ÷
// Stakes, rounded down to the multiplier's 4 decimals): 2.5 for a natural, 2 for a win, 1
// for a push, 0 for a loss, 1 for a lost hand whose won insurance paid, and 0 while in
// play. For a game without split or insurance it is exact. Payouts use Return.
func (g *Game) Multiplier() money.Multiplier {
	return g.Return() * money.One / g.Stakes()
}

// View is what the client may see of a game: while it is in play the dealer's hole card
// is hidden and the dealer's total counts the up card only. Nothing in it depends on the
// hole card or the undealt cards until the rules reveal them.
type View struct {
	PlayerHand  []Face `json:"playerHand"`
	DealerHand  []Face `json:"dealerHand"`
	PlayerValue int    `json:"playerValue"`
	PlayerSoft  bool   `json:"playerSoft"`
	DealerValue int    `json:"dealerValue"`
	Result      string `json:"result"`
	GameOver    bool   `json:"gameOver"`
	CanDouble   bool   `json:"canDouble"`
	// The split and insurance rules:
	CanSplit    bool      `json:"canSplit"`
	Insurance   Insurance `json:"insurance"`   // "offered" while the decision is pending
	EvenMoney   bool      `json:"evenMoney"`   // the pending offer is even money
	SecondHand  []Face    `json:"secondHand"`  // after a split, the second hand (PlayerHand is the first)
	SecondValue int       `json:"secondValue"` // its total
	ActiveHand  int       `json:"activeHand"`  // the hand in play: 0 or 1
	Doubled     []bool    `json:"doubled"`     // per hand
	HandResults []string  `json:"handResults"` // per hand, once over
	// Stakes is the total stake in base stakes (1, 1.5, 2, 3 or 4).
	Stakes money.Multiplier `json:"stakes"`
}

// View returns the client's view of the game.
func (g *Game) View() View {
	v := View{
		PlayerHand:  faces(g.Player),
		DealerHand:  faces(g.Dealer),
		Result:      g.Result(),
		GameOver:    g.Over(),
		CanDouble:   g.CanDouble(),
		CanSplit:    g.CanSplit(),
		Insurance:   g.Insurance,
		EvenMoney:   g.EvenMoneyOffered(),
		SecondHand:  faces(g.Second),
		ActiveHand:  g.Hand,
		Doubled:     []bool{g.Doubled},
		HandResults: g.HandResults(),
		Stakes:      g.Stakes(),
	}
	if g.split() {
		v.Doubled = append(v.Doubled, g.SecondDoubled)
		v.SecondValue, _ = Value(g.Second)
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
	// One allocation, sized by the number of cards alone, with room for
	// the longest text: a ten takes five bytes ("10♥"), a space one, and
	// " (21, soft)" eleven. A deal's hands are formatted before Postgres
	// checks its stake, so neither how many allocations nor how large may
	// depend on the cards (internal/play's TestDealDoesTheSameWork): a text
	// that outgrew a smaller buffer took one more, and a copy sized to the
	// text told an ace and a ten apart.
	var b strings.Builder
	b.Grow(6*len(cards) + 12)
	for i, c := range cards {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.String())
	}
	total, soft := Value(cards)
	b.WriteString(" (")
	b.WriteString(strconv.Itoa(total)) // a total under 100: no allocation
	if soft {
		b.WriteString(", soft")
	}
	b.WriteByte(')')
	return b.String()
}
