package api_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/games"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/server"
	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/test/apitest"
)

// liveWait bounds the wait for a bet to reach a stream (it takes
// milliseconds; the bound only keeps a broken feed from hanging the test).
const liveWait = 15 * time.Second

// connectWatch opens LiveService.WatchBets on env with the generated
// client and returns its bets as they arrive (the first, empty message —
// the stream opening — is read before it returns).
func connectWatch(t *testing.T, env *apitest.Env, minAmount string) <-chan *fairplayv1.LiveBet {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req := &fairplayv1.WatchBetsRequest{}
	if minAmount != "" {
		req.MinAmount = &minAmount
	}
	stream, err := fairplayv1connect.NewLiveServiceClient(http.DefaultClient, env.URL).WatchBets(ctx, connect.NewRequest(req))
	if err != nil {
		t.Fatal(err)
	}
	if !stream.Receive() {
		t.Fatalf("WatchBets did not open: %v", stream.Err())
	}
	out := make(chan *fairplayv1.LiveBet, 1000)
	go func() {
		defer close(out)
		for stream.Receive() {
			for _, b := range stream.Msg().GetBets() {
				out <- b
			}
		}
	}()
	return out
}

// waitConnectBet reads bets until id arrives.
func waitConnectBet(t *testing.T, bets <-chan *fairplayv1.LiveBet, id string) *fairplayv1.LiveBet {
	t.Helper()
	deadline := time.After(liveWait)
	for {
		select {
		case b, ok := <-bets:
			if !ok {
				t.Fatalf("Connect stream ended before bet %s", id)
			}
			if b.GetId() == id {
				return b
			}
		case <-deadline:
			t.Fatalf("bet %s not on the Connect stream after %s", id, liveWait)
		}
	}
}

// A bet settled through one replica reaches the watchers of another, on
// both the SSE route and the Connect stream, with the LiveBet fields as the
// bet's own answer gave them; a running Mines game appears only when it
// ends.
func TestLiveFeedAcrossReplicas(t *testing.T) {
	t.Parallel()
	a := apitest.Start(t)
	b := a.Replica()
	sse, res := b.WatchLive(t, "")
	if sse == nil {
		t.Fatalf("GET /api/live/bets: %d %v", res.Status, res.Body)
	}
	for h, want := range map[string]string{"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-store",
		"X-Accel-Buffering": "no"} {
		if got := sse.Res.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	cs := connectWatch(t, b, "")

	c := a.Client()
	c.Register("alice")
	dice := c.Do("POST", "/api/games/dice", map[string]any{"betAmount": 1.5, "rollTarget": 50})
	if dice.Status != 200 {
		t.Fatalf("dice: %d %s", dice.Status, dice.Raw)
	}
	id := dice.Str("betId")
	got, _ := sse.WaitBet(t, id, liveWait)
	// The bet's multiplier is what it paid: the target's on a win, 0 on a loss.
	mult := "0"
	if dice.Get("isWin") == true {
		mult = fmt.Sprint(dice.Get("multiplier"))
	}
	if got["game"] != "dice" || got["username"] != "alice" || got["hidden"] != false ||
		fmt.Sprint(got["amount"]) != "1.5" || fmt.Sprint(got["multiplier"]) != mult ||
		fmt.Sprint(got["payout"]) != fmt.Sprint(dice.Get("winAmount")) {
		t.Fatalf("live bet %v for the answer %s", got, dice.Raw)
	}
	if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(got["settledAt"])); err != nil {
		t.Fatalf("settledAt %v: %v", got["settledAt"], err)
	}
	// Decimals are JSON numbers on /api and exact strings in Connect.
	if !strings.Contains(sse.Raw(), `"amount":1.5`) {
		t.Fatalf("amount is not a JSON number: %s", sse.Raw())
	}
	if cb := waitConnectBet(t, cs, id); cb.GetAmount() != "1.5" || cb.GetUsername() != "alice" || cb.GetGame() != "dice" {
		t.Fatalf("Connect live bet %v", cb)
	}

	// A Mines game is on the feed when it ends, not before: a dice bet
	// placed after the start arrives with no trace of the game before it.
	start := ok(t, c.Do("POST", "/api/games/mines/start", `{"betAmount": 2, "mineCount": 3}`))
	game := start.Str("gameId")
	board := layout(t, a, c, games.Mines, start, games.Params{Mines: 3}).Mines
	tile := safeTiles(board.MineTiles)[0]
	ok(t, c.Do("POST", "/api/games/mines/click", map[string]any{"gameId": game, "row": tile / 5, "col": tile % 5}))
	after := c.Do("POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50})
	_, before := sse.WaitBet(t, after.Str("betId"), liveWait)
	for _, x := range before {
		if x["_id"] == game {
			t.Fatalf("a running Mines game is on the feed: %v", x)
		}
	}
	cash := ok(t, c.Do("POST", "/api/games/mines/cashout", map[string]any{"gameId": game}))
	mb, _ := sse.WaitBet(t, game, liveWait)
	if mb["game"] != "mines" || fmt.Sprint(mb["amount"]) != "2" || fmt.Sprint(mb["payout"]) != fmt.Sprint(cash.Get("winAmount")) {
		t.Fatalf("settled Mines game on the feed: %v, cash-out %s", mb, cash.Raw)
	}
}

// minAmount keeps the high rollers; a bad minAmount is a clear 400.
func TestLiveFeedHighRollers(t *testing.T) {
	t.Parallel()
	e := apitest.Start(t)
	for _, q := range []string{"minAmount=-1", "minAmount=abc", "minAmount=1e400"} {
		s, res := e.WatchLive(t, q)
		if s != nil || res.Status != 400 || res.Message() != "minAmount must be a non-negative amount" {
			t.Fatalf("%s: %d %v", q, res.Status, res.Body)
		}
	}
	high, _ := e.WatchLive(t, "minAmount=5")
	cs := connectWatch(t, e, "5")
	c := e.Client()
	c.Register("whale")
	small := c.Do("POST", "/api/games/dice", map[string]any{"betAmount": 4.99, "rollTarget": 50}).Str("betId")
	big := c.Do("POST", "/api/games/dice", map[string]any{"betAmount": 5, "rollTarget": 50}).Str("betId")
	if _, before := high.WaitBet(t, big, liveWait); len(before) != 0 {
		t.Fatalf("bets below minAmount on the high-roller stream: %v", before)
	}
	select {
	case b := <-cs:
		if b.GetId() != big {
			t.Fatalf("first bet on the Connect high-roller stream: %v, want %s", b, big)
		}
	case <-time.After(liveWait):
		t.Fatal("no bet on the Connect high-roller stream")
	}
	if strings.Contains(high.Raw(), small) {
		t.Fatal("the small bet reached the high-roller stream")
	}
}

// A replica serves at most FAIRPLAY_LIVE_MAX_WATCHERS streams; one more is
// refused with 503 and Retry-After (Connect: unavailable), and a stream
// that ends makes room.
func TestLiveWatcherLimit(t *testing.T) {
	t.Parallel()
	e := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) { c.LiveMaxWatchers = 2 }))
	first, _ := e.WatchLive(t, "")
	connectWatch(t, e, "")
	s, res := e.WatchLive(t, "")
	if s != nil || res.Status != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" ||
		res.Message() != "Too many people are watching the live bets on this server. Please try again in a moment." {
		t.Fatalf("third watcher: %d %v %v", res.Status, res.Header, res.Body)
	}
	stream, err := fairplayv1connect.NewLiveServiceClient(http.DefaultClient, e.URL).WatchBets(context.Background(),
		connect.NewRequest(&fairplayv1.WatchBetsRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	if stream.Receive() || connect.CodeOf(stream.Err()) != connect.CodeUnavailable {
		t.Fatalf("third Connect watcher: %v", stream.Err())
	}
	metric(t, e, "fairplay_live_watchers", "2")
	first.Close()
	// The hub lets the stream go when its handler returns.
	deadline := time.Now().Add(liveWait)
	for {
		s, res := e.WatchLive(t, "")
		if s != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no room after a stream ended: %d", res.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// metric fails the test unless the metrics page has the line "name value".
func metric(t *testing.T, e *apitest.Env, name, value string) {
	t.Helper()
	res, err := http.Get(e.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(body), "\n"+name+" "+value+"\n") {
		t.Fatalf("metrics: want %s %s in\n%s", name, value, grepLines(string(body), name))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A graceful shutdown ends open streams at once (their clients reconnect
// elsewhere), so a rolling upgrade is not held up by them: Serve returns
// without hitting its shutdown timeout.
func TestLiveStreamsEndOnShutdown(t *testing.T) {
	t.Parallel()
	e := apitest.Start(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- e.App.Server.Serve(ctx, ln, server.Drain{Delay: 0, ShutdownTimeout: 60 * time.Second})
	}()
	direct := *e
	direct.URL = "http://" + ln.Addr().String()
	sse, res := direct.WatchLive(t, "")
	if sse == nil {
		t.Fatalf("watch: %d", res.Status)
	}
	cs := connectWatch(t, &direct, "")
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve with open streams: %v", err)
	}
	<-sse.Ended()
	for range cs {
	}
	// New streams are refused once the feed has closed.
	s, res := e.WatchLive(t, "")
	if s != nil || res.Status != http.StatusServiceUnavailable || res.Message() != "The server is restarting. Please reconnect." {
		t.Fatalf("a stream after shutdown: %d %v", res.Status, res.Body)
	}
}

// Redis down: bets go on, the feed pauses (dropped bets are counted), and
// resumes when Redis is back.
func TestLiveFeedWithoutRedis(t *testing.T) {
	t.Parallel()
	e := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) { c.RedisURL = "redis://127.0.0.1:1/0" }))
	s, _ := e.WatchLive(t, "")
	c := e.Client()
	c.Register("offline")
	for range 5 {
		if res := c.Do("POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50}); res.Status != 200 {
			t.Fatalf("dice with Redis down: %d %s", res.Status, res.Raw)
		}
	}
	deadline := time.Now().Add(liveWait)
	for e.App.LiveFeed.Stats().Dropped == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no bet counted as dropped with Redis down")
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case b := <-s.Bets():
		t.Fatalf("a bet on the feed without Redis: %v", b)
	default:
	}
	if !strings.Contains(grepMetrics(t, e), "fairplay_live_bets_dropped_total") {
		t.Fatal("no fairplay_live_bets_dropped_total metric")
	}
}

func grepMetrics(t *testing.T, e *apitest.Env) string {
	t.Helper()
	res, err := http.Get(e.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return grepLines(string(body), "fairplay_live_")
}
