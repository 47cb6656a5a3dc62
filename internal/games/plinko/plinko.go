// Package plinko is the rules of Plinko: a ball falls through 8 to 16 rows of pins, going
// left or right at each, and lands in one of rows+1 buckets.
//
// Each row reads one float: floor(f × 2) is 0 for left, 1 for right (games.md §4). The
// bucket, counted 0 … rows from the left, is the number of rights, so bucket k has
// probability C(rows, k)/2^rows. The multiplier tables for the three risk levels are
// Stake's, identical across five independent public sources; their RTPs lie between
// 98.91% and 99.16% (to two decimals).
package plinko

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/fairplay/fairplay/internal/games/event"
	"github.com/fairplay/fairplay/internal/jsontext"
	"github.com/fairplay/fairplay/internal/money"
)

// Row limits.
const (
	MinRows = 8
	MaxRows = 16
)

// Risk is a risk level: the shape of the multiplier table.
type Risk string

// The risk levels, as the API spells them.
const (
	Low    Risk = "low"
	Medium Risk = "medium"
	High   Risk = "high"
)

// Risks lists the risk levels in the order the product shows them.
var Risks = []Risk{Low, Medium, High}

// Validation errors. Plinko shows no client message of its own, so these are plain.
var (
	ErrInvalidRows = errors.New("rows must be between 8 and 16")
	ErrInvalidRisk = errors.New("risk must be low, medium or high")
)

// ParseRisk validates a risk level as sent by the client.
func ParseRisk(s string) (Risk, error) {
	r := Risk(s)
	if _, ok := tables[r]; !ok {
		return "", fmt.Errorf("plinko risk %q: %w", s, ErrInvalidRisk)
	}
	return r, nil
}

// Table returns a copy of the multipliers of buckets 0 … rows for a risk level.
func Table(risk Risk, rows int) ([]money.Multiplier, error) {
	t, err := table(risk, rows)
	if err != nil {
		return nil, err
	}
	return slices.Clone(t), nil
}

func table(risk Risk, rows int) ([]money.Multiplier, error) {
	byRows, ok := tables[risk]
	if !ok {
		return nil, fmt.Errorf("plinko risk %q: %w", risk, ErrInvalidRisk)
	}
	if rows < MinRows || rows > MaxRows {
		return nil, fmt.Errorf("plinko rows %d: %w", rows, ErrInvalidRows)
	}
	return byRows[rows-MinRows], nil
}

// Outcome is a settled Plinko drop.
type Outcome struct {
	Rows int  `json:"rows"`
	Risk Risk `json:"risk"`
	// Decisions holds one entry per row: 0 for left, 1 for right.
	Decisions []int `json:"decisions"`
	// Bucket is the landing bucket, 0 … Rows from the left: the number of rights.
	Bucket int `json:"finalBucket"`
	// Multiplier is the bucket's multiplier, the total return on the stake.
	Multiplier money.Multiplier `json:"multiplier"`
}

// AppendJSON appends o as json.Marshal writes it, without its reflection
// (TestOutcomeAppendJSONIsMarshal).
func (o Outcome) AppendJSON(b []byte) []byte {
	b = append(b, `{"rows":`...)
	b = strconv.AppendInt(b, int64(o.Rows), 10)
	b = append(b, `,"risk":`...)
	b = jsontext.AppendString(b, string(o.Risk))
	b = append(b, `,"decisions":`...)
	b = jsontext.AppendInts(b, o.Decisions)
	b = append(b, `,"finalBucket":`...)
	b = strconv.AppendInt(b, int64(o.Bucket), 10)
	b = append(b, `,"multiplier":`...)
	b = o.Multiplier.AppendJSON(b)
	return append(b, '}')
}

// Drop validates rows and risk, then reads one float per row from src and settles the drop.
func Drop(src event.Source, rows int, risk Risk) (Outcome, error) {
	t, err := table(risk, rows)
	if err != nil {
		return Outcome{}, err
	}
	o := Outcome{Rows: rows, Risk: risk, Decisions: make([]int, rows)}
	for i := range o.Decisions {
		d := event.Index(src.Float(), 2)
		o.Decisions[i] = d
		o.Bucket += d
	}
	o.Multiplier = t[o.Bucket]
	return o, nil
}

// x turns the table literals into money.Multiplier units. The products are untyped
// constants, evaluated exactly at compile time: 5.6 * x is 56000, with no floating point.
const x = money.MultiplierScale

// tables[risk][rows-MinRows][bucket], transcribed from reference/games.json; a test
// compares every entry with testdata/games.json.
var tables = map[Risk][MaxRows - MinRows + 1][]money.Multiplier{
	Low: {
		{5.6 * x, 2.1 * x, 1.1 * x, 1 * x, 0.5 * x, 1 * x, 1.1 * x, 2.1 * x, 5.6 * x},
		{5.6 * x, 2 * x, 1.6 * x, 1 * x, 0.7 * x, 0.7 * x, 1 * x, 1.6 * x, 2 * x, 5.6 * x},
		{8.9 * x, 3 * x, 1.4 * x, 1.1 * x, 1 * x, 0.5 * x, 1 * x, 1.1 * x, 1.4 * x, 3 * x, 8.9 * x},
		{8.4 * x, 3 * x, 1.9 * x, 1.3 * x, 1 * x, 0.7 * x, 0.7 * x, 1 * x, 1.3 * x, 1.9 * x, 3 * x, 8.4 * x},
		{10 * x, 3 * x, 1.6 * x, 1.4 * x, 1.1 * x, 1 * x, 0.5 * x, 1 * x, 1.1 * x, 1.4 * x, 1.6 * x, 3 * x, 10 * x},
		{8.1 * x, 4 * x, 3 * x, 1.9 * x, 1.2 * x, 0.9 * x, 0.7 * x, 0.7 * x, 0.9 * x, 1.2 * x, 1.9 * x, 3 * x, 4 * x, 8.1 * x},
		{7.1 * x, 4 * x, 1.9 * x, 1.4 * x, 1.3 * x, 1.1 * x, 1 * x, 0.5 * x, 1 * x, 1.1 * x, 1.3 * x, 1.4 * x, 1.9 * x, 4 * x, 7.1 * x},
		{15 * x, 8 * x, 3 * x, 2 * x, 1.5 * x, 1.1 * x, 1 * x, 0.7 * x, 0.7 * x, 1 * x, 1.1 * x, 1.5 * x, 2 * x, 3 * x, 8 * x, 15 * x},
		{16 * x, 9 * x, 2 * x, 1.4 * x, 1.4 * x, 1.2 * x, 1.1 * x, 1 * x, 0.5 * x, 1 * x, 1.1 * x, 1.2 * x, 1.4 * x, 1.4 * x, 2 * x, 9 * x, 16 * x},
	},
	Medium: {
		{13 * x, 3 * x, 1.3 * x, 0.7 * x, 0.4 * x, 0.7 * x, 1.3 * x, 3 * x, 13 * x},
		{18 * x, 4 * x, 1.7 * x, 0.9 * x, 0.5 * x, 0.5 * x, 0.9 * x, 1.7 * x, 4 * x, 18 * x},
		{22 * x, 5 * x, 2 * x, 1.4 * x, 0.6 * x, 0.4 * x, 0.6 * x, 1.4 * x, 2 * x, 5 * x, 22 * x},
		{24 * x, 6 * x, 3 * x, 1.8 * x, 0.7 * x, 0.5 * x, 0.5 * x, 0.7 * x, 1.8 * x, 3 * x, 6 * x, 24 * x},
		{33 * x, 11 * x, 4 * x, 2 * x, 1.1 * x, 0.6 * x, 0.3 * x, 0.6 * x, 1.1 * x, 2 * x, 4 * x, 11 * x, 33 * x},
		{43 * x, 13 * x, 6 * x, 3 * x, 1.3 * x, 0.7 * x, 0.4 * x, 0.4 * x, 0.7 * x, 1.3 * x, 3 * x, 6 * x, 13 * x, 43 * x},
		{58 * x, 15 * x, 7 * x, 4 * x, 1.9 * x, 1 * x, 0.5 * x, 0.2 * x, 0.5 * x, 1 * x, 1.9 * x, 4 * x, 7 * x, 15 * x, 58 * x},
		{88 * x, 18 * x, 11 * x, 5 * x, 3 * x, 1.3 * x, 0.5 * x, 0.3 * x, 0.3 * x, 0.5 * x, 1.3 * x, 3 * x, 5 * x, 11 * x, 18 * x, 88 * x},
		{110 * x, 41 * x, 10 * x, 5 * x, 3 * x, 1.5 * x, 1 * x, 0.5 * x, 0.3 * x, 0.5 * x, 1 * x, 1.5 * x, 3 * x, 5 * x, 10 * x, 41 * x, 110 * x},
	},
	High: {
		{29 * x, 4 * x, 1.5 * x, 0.3 * x, 0.2 * x, 0.3 * x, 1.5 * x, 4 * x, 29 * x},
		{43 * x, 7 * x, 2 * x, 0.6 * x, 0.2 * x, 0.2 * x, 0.6 * x, 2 * x, 7 * x, 43 * x},
		{76 * x, 10 * x, 3 * x, 0.9 * x, 0.3 * x, 0.2 * x, 0.3 * x, 0.9 * x, 3 * x, 10 * x, 76 * x},
		{120 * x, 14 * x, 5.2 * x, 1.4 * x, 0.4 * x, 0.2 * x, 0.2 * x, 0.4 * x, 1.4 * x, 5.2 * x, 14 * x, 120 * x},
		{170 * x, 24 * x, 8.1 * x, 2 * x, 0.7 * x, 0.2 * x, 0.2 * x, 0.2 * x, 0.7 * x, 2 * x, 8.1 * x, 24 * x, 170 * x},
		{260 * x, 37 * x, 11 * x, 4 * x, 1 * x, 0.2 * x, 0.2 * x, 0.2 * x, 0.2 * x, 1 * x, 4 * x, 11 * x, 37 * x, 260 * x},
		{420 * x, 56 * x, 18 * x, 5 * x, 1.9 * x, 0.3 * x, 0.2 * x, 0.2 * x, 0.2 * x, 0.3 * x, 1.9 * x, 5 * x, 18 * x, 56 * x, 420 * x},
		{620 * x, 83 * x, 27 * x, 8 * x, 3 * x, 0.5 * x, 0.2 * x, 0.2 * x, 0.2 * x, 0.2 * x, 0.5 * x, 3 * x, 8 * x, 27 * x, 83 * x, 620 * x},
		{1000 * x, 130 * x, 26 * x, 9 * x, 4 * x, 2 * x, 0.2 * x, 0.2 * x, 0.2 * x, 0.2 * x, 0.2 * x, 2 * x, 4 * x, 9 * x, 26 * x, 130 * x, 1000 * x},
	},
}
