package apitest

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// LiveStream is an open GET /api/live/bets (Server-Sent Events).
type LiveStream struct {
	// Res is the response (its headers; the body is read by the stream).
	Res    *http.Response
	cancel context.CancelFunc
	bets   chan map[string]any
	done   chan struct{}

	mu  sync.Mutex
	raw strings.Builder // every byte read so far
	err error
}

// WatchLive opens GET /api/live/bets with query (e.g. "minAmount=5") and
// returns the stream, or the refusal's response with a nil stream.
func (e *Env) WatchLive(t testing.TB, query string) (*LiveStream, Response) {
	t.Helper()
	return e.WatchLiveWith(t, query, nil)
}

// WatchLiveWith is WatchLive with these request headers (an
// X-Forwarded-For, say).
func (e *Env) WatchLiveWith(t testing.TB, query string, header http.Header) (*LiveStream, Response) {
	t.Helper()
	path := e.URL + "/api/live/bets"
	if query != "" {
		path += "?" + query
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET /api/live/bets: %v", err)
	}
	if res.StatusCode != http.StatusOK {
		defer cancel()
		defer res.Body.Close()
		var out Response
		out.Status, out.Header = res.StatusCode, res.Header
		_ = json.NewDecoder(res.Body).Decode(&out.Body)
		return nil, out
	}
	s := &LiveStream{Res: res, cancel: cancel, bets: make(chan map[string]any, 10000), done: make(chan struct{})}
	go s.read()
	t.Cleanup(s.Close)
	return s, Response{Status: res.StatusCode, Header: res.Header}
}

// read parses events until the stream ends.
func (s *LiveStream) read() {
	defer close(s.done)
	defer close(s.bets)
	r := bufio.NewReader(s.Res.Body)
	event := ""
	for {
		line, err := r.ReadString('\n')
		s.mu.Lock()
		s.raw.WriteString(line)
		if err != nil {
			s.err = err
		}
		s.mu.Unlock()
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "bets":
			var msg struct {
				Bets []map[string]any `json:"bets"`
			}
			dec := json.NewDecoder(strings.NewReader(strings.TrimPrefix(line, "data: ")))
			dec.UseNumber()
			if dec.Decode(&msg) != nil {
				s.mu.Lock()
				s.raw.WriteString("\n!! undecodable data\n")
				s.mu.Unlock()
				continue
			}
			for _, b := range msg.Bets {
				s.bets <- b
			}
		case line == "":
			event = ""
		}
	}
}

// Raw is everything the stream has sent so far.
func (s *LiveStream) Raw() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw.String()
}

// Ended reports whether the server ended the stream.
func (s *LiveStream) Ended() <-chan struct{} { return s.done }

// Bets is every bet the stream carries, as it arrives (closed when the
// stream ends).
func (s *LiveStream) Bets() <-chan map[string]any { return s.bets }

// WaitBet reads bets until the one with id arrives and returns it with the
// bets read before it; it fails the test after timeout.
func (s *LiveStream) WaitBet(t testing.TB, id string, timeout time.Duration) (map[string]any, []map[string]any) {
	t.Helper()
	var before []map[string]any
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case b, ok := <-s.bets:
			if !ok {
				t.Fatalf("live stream ended before bet %s arrived: %s", id, s.Raw())
			}
			if b["_id"] == id {
				return b, before
			}
			before = append(before, b)
		case <-deadline.C:
			t.Fatalf("bet %s not on the live stream after %s", id, timeout)
		}
	}
}

// Close ends the stream from the client's side.
func (s *LiveStream) Close() {
	s.cancel()
	_ = s.Res.Body.Close()
	<-s.done
}
