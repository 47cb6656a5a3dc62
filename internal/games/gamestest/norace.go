//go:build !race

package gamestest

// raceEnabled reports whether the race detector is on; simulations then play fewer bets.
const raceEnabled = false
