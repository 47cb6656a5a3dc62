//go:build race

package play

// raceDetector reports whether the race detector is on. Its sync.Pool drops
// a quarter of what is put back, at random, so what a call allocates (the
// JSON encoder's pooled state among it) carries that noise.
const raceDetector = true
