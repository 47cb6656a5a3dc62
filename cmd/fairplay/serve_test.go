package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"
)

// The internal (metrics) listener shuts down cleanly when serve returns: a
// scrape in flight finishes, then the listener is closed and its server has
// stopped by the time stop returns.
func TestInternalListenerShutsDownCleanly(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(started)
		<-release
		_, _ = w.Write([]byte("fairplay_ready 0\n"))
	})
	stop := serveInternal("metrics", ln, h, slog.New(slog.DiscardHandler))

	type result struct {
		status int
		body   string
		err    error
	}
	scrape := make(chan result, 1)
	go func() {
		res, err := http.Get("http://" + ln.Addr().String() + "/metrics")
		if err != nil {
			scrape <- result{err: err}
			return
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		scrape <- result{status: res.StatusCode, body: string(body), err: err}
	}()
	<-started
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("stop returned while a scrape was in flight")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if r := <-scrape; r.err != nil || r.status != http.StatusOK || r.body != "fairplay_ready 0\n" {
		t.Fatalf("the scrape in flight during the shutdown: %d %q %v", r.status, r.body, r.err)
	}
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("stop did not return after the scrape finished")
	}
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second); err == nil {
		c.Close()
		t.Fatal("the metrics listener still accepts connections after stop")
	}
}
