// Package event turns provably-fair floats into game events, the way Stake's
// "floats → game events" step does (games.md §1): multiply a float by the number of
// possible outcomes and floor it, and draw without replacement by indexing into the
// outcomes not yet drawn.
//
// Game packages read floats through Source, so they never import the fairness engine:
// *fair.Stream satisfies Source, and so does any fixed list of floats in a test.
package event

// Source supplies the floats of one bet, in order. Each float is in [0, 1).
type Source interface {
	Float() float64
}

// Index maps a float to one of n equally likely outcomes: floor(f × n).
//
// For the floats of a fair.Stream (multiples of 2⁻³²) and n below 2²¹ the product is exact
// in a float64, so the result is the same as in any JavaScript verifier. A float outside
// [0, 1) — only possible from a faulty Source — is clamped into 0 … n−1 rather than
// indexing out of range. n must be positive.
func Index(f float64, n int) int {
	switch {
	case !(f >= 0): // negative or NaN
		return 0
	case f >= 1:
		return n - 1
	}
	if i := int(f * float64(n)); i < n {
		return i
	}
	return n - 1 // f*n rounded up to n: impossible for Stream floats, kept for safety
}

// Sample draws k of the outcomes 0 … n−1 without replacement and returns them in draw
// order. The i-th draw (from 0) is Index(src.Float(), n−i) into the outcomes not yet
// drawn, kept in ascending order, exactly as Stake's Mines, Keno and Pump shuffles do
// (a removal preserves the order of the rest, like JavaScript's splice). It reads exactly
// k floats. It panics unless 0 ≤ k ≤ n.
func Sample(src Source, n, k int) []int {
	if k < 0 || k > n {
		panic("event: Sample needs 0 <= k <= n")
	}
	var buf [64]int // room for every board of the games, so the pool stays off the heap
	pool := buf[:0]
	if n > len(buf) {
		pool = make([]int, 0, n)
	}
	pool = pool[:n]
	for i := range pool {
		pool[i] = i
	}
	drawn := make([]int, k)
	for i := range drawn {
		j := Index(src.Float(), n-i)
		drawn[i] = pool[j]
		pool = append(pool[:j], pool[j+1:]...)
	}
	return drawn
}

// Floats is a Source replaying a fixed list of floats, for tests and for replaying a
// recorded bet. Float panics when the list runs out.
type Floats []float64

// Float returns the next float of the list and removes it.
func (f *Floats) Float() float64 {
	v := (*f)[0]
	*f = (*f)[1:]
	return v
}
