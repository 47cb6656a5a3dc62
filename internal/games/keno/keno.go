// Package keno is the rules of Keno: the player marks 1 to 10 of the numbers 1 … 40, ten
// numbers are drawn without replacement, and the payout depends on the hits.
//
// The draw is Stake's (games.md §1, §6): the i-th float (from 0) times 40 − i, floored,
// indexes the numbers not yet drawn, kept in ascending order. So every set of 10 is
// equally likely and P(h hits with p picks) = C(p, h)·C(40 − p, 10 − h)/C(40, 10).
// The multiplier tables for the four risk levels (classic, low, medium, high) are Stake's;
// their RTPs lie between 98.65% and 99.07%.
package keno

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/jsontext"
	"github.com/fairplay/fairplay/internal/money"
)

// Board constants.
const (
	Numbers  = 40 // the board holds 1 … Numbers
	Drawn    = 10 // numbers drawn per game
	MaxPicks = 10 // the player marks 1 … MaxPicks numbers
)

// Risk is a risk level: the shape of the multiplier table.
type Risk string

// The risk levels, as the API spells them.
const (
	Classic Risk = "classic"
	Low     Risk = "low"
	Medium  Risk = "medium"
	High    Risk = "high"
)

// Risks lists the risk levels in the order the product shows them.
var Risks = []Risk{Classic, Low, Medium, High}

// Validation errors. ErrNoNumbers carries the specification's exact user-facing text; the
// others are worded for users too, since a handler may show them as they are.
var (
	ErrNoNumbers        = errors.New("Please select at least one number")
	ErrTooManyNumbers   = errors.New("You can select at most 10 numbers")
	ErrNumberOutOfRange = errors.New("Numbers must be between 1 and 40")
	ErrDuplicateNumber  = errors.New("Each number can only be picked once")
	ErrInvalidRisk      = errors.New("Invalid risk level")
)

// ParseRisk validates a risk level as sent by the client.
func ParseRisk(s string) (Risk, error) {
	r := Risk(s)
	if _, ok := tables[r]; !ok {
		return "", fmt.Errorf("keno risk %q: %w", s, ErrInvalidRisk)
	}
	return r, nil
}

// ValidatePicks checks a selection: 1 … 10 distinct numbers, each in 1 … 40. An empty
// selection is ErrNoNumbers, which the product reports before anything else.
func ValidatePicks(picks []int) error {
	switch {
	case len(picks) == 0:
		return ErrNoNumbers
	case len(picks) > MaxPicks:
		return fmt.Errorf("keno: %d numbers: %w", len(picks), ErrTooManyNumbers)
	}
	var seen [Numbers + 1]bool
	for _, n := range picks {
		if n < 1 || n > Numbers {
			return fmt.Errorf("keno number %d: %w", n, ErrNumberOutOfRange)
		}
		if seen[n] {
			return fmt.Errorf("keno number %d: %w", n, ErrDuplicateNumber)
		}
		seen[n] = true
	}
	return nil
}

// Table returns a copy of the multipliers for 0 … picks hits.
func Table(risk Risk, picks int) ([]money.Multiplier, error) {
	t, err := table(risk, picks)
	if err != nil {
		return nil, err
	}
	return slices.Clone(t), nil
}

func table(risk Risk, picks int) ([]money.Multiplier, error) {
	byPicks, ok := tables[risk]
	if !ok {
		return nil, fmt.Errorf("keno risk %q: %w", risk, ErrInvalidRisk)
	}
	if picks < 1 {
		return nil, ErrNoNumbers
	}
	if picks > MaxPicks {
		return nil, fmt.Errorf("keno: %d numbers: %w", picks, ErrTooManyNumbers)
	}
	return byPicks[picks], nil
}

// Draw reads 10 floats from src and returns the drawn numbers (1 … 40) in draw order.
func Draw(src event.Source) []int {
	drawn := event.Sample(src, Numbers, Drawn)
	for i := range drawn {
		drawn[i]++ // outcome indexes 0 … 39 are the numbers 1 … 40
	}
	return drawn
}

// Outcome is a settled Keno game.
type Outcome struct {
	Picks []int `json:"selectedNumbers"`
	Risk  Risk  `json:"riskLevel"`
	// Drawn holds the 10 drawn numbers in draw order.
	Drawn []int `json:"drawnNumbers"`
	// Matches holds the picked numbers that were drawn, in draw order.
	Matches []int `json:"matches"`
	// Multiplier is the table entry for len(Matches) hits: the total return on the stake.
	Multiplier money.Multiplier `json:"multiplier"`
}

// AppendJSON appends o as json.Marshal writes it, without its reflection
// (TestOutcomeAppendJSONIsMarshal).
func (o Outcome) AppendJSON(b []byte) []byte {
	b = append(b, `{"selectedNumbers":`...)
	b = jsontext.AppendInts(b, o.Picks)
	b = append(b, `,"riskLevel":`...)
	b = jsontext.AppendString(b, string(o.Risk))
	b = append(b, `,"drawnNumbers":`...)
	b = jsontext.AppendInts(b, o.Drawn)
	b = append(b, `,"matches":`...)
	b = jsontext.AppendInts(b, o.Matches)
	b = append(b, `,"multiplier":`...)
	b = o.Multiplier.AppendJSON(b)
	return append(b, '}')
}

// Play validates the picks and the risk level, then draws and settles the game.
func Play(src event.Source, picks []int, risk Risk) (Outcome, error) {
	if err := ValidatePicks(picks); err != nil {
		return Outcome{}, err
	}
	t, err := table(risk, len(picks))
	if err != nil {
		return Outcome{}, err
	}
	// Matches has room for every pick from the start: its allocations do
	// not tell how many were hit (a refused bet is drawn too; see
	// internal/play's drawInstant).
	o := Outcome{Picks: slices.Clone(picks), Risk: risk, Drawn: Draw(src), Matches: make([]int, 0, MaxPicks)}
	for _, n := range o.Drawn {
		if slices.Contains(picks, n) {
			o.Matches = append(o.Matches, n)
		}
	}
	o.Multiplier = t[len(o.Matches)]
	return o, nil
}

// x turns the table literals into money.Multiplier units. The products are untyped
// constants, evaluated exactly at compile time: 3.96 * x is 39600, with no floating point.
const x = money.MultiplierScale

// tables[risk][picks][hits], transcribed from reference/games.json (index 0 unused); a
// test compares every entry with testdata/games.json.
var tables = map[Risk][MaxPicks + 1][]money.Multiplier{
	Classic: {
		nil,
		{0 * x, 3.96 * x},
		{0 * x, 1.9 * x, 4.5 * x},
		{0 * x, 1 * x, 3.1 * x, 10.4 * x},
		{0 * x, 0.8 * x, 1.8 * x, 5 * x, 22.5 * x},
		{0 * x, 0.25 * x, 1.4 * x, 4.1 * x, 16.5 * x, 36 * x},
		{0 * x, 0 * x, 1 * x, 3.68 * x, 7 * x, 16.5 * x, 40 * x},
		{0 * x, 0 * x, 0.47 * x, 3 * x, 4.5 * x, 14 * x, 31 * x, 60 * x},
		{0 * x, 0 * x, 0 * x, 2.2 * x, 4 * x, 13 * x, 22 * x, 55 * x, 70 * x},
		{0 * x, 0 * x, 0 * x, 1.55 * x, 3 * x, 8 * x, 15 * x, 44 * x, 60 * x, 85 * x},
		{0 * x, 0 * x, 0 * x, 1.4 * x, 2.25 * x, 4.5 * x, 8 * x, 17 * x, 50 * x, 80 * x, 100 * x},
	},
	Low: {
		nil,
		{0.7 * x, 1.85 * x},
		{0 * x, 2 * x, 3.8 * x},
		{0 * x, 1.1 * x, 1.38 * x, 26 * x},
		{0 * x, 0 * x, 2.2 * x, 7.9 * x, 90 * x},
		{0 * x, 0 * x, 1.5 * x, 4.2 * x, 13 * x, 300 * x},
		{0 * x, 0 * x, 1.1 * x, 2 * x, 6.2 * x, 100 * x, 700 * x},
		{0 * x, 0 * x, 1.1 * x, 1.6 * x, 3.5 * x, 15 * x, 225 * x, 700 * x},
		{0 * x, 0 * x, 1.1 * x, 1.5 * x, 2 * x, 5.5 * x, 39 * x, 100 * x, 800 * x},
		{0 * x, 0 * x, 1.1 * x, 1.3 * x, 1.7 * x, 2.5 * x, 7.5 * x, 50 * x, 250 * x, 1000 * x},
		{0 * x, 0 * x, 1.1 * x, 1.2 * x, 1.3 * x, 1.8 * x, 3.5 * x, 13 * x, 50 * x, 250 * x, 1000 * x},
	},
	Medium: {
		nil,
		{0.4 * x, 2.75 * x},
		{0 * x, 1.8 * x, 5.1 * x},
		{0 * x, 0 * x, 2.8 * x, 50 * x},
		{0 * x, 0 * x, 1.7 * x, 10 * x, 100 * x},
		{0 * x, 0 * x, 1.4 * x, 4 * x, 14 * x, 390 * x},
		{0 * x, 0 * x, 0 * x, 3 * x, 9 * x, 180 * x, 710 * x},
		{0 * x, 0 * x, 0 * x, 2 * x, 7 * x, 30 * x, 400 * x, 800 * x},
		{0 * x, 0 * x, 0 * x, 2 * x, 4 * x, 11 * x, 67 * x, 400 * x, 900 * x},
		{0 * x, 0 * x, 0 * x, 2 * x, 2.5 * x, 5 * x, 15 * x, 100 * x, 500 * x, 1000 * x},
		{0 * x, 0 * x, 0 * x, 1.6 * x, 2 * x, 4 * x, 7 * x, 26 * x, 100 * x, 500 * x, 1000 * x},
	},
	High: {
		nil,
		{0 * x, 3.96 * x},
		{0 * x, 0 * x, 17.1 * x},
		{0 * x, 0 * x, 0 * x, 81.5 * x},
		{0 * x, 0 * x, 0 * x, 10 * x, 259 * x},
		{0 * x, 0 * x, 0 * x, 4.5 * x, 48 * x, 450 * x},
		{0 * x, 0 * x, 0 * x, 0 * x, 11 * x, 350 * x, 710 * x},
		{0 * x, 0 * x, 0 * x, 0 * x, 7 * x, 90 * x, 400 * x, 800 * x},
		{0 * x, 0 * x, 0 * x, 0 * x, 5 * x, 20 * x, 270 * x, 600 * x, 900 * x},
		{0 * x, 0 * x, 0 * x, 0 * x, 4 * x, 11 * x, 56 * x, 500 * x, 800 * x, 1000 * x},
		{0 * x, 0 * x, 0 * x, 0 * x, 3.5 * x, 8 * x, 13 * x, 63 * x, 500 * x, 800 * x, 1000 * x},
	},
}
