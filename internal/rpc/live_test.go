package rpc

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/google/uuid"

	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/live"
	"github.com/fairplay/fairplay/internal/money"
)

// The server's read and write timeouts, made for requests, do not end a
// stream: both the SSE route and the Connect stream lift them and still
// deliver a bet broadcast after several timeouts have passed.
func TestStreamsOutliveServerTimeouts(t *testing.T) {
	t.Parallel()
	hub := live.NewHub(live.HubOptions{})
	h := NewLiveHandler(hub, slog.Default())
	mux := http.NewServeMux()
	mux.Handle("GET /api/live/bets", http.HandlerFunc(h.serveSSE))
	path, handler := fairplayv1connect.NewLiveServiceHandler(h)
	mux.Handle(path, liveStreamControl(handler))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 200 * time.Millisecond
	srv := &http.Server{Handler: mux, ReadTimeout: timeout, WriteTimeout: timeout, ReadHeaderTimeout: timeout}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { hub.Close(); _ = srv.Close() })
	url := "http://" + ln.Addr().String()

	res, err := http.Get(url + "/api/live/bets")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := fairplayv1connect.NewLiveServiceClient(http.DefaultClient, url).WatchBets(ctx,
		connect.NewRequest(&fairplayv1.WatchBetsRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	if !stream.Receive() {
		t.Fatalf("Connect stream did not open: %v", stream.Err())
	}
	time.Sleep(5 * timeout) // several read and write timeouts pass
	id := uuid.New()
	hub.Broadcast([]live.Bet{{ID: id, Game: "dice", Username: "ann", Amount: money.Dollars(3), SettledAt: time.Now()}})

	r := bufio.NewReader(res.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("SSE stream ended: %v", err)
		}
		if strings.HasPrefix(line, "data: ") {
			if !strings.Contains(line, id.String()) || !strings.Contains(line, `"amount":3`) {
				t.Fatalf("SSE data %s", line)
			}
			break
		}
	}
	if !stream.Receive() || len(stream.Msg().GetBets()) != 1 || stream.Msg().GetBets()[0].GetId() != id.String() {
		t.Fatalf("Connect stream after the timeouts: %v %v", stream.Msg(), stream.Err())
	}
}
