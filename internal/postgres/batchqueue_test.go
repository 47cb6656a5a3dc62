package postgres

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A batcher's failures are logged at most once per failureLogEvery, the
// next line counting those left out.
func TestFailureLogAtMostOncePerInterval(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	var f failureLog
	f.log(log, "failed", errors.New("first"), 3)
	f.log(log, "failed", errors.New("second"), 4)
	f.log(log, "failed", errors.New("third"), 5)
	if lines := strings.Count(buf.String(), "\n"); lines != 1 || !strings.Contains(buf.String(), "error=first requests=3 failures_not_logged=0") {
		t.Fatalf("after three failures at once: %q, want the first alone", buf.String())
	}
	f.last.Store(time.Now().Add(-failureLogEvery).UnixNano())
	f.log(log, "failed", errors.New("fourth"), 6)
	if !strings.Contains(buf.String(), "error=fourth requests=6 failures_not_logged=2") {
		t.Fatalf("a failure after the interval: %q, want it with the two left out", buf.String())
	}
	f.log(nil, "failed", errors.New("no logger"), 1) // no logger: nothing, no panic
}
