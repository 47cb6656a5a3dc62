// Package games gathers the six games for the fairness verifier (`fairplay fair verify`):
// Replay reproduces the outcome of any bet from its float stream and its parameters, so a
// player holding the revealed server seed can check every result.
//
// The rules themselves live in the subpackages (dice, plinko, keno, mines, pump,
// blackjack), which read floats through event.Source. Neither this package nor they import
// the fairness engine: the caller passes fair.NewStream(serverSeed, clientSeed, nonce).
package games

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fairplay/fairplay/internal/games/blackjack"
	"github.com/fairplay/fairplay/internal/games/dice"
	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/games/keno"
	"github.com/fairplay/fairplay/internal/games/mines"
	"github.com/fairplay/fairplay/internal/games/plinko"
	"github.com/fairplay/fairplay/internal/games/pump"
	"github.com/fairplay/fairplay/internal/jsontext"
	"github.com/fairplay/fairplay/internal/money"
)

// Name identifies a game, as the API and the verifier spell it.
type Name string

// The games.
const (
	Dice      Name = "dice"
	Mines     Name = "mines"
	Plinko    Name = "plinko"
	Pump      Name = "pump"
	Keno      Name = "keno"
	Blackjack Name = "blackjack"
)

// Names lists the games in the order the product shows them.
var Names = []Name{Dice, Mines, Plinko, Pump, Keno, Blackjack}

// Errors of Replay.
var (
	ErrUnknownGame   = errors.New("unknown game")
	ErrInvalidParams = errors.New("invalid parameters")
)

// ParseName validates a game name.
func ParseName(s string) (Name, error) {
	for _, n := range Names {
		if string(n) == s {
			return n, nil
		}
	}
	return "", fmt.Errorf("game %q: %w", s, ErrUnknownGame)
}

// Params are a bet's parameters. Each game reads only its own; the player's later actions
// in the stateful games are optional, and without them Replay reports the hidden layout
// (mines, pops, cards) that decided the game.
type Params struct {
	Target     string `json:"target,omitempty"`     // dice: roll-under target, "50" or "49.5"
	Rows       int    `json:"rows,omitempty"`       // plinko: 8 … 16
	Risk       string `json:"risk,omitempty"`       // plinko: low/medium/high; keno: classic/low/medium/high
	Picks      []int  `json:"picks,omitempty"`      // keno: the marked numbers
	Mines      int    `json:"mines,omitempty"`      // mines: 1 … 24
	Reveals    []int  `json:"reveals,omitempty"`    // mines, optional: tiles revealed in order, then a cash-out
	Difficulty string `json:"difficulty,omitempty"` // pump: easy/medium/hard/expert
	Pumps      int    `json:"pumps,omitempty"`      // pump, optional: pumps attempted before cashing out
	Actions    string `json:"actions,omitempty"`    // blackjack, optional: "h" hit, "s" stand, "d" double, "p" split, "i" take insurance (or even money), "n" decline it, in order
	// Rules is the blackjack rule set: 1 (split, insurance, even money) for games dealt
	// since issue 19, absent (0) for the classic rules of earlier games.
	Rules int `json:"rules,omitempty"`
}

// AppendJSON appends p as json.Marshal writes it (its fields in order, the
// empty ones left out), without its reflection (TestParamsAppendJSONIsMarshal).
func (p Params) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	start := len(b)
	b = appendStringField(b, start, "target", p.Target)
	b = appendIntField(b, start, "rows", p.Rows)
	b = appendStringField(b, start, "risk", p.Risk)
	b = appendIntsField(b, start, "picks", p.Picks)
	b = appendIntField(b, start, "mines", p.Mines)
	b = appendIntsField(b, start, "reveals", p.Reveals)
	b = appendStringField(b, start, "difficulty", p.Difficulty)
	b = appendIntField(b, start, "pumps", p.Pumps)
	b = appendStringField(b, start, "actions", p.Actions)
	b = appendIntField(b, start, "rules", p.Rules)
	return append(b, '}')
}

// appendKey appends a field's name, after a comma unless it is the first
// (nothing written since start).
func appendKey(b []byte, start int, name string) []byte {
	if len(b) > start {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// appendStringField, appendIntField and appendIntsField append a field
// that is not empty (omitempty).
func appendStringField(b []byte, start int, name, v string) []byte {
	if v == "" {
		return b
	}
	return jsontext.AppendString(appendKey(b, start, name), v)
}

func appendIntField(b []byte, start int, name string, v int) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(appendKey(b, start, name), int64(v), 10)
}

func appendIntsField(b []byte, start int, name string, v []int) []byte {
	if len(v) == 0 {
		return b
	}
	return jsontext.AppendInts(appendKey(b, start, name), v)
}

// Outcome is a replayed bet: exactly one of the game fields is set.
type Outcome struct {
	Game      Name             `json:"game"`
	Dice      *dice.Outcome    `json:"dice,omitempty"`
	Plinko    *plinko.Outcome  `json:"plinko,omitempty"`
	Keno      *keno.Outcome    `json:"keno,omitempty"`
	Mines     *MinesReplay     `json:"mines,omitempty"`
	Pump      *PumpReplay      `json:"pump,omitempty"`
	Blackjack *BlackjackReplay `json:"blackjack,omitempty"`
}

// MinesReplay is a replayed Mines game.
type MinesReplay struct {
	Mines     int      `json:"mines"`
	MineTiles []int    `json:"mineTiles"`     // tile numbers 0 … 24, in draw order
	Positions []string `json:"minePositions"` // the same as "row,col"
	// Set when reveals were given:
	Revealed   []int            `json:"revealed,omitempty"`
	Status     mines.Status     `json:"status,omitempty"`
	Multiplier money.Multiplier `json:"multiplier"` // total return on the stake
}

// PumpReplay is a replayed Pump game.
type PumpReplay struct {
	Difficulty pump.Difficulty `json:"difficulty"`
	Pops       []int           `json:"pops"`      // pop positions 1 … 25, in draw order
	BurstAt    int             `json:"burstAt"`   // the pump that bursts the balloon
	SafePumps  int             `json:"safePumps"` // BurstAt − 1, capped at the difficulty's maximum
	// BestMultiplier is what cashing out after every safe pump would have paid.
	BestMultiplier money.Multiplier `json:"bestMultiplier"`
	// Set when pumps were given:
	Status     pump.Status      `json:"status,omitempty"`
	Multiplier money.Multiplier `json:"multiplier"` // total return on the stake
}

// BlackjackReplay is a replayed Blackjack game.
type BlackjackReplay struct {
	Deck   []string `json:"deck"` // the 52 pre-generated cards in dealing order, "10♥"
	Player string   `json:"player"`
	Dealer string   `json:"dealer"`
	Result string   `json:"result"` // "" while the given actions leave the game in play
	// Stakes is the total stake in base stakes: 1, plus 1 per double, 1 for a split, 0.5
	// for insurance.
	Stakes money.Multiplier `json:"stakes"`
	// Multiplier is the total return on the total stake (rounded down to 4 decimals when
	// the split rules make it inexact; the payout uses Return).
	Multiplier money.Multiplier `json:"multiplier"`
	// Under the split rules (rules 1) only, so that older games verify as recorded:
	Rules     int                 `json:"rules,omitempty"`
	Second    string              `json:"second,omitempty"`    // the second hand after a split
	Insurance blackjack.Insurance `json:"insurance,omitempty"` // the insurance decision, if offered
	// Return is the total return per base stake (the payout is base stake × Return).
	Return money.Multiplier `json:"return,omitempty"`
}

// AppendJSON appends r as json.Marshal writes it, without its reflection
// (TestBlackjackAppendJSONIsMarshal). A settled game's outcome is recorded
// this way into a buffer its longest fits, so that recording it allocates
// the same whatever the cards: Marshal left out a zero return (omitempty)
// without calling its MarshalJSON, so a deal that paid took an allocation
// more than one that lost (internal/play's TestDealDoesTheSameWork).
func (r *BlackjackReplay) AppendJSON(b []byte) []byte {
	b = append(b, `{"deck":`...)
	if r.Deck == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range r.Deck {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsontext.AppendString(b, c)
		}
		b = append(b, ']')
	}
	b = append(b, `,"player":`...)
	b = jsontext.AppendString(b, r.Player)
	b = append(b, `,"dealer":`...)
	b = jsontext.AppendString(b, r.Dealer)
	b = append(b, `,"result":`...)
	b = jsontext.AppendString(b, r.Result)
	b = append(b, `,"stakes":`...)
	b = r.Stakes.AppendJSON(b)
	b = append(b, `,"multiplier":`...)
	b = r.Multiplier.AppendJSON(b)
	if r.Rules != 0 {
		b = append(b, `,"rules":`...)
		b = strconv.AppendInt(b, int64(r.Rules), 10)
	}
	if r.Second != "" {
		b = append(b, `,"second":`...)
		b = jsontext.AppendString(b, r.Second)
	}
	if r.Insurance != "" {
		b = append(b, `,"insurance":`...)
		b = jsontext.AppendString(b, string(r.Insurance))
	}
	if r.Return != 0 {
		b = append(b, `,"return":`...)
		b = r.Return.AppendJSON(b)
	}
	return append(b, '}')
}

// Replay reproduces a bet of the named game from its float stream src (normally
// fair.NewStream(serverSeed, clientSeed, nonce)) and its parameters.
func Replay(game Name, src event.Source, p Params) (Outcome, error) {
	o := Outcome{Game: game}
	var err error
	switch game {
	case Dice:
		o.Dice, err = replayDice(src, p)
	case Plinko:
		o.Plinko, err = replayPlinko(src, p)
	case Keno:
		o.Keno, err = replayKeno(src, p)
	case Mines:
		o.Mines, err = replayMines(src, p)
	case Pump:
		o.Pump, err = replayPump(src, p)
	case Blackjack:
		o.Blackjack, err = replayBlackjack(src, p)
	default:
		return Outcome{}, fmt.Errorf("game %q: %w", game, ErrUnknownGame)
	}
	if err != nil {
		return Outcome{}, fmt.Errorf("replay %s: %w: %w", game, ErrInvalidParams, err)
	}
	return o, nil
}

func replayDice(src event.Source, p Params) (*dice.Outcome, error) {
	t, err := dice.ParseTarget(p.Target)
	if err != nil {
		return nil, err
	}
	o := dice.Play(src, t)
	return &o, nil
}

func replayPlinko(src event.Source, p Params) (*plinko.Outcome, error) {
	risk, err := plinko.ParseRisk(p.Risk)
	if err != nil {
		return nil, err
	}
	o, err := plinko.Drop(src, p.Rows, risk)
	if err != nil {
		return nil, err
	}
	return &o, nil
}

func replayKeno(src event.Source, p Params) (*keno.Outcome, error) {
	risk, err := keno.ParseRisk(p.Risk)
	if err != nil {
		return nil, err
	}
	o, err := keno.Play(src, p.Picks, risk)
	if err != nil {
		return nil, err
	}
	return &o, nil
}

func replayMines(src event.Source, p Params) (*MinesReplay, error) {
	g, err := mines.New(src, p.Mines)
	if err != nil {
		return nil, err
	}
	r := &MinesReplay{Mines: p.Mines, MineTiles: g.MineTiles}
	for _, t := range g.MineTiles {
		r.Positions = append(r.Positions, mines.Position(t))
	}
	if len(p.Reveals) == 0 {
		return r, nil
	}
	for _, t := range p.Reveals {
		if g.Status != mines.Active {
			return nil, fmt.Errorf("reveal of tile %d after the game ended", t)
		}
		if _, err := g.Reveal(t); err != nil {
			return nil, err
		}
	}
	if g.Status == mines.Active {
		if _, err := g.CashOut(); err != nil {
			return nil, err
		}
	}
	r.Revealed, r.Status, r.Multiplier = g.Revealed, g.Status, g.Payout()
	return r, nil
}

func replayPump(src event.Source, p Params) (*PumpReplay, error) {
	d, err := pump.ParseDifficulty(p.Difficulty)
	if err != nil {
		return nil, err
	}
	g, err := pump.New(src, d)
	if err != nil {
		return nil, err
	}
	r := &PumpReplay{Difficulty: d, Pops: g.Pops, BurstAt: g.BurstAt(), SafePumps: min(g.BurstAt()-1, d.MaxSafePumps())}
	r.BestMultiplier, _ = pump.Multiplier(d, r.SafePumps)
	if p.Pumps <= 0 {
		return r, nil
	}
	for range p.Pumps {
		if g.Status != pump.Active {
			return nil, fmt.Errorf("%d pumps: the game ended after %d", p.Pumps, g.Pumps)
		}
		if _, err := g.Pump(); err != nil {
			return nil, err
		}
	}
	if g.Status == pump.Active {
		if _, err := g.CashOut(); err != nil {
			return nil, err
		}
	}
	r.Status, r.Multiplier = g.Status, g.Payout()
	return r, nil
}

func replayBlackjack(src event.Source, p Params) (*BlackjackReplay, error) {
	deck := blackjack.NewDeck(src)
	g, err := blackjack.Deal(deck, blackjack.Rules(p.Rules))
	if err != nil {
		return nil, err
	}
	for _, a := range strings.ToLower(p.Actions) {
		switch {
		case a == 'h':
			err = g.Hit()
		case a == 's':
			err = g.Stand()
		case a == 'd':
			err = g.Double()
		case a == 'p' && g.Rules == blackjack.RulesSplit:
			err = g.Split()
		case (a == 'i' || a == 'n') && g.Rules == blackjack.RulesSplit:
			err = g.Insure(a == 'i')
		case g.Rules == blackjack.RulesSplit:
			err = fmt.Errorf("blackjack action %q: want h, s, d, p, i or n", a)
		default:
			err = fmt.Errorf("blackjack action %q: want h, s or d", a)
		}
		if err != nil {
			return nil, err
		}
	}
	r := &BlackjackReplay{
		Player:     blackjack.FormatHand(g.Player),
		Dealer:     blackjack.FormatHand(g.Dealer),
		Result:     g.Result(),
		Stakes:     g.Stakes(),
		Multiplier: g.Multiplier(),
	}
	if g.Rules == blackjack.RulesSplit {
		r.Rules, r.Insurance, r.Return = int(g.Rules), g.Insurance, g.Return()
		if len(g.Second) > 0 {
			r.Second = blackjack.FormatHand(g.Second)
		}
	}
	r.Deck = make([]string, 0, len(deck))
	for _, c := range deck {
		r.Deck = append(r.Deck, c.String())
	}
	return r, nil
}

// String renders the outcome for people, one fact per line.
func (o Outcome) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "game: %s\n", o.Game)
	switch {
	case o.Dice != nil:
		d := o.Dice
		fmt.Fprintf(&b, "roll: %s\ntarget: under %s\nwin: %v\nmultiplier: %sx\n", d.Roll, d.Target, d.Win, d.Multiplier)
	case o.Plinko != nil:
		pl := o.Plinko
		fmt.Fprintf(&b, "rows: %d\nrisk: %s\ndecisions: %s\nbucket: %d\nmultiplier: %sx\n",
			pl.Rows, pl.Risk, joinInts(pl.Decisions), pl.Bucket, pl.Multiplier)
	case o.Keno != nil:
		k := o.Keno
		fmt.Fprintf(&b, "drawn: %s\npicks: %s\nrisk: %s\nmatches: %s\nmultiplier: %sx\n",
			joinInts(k.Drawn), joinInts(k.Picks), k.Risk, joinInts(k.Matches), k.Multiplier)
	case o.Mines != nil:
		m := o.Mines
		fmt.Fprintf(&b, "mines: %d\nmine tiles: %s\nmine positions (row,col): %s\n",
			m.Mines, joinInts(m.MineTiles), strings.Join(m.Positions, " "))
		if m.Status != "" {
			fmt.Fprintf(&b, "revealed: %s\nstatus: %s\nmultiplier: %sx\n", joinInts(m.Revealed), m.Status, m.Multiplier)
		}
	case o.Pump != nil:
		p := o.Pump
		fmt.Fprintf(&b, "difficulty: %s\npops: %s\nbursts on pump: %d\nsafe pumps: %d (%sx)\n",
			p.Difficulty, joinInts(p.Pops), p.BurstAt, p.SafePumps, p.BestMultiplier)
		if p.Status != "" {
			fmt.Fprintf(&b, "status: %s\nmultiplier: %sx\n", p.Status, p.Multiplier)
		}
	case o.Blackjack != nil:
		bj := o.Blackjack
		fmt.Fprintf(&b, "cards: %s\nplayer: %s\n", strings.Join(bj.Deck, " "), bj.Player)
		if bj.Second != "" {
			fmt.Fprintf(&b, "second hand: %s\n", bj.Second)
		}
		fmt.Fprintf(&b, "dealer: %s\n", bj.Dealer)
		if bj.Insurance != "" {
			fmt.Fprintf(&b, "insurance: %s\n", bj.Insurance)
		}
		if bj.Result != "" {
			fmt.Fprintf(&b, "result: %s\nstakes: %s\nmultiplier: %sx\n", bj.Result, bj.Stakes, bj.Multiplier)
			if bj.Rules != 0 {
				fmt.Fprintf(&b, "return per base stake: %sx\n", bj.Return)
			}
		}
	}
	return b.String()
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, " ")
}
