//go:build !race

package play

// raceDetector reports whether the race detector is on (race_on_test.go).
const raceDetector = false
