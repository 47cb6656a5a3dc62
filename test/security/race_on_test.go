//go:build race

package security_test

// raceDetector reports whether the race detector is on. Its sync.Pool drops
// a quarter of what is put back, so allocation counts carry that noise.
const raceDetector = true
