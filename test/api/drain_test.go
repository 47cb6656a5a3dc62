package api_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/server"
	"github.com/fairplay/fairplay/test/apitest"
)

// On SIGTERM (the serving context cancelled) the server turns not ready at
// once but keeps accepting and serving for the drain delay, telling clients
// to close their connections; then its listener closes.
func TestDrainKeepsServing(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		// The delay only has to outlast the handful of requests below.
		served <- env.App.Server.Serve(ctx, ln, server.Drain{Delay: 5 * time.Second, ShutdownTimeout: 10 * time.Second})
	}()
	drainEnv := *env
	drainEnv.URL = "http://" + ln.Addr().String()
	// A keep-alive client, to see that the server asks it to reconnect.
	hc := &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	get := func(path string) (*http.Response, string) {
		t.Helper()
		res, err := hc.Get(drainEnv.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, string(body)
	}
	if res, _ := get("/readyz"); res.StatusCode != http.StatusOK || res.Close {
		t.Fatalf("before the drain: readyz %d, Connection: close %t", res.StatusCode, res.Close)
	}
	alice := drainEnv.Client()
	alice.Register("alice")

	cancel()
	if body := drainEnv.WaitReadyz(t, http.StatusServiceUnavailable); body != "not ready: draining\n" {
		t.Fatalf("readyz while draining: %q", body)
	}
	// Still serving, new connections included (each answer closes its
	// connection, so every request below dials again).
	for i := range 3 {
		res, body := get("/api/csrf")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET /api/csrf #%d while draining: %d %s", i, res.StatusCode, body)
		}
		if !res.Close { // the client's reading of Connection: close
			t.Fatalf("GET /api/csrf #%d while draining: no Connection: close", i)
		}
	}
	bob := drainEnv.Client()
	bob.Register("bob") // a new player signs up through the draining server
	if res := alice.Do("GET", "/api/auth/user", nil); res.Status != http.StatusOK || res.Str("user.username") != "alice" {
		t.Fatalf("GET /api/auth/user while draining: %d %s", res.Status, res.Raw)
	}
	if res := alice.Do("POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50}); res.Status != http.StatusOK {
		t.Fatalf("a bet while draining: %d %s", res.Status, res.Raw)
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned during the requests of the drain: %v", err)
	default:
	}

	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Serve did not return after the drain delay and the shutdown")
	}
	if c, err := net.DialTimeout("tcp", ln.Addr().String(), 5*time.Second); err == nil {
		c.Close()
		t.Fatal("the listener still accepts connections after the shutdown")
	}
}
