package security_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/google/uuid"

	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/live"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/test/apitest"
)

const liveWait = 15 * time.Second

// liveBetFields are the JSON names of LiveBet: all a watcher may learn.
var liveBetFields = map[string]bool{"_id": true, "game": true, "username": true, "hidden": true, "amount": true,
	"multiplier": true, "payout": true, "settledAt": true}

// TestLiveFeedTellsNothingSecret: what the floor sees of a player's bets
// is the LiveBet fields and nothing else — no seeds, nonce, params or
// outcome details; a running game is not on it before it ends; a refused
// bet, which never committed, is never on it; and a player who hides their
// name is never named, on SSE or Connect, even while the same bet's answer
// to the player carries everything.
func TestLiveFeedTellsNothingSecret(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	sse, _ := env.WatchLive(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs, err := fairplayv1connect.NewLiveServiceClient(http.DefaultClient, env.URL).WatchBets(ctx,
		connect.NewRequest(&fairplayv1.WatchBetsRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	var connectBets []*fairplayv1.LiveBet
	var cmu sync.Mutex
	go func() {
		for cs.Receive() {
			cmu.Lock()
			connectBets = append(connectBets, cs.Msg().GetBets()...)
			cmu.Unlock()
		}
	}()

	p := newPlayer(t, env)
	if res := p.Do("POST", "/api/auth/preferences", map[string]any{"hideUsername": true}); res.Status != 200 {
		t.Fatalf("hide: %d %s", res.Status, res.Raw)
	}
	var ids []string
	var secrets []string
	play := func(path string, body map[string]any) {
		t.Helper()
		res := p.Do("POST", path, body)
		if res.Status != 200 {
			t.Fatalf("%s: %d %s", path, res.Status, res.Raw)
		}
		ids = append(ids, res.Str("betId"))
		secrets = append(secrets, res.Str("fairness.serverSeedHash"), res.Str("fairness.clientSeed"))
	}
	play("/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50})
	play("/api/games/plinko", map[string]any{"betAmount": 1, "rows": 8, "risk": "high"})
	play("/api/games/keno", map[string]any{"betAmount": 1, "selectedNumbers": []int{1, 2, 3}, "riskLevel": "classic"})
	// A running game, and a refused bet (more than the balance).
	mines := p.Do("POST", "/api/games/mines/start", map[string]any{"betAmount": 1, "mineCount": 3})
	if mines.Status != 200 {
		t.Fatalf("mines: %d %s", mines.Status, mines.Raw)
	}
	if res := p.Do("POST", "/api/games/dice", map[string]any{"betAmount": 9999, "rollTarget": 50}); res.Status != 400 {
		t.Fatalf("a bet above the balance: %d %s", res.Status, res.Raw)
	}
	// A visible player's bet last: once it is on the feed, everything
	// before it has been published.
	other := newPlayer(t, env)
	last := other.Do("POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50}).Str("betId")
	_, before := sse.WaitBet(t, last, liveWait)

	if len(before) != 3 {
		t.Fatalf("%d bets before the last, want the 3 settled ones: %v", len(before), before)
	}
	for i, b := range before {
		if b["_id"] != ids[i] || b["hidden"] != true || b["username"] != "" {
			t.Fatalf("bet %d on the feed: %v, want %s hidden", i, b, ids[i])
		}
		for k := range b {
			if !liveBetFields[k] {
				t.Fatalf("the feed carries %q: %v", k, b)
			}
		}
	}
	raw := sse.Raw()
	for _, s := range append(secrets, p.name, mines.Str("gameId"), "serverSeed", "clientSeed", "nonce", "params", "state",
		"outcome", "balance") {
		if s != "" && strings.Contains(raw, s) {
			t.Fatalf("the SSE feed holds %q:\n%s", s, raw)
		}
	}
	if !strings.Contains(raw, other.name) {
		t.Fatal("the visible player's name is not on the feed")
	}
	deadline := time.Now().Add(liveWait)
	for {
		cmu.Lock()
		n := len(connectBets)
		cmu.Unlock()
		if n >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmu.Lock()
	defer cmu.Unlock()
	if len(connectBets) != 4 {
		t.Fatalf("%d bets on the Connect stream, want 4", len(connectBets))
	}
	for _, b := range connectBets[:3] {
		if b.GetUsername() != "" || !b.GetHidden() {
			t.Fatalf("a hidden player's bet on Connect: %v", b)
		}
		if raw, _ := json.Marshal(b); strings.Contains(string(raw), p.name) {
			t.Fatalf("the hidden name in a Connect message: %s", raw)
		}
	}
}

// TestPreferencesOnlyForOneself: the preferences route changes the
// caller's account whatever the body names; nobody can hide or reveal
// another player's name.
func TestPreferencesOnlyForOneself(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	victim, attacker := newPlayer(t, env), newPlayer(t, env)
	for _, body := range []map[string]any{
		{"hideUsername": true, "userId": victim.id},
		{"hideUsername": true, "_id": victim.id, "username": victim.name},
		{"hideUsername": true, "user": map[string]any{"_id": victim.id}},
	} {
		res := attacker.Do("POST", "/api/auth/preferences", body)
		if res.Status != 200 || res.Str("user.username") != attacker.name {
			t.Fatalf("%v: %d %s", body, res.Status, res.Raw)
		}
	}
	var hidden bool
	if err := env.App.Postgres.QueryRow(context.Background(), `SELECT hide_username FROM users WHERE id = $1`, victim.id).
		Scan(&hidden); err != nil || hidden {
		t.Fatalf("the victim's preference: %v %v", hidden, err)
	}
	// Without a valid session nothing changes.
	attacker.Do("POST", "/api/auth/logout", map[string]any{"refreshToken": attacker.RefreshToken})
	before := dbSnapshot(t, env)
	if res := attacker.Do("POST", "/api/auth/preferences", map[string]any{"hideUsername": false}); res.Status != 401 {
		t.Fatalf("after logout: %d %s", res.Status, res.Raw)
	}
	sameDB(t, env, before, "preferences of a revoked session")
}

// TestTopUpCannotBeGamed: claims racing through two replicas from two
// sessions credit once; a player at or above the threshold — or holding a
// running game — cannot claim, and the refusal changes nothing.
func TestTopUpCannotBeGamed(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	replica := env.Replica()
	p := newPlayer(t, env)
	p.setBalance(t, money.FromCents(9))
	second := env.Client()
	second.Login(p.name, "secret123")
	var wg sync.WaitGroup
	var mu sync.Mutex
	credited := 0
	for i := range 16 {
		c := p.Client
		if i%2 == 1 {
			c = second.Via(replica)
		}
		wg.Go(func() {
			res := c.Do("POST", "/api/wallet/top-up", nil)
			mu.Lock()
			defer mu.Unlock()
			switch res.Status {
			case 200:
				credited++
			case 409:
			default:
				t.Errorf("racing claim: %d %s", res.Status, res.Raw)
			}
		})
	}
	wg.Wait()
	if credited != 1 {
		t.Fatalf("%d racing claims credited", credited)
	}
	env.LedgerClean(t)

	rich := newPlayer(t, env)
	for _, bal := range []money.Amount{money.FromCents(10), money.FromCents(11), money.Dollars(1000)} {
		rich.setBalance(t, bal)
		before := dbSnapshot(t, env)
		if res := rich.Do("POST", "/api/wallet/top-up", nil); res.Status != 409 ||
			res.Message() != "Top-up available when your balance is below 0.10" {
			t.Fatalf("claim at %s: %d %s", bal, res.Status, res.Raw)
		}
		sameDB(t, env, before, "a refused claim")
	}
	// Everything in a running game, then a claim: refused.
	rich.setBalance(t, money.FromCents(10))
	if res := rich.Do("POST", "/api/games/pump/start", map[string]any{"betAmount": 0.1, "difficulty": "easy"}); res.Status != 200 {
		t.Fatalf("pump: %d %s", res.Status, res.Raw)
	}
	before := dbSnapshot(t, env)
	if res := rich.Do("POST", "/api/wallet/top-up", nil); res.Status != 409 {
		t.Fatalf("claim with a running game: %d %s", res.Status, res.Raw)
	}
	sameDB(t, env, before, "a claim with a running game")
}

// TestLiveStreamCap: beyond FAIRPLAY_LIVE_MAX_WATCHERS a replica refuses
// streams (503) instead of taking on more, and bets are unaffected.
func TestLiveStreamCap(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) { c.LiveMaxWatchers = 3 }))
	refused := 0
	for range 10 {
		if s, res := env.WatchLive(t, ""); s == nil {
			if res.Status != http.StatusServiceUnavailable {
				t.Fatalf("a refused stream: %d", res.Status)
			}
			refused++
		}
	}
	if refused != 7 {
		t.Fatalf("%d of 10 streams refused with a cap of 3", refused)
	}
	if s := env.App.Live.Stats(); s.Watchers != 3 {
		t.Fatalf("%d watchers with a cap of 3", s.Watchers)
	}
	p := newPlayer(t, env)
	if res := p.Do("POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50}); res.Status != 200 {
		t.Fatalf("a bet with the streams full: %d", res.Status)
	}
}

// TestLiveStreamsPerAddress: one client cannot take every place of a
// replica's feed. Beyond FAIRPLAY_LIVE_MAX_WATCHERS_PER_IP streams from one
// address (an IPv6 client's whole /64, whose addresses it picks freely)
// are refused with 429, its message and Retry-After, on SSE and Connect,
// while another address is still served, and a closed stream gives its
// place back. The address is the one X-Forwarded-For names through a
// trusted proxy, as for the sign-in limits.
func TestLiveStreamsPerAddress(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) {
		trustLoopback(c)
		c.LiveMaxWatchers, c.LiveMaxWatchersPerIP = 10, 2
	}))
	from := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }
	const msg = "Too many live bets streams from your address. Close another tab and try again."
	for _, addrs := range [][]string{
		{"203.0.113.7", "203.0.113.7", "203.0.113.7"},
		{"2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::3"},
	} {
		first, _ := env.WatchLiveWith(t, "", from(addrs[0]))
		second, _ := env.WatchLiveWith(t, "", from(addrs[1]))
		if first == nil || second == nil {
			t.Fatalf("%v: the first two streams were refused", addrs)
		}
		s, res := env.WatchLiveWith(t, "", from(addrs[2]))
		if s != nil || res.Status != http.StatusTooManyRequests || res.Message() != msg ||
			res.Header.Get("Retry-After") != "5" {
			t.Fatalf("%v: the third stream: %d %v (Retry-After %q), want 429 %q", addrs, res.Status, res.Body,
				res.Header.Get("Retry-After"), msg)
		}
		// Connect's stream is counted the same way.
		req := connect.NewRequest(&fairplayv1.WatchBetsRequest{})
		req.Header().Set("X-Forwarded-For", addrs[2])
		ctx, cancel := context.WithTimeout(context.Background(), liveWait)
		cs, err := fairplayv1connect.NewLiveServiceClient(http.DefaultClient, env.URL).WatchBets(ctx, req)
		if err == nil {
			for cs.Receive() {
				t.Fatalf("%v: a Connect stream beyond the address's limit was opened", addrs)
			}
			err = cs.Err()
		}
		cancel()
		if connect.CodeOf(err) != connect.CodeResourceExhausted {
			t.Fatalf("%v: Connect beyond the address's limit: %v, want resource_exhausted", addrs, err)
		}
		first.Close()
		deadline := time.Now().Add(liveWait)
		for {
			s, res := env.WatchLiveWith(t, "", from(addrs[2]))
			if s != nil {
				break
			}
			if res.Status != http.StatusTooManyRequests || time.Now().After(deadline) {
				t.Fatalf("%v: after a stream closed: %d %v", addrs, res.Status, res.Body)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if other, res := env.WatchLiveWith(t, "", from("198.51.100.1")); other == nil {
		t.Fatalf("another address, with both full: %d %v", res.Status, res.Body)
	}
	if s := env.App.Live.Stats(); s.Watchers != 5 {
		t.Fatalf("%d watchers, want 5 (two per full address and one)", s.Watchers)
	}
}

// TestSlowLiveReaderIsDropped: a client that opens the stream and never
// reads cannot make the server hold its bets: the watcher keeps only the
// newest few, is disconnected once it has stalled (counted), and the
// server's heap does not grow however many bets go by meanwhile.
func TestSlowLiveReaderIsDropped(t *testing.T) {
	// Not parallel: the heap is measured for the whole process, and Go runs
	// a test that does not call t.Parallel with no other test of the package
	// running, so only this test's allocations count (in parallel, others'
	// grew it by 30 MB on CI while this reader had long been dropped).
	env := apitest.Start(t)
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1024) })
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(env.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "GET /api/live/bets HTTP/1.1\r\nHost: fairplay\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// The watcher registers when the request arrives.
	deadline := time.Now().Add(liveWait)
	for env.App.Live.Stats().Watchers != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the stream did not open")
		}
		time.Sleep(10 * time.Millisecond)
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	start := heap()
	batch := make([]live.Bet, 500)
	for i := range batch {
		batch[i] = live.Bet{ID: uuid.New(), Game: "plinko", Username: strings.Repeat("x", 20), Amount: money.Dollars(10000),
			Multiplier: 10000, Payout: money.Dollars(10000), SettledAt: time.Now()}
	}
	// Up to 30 s of bets at 100k a second, until the reader is dropped.
	sent := 0
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end) && env.App.Live.Stats().Watchers > 0; {
		env.App.Live.Broadcast(batch)
		sent += len(batch)
		time.Sleep(5 * time.Millisecond)
	}
	s := env.App.Live.Stats()
	if s.Watchers != 0 || s.Dropped != 1 {
		t.Fatalf("after %d bets to a reader that never reads: %+v", sent, s)
	}
	if grown := int64(heap()) - int64(start); grown > 16<<20 {
		t.Fatalf("the heap grew by %d bytes while %d bets went by a reader that never reads", grown, sent)
	}
	t.Logf("%d bets went by before the reader was dropped", sent)
}

// TestAFewAddressesCannotHoldTheFeed: a few addresses, each at its own
// limit, cannot keep every other visitor off a replica's feed. Found by a
// review playing a hostile client: 25 addresses (or 25 /64s of one IPv6
// /56, a home's usual allocation) at 20 streams each filled the 500 places
// for as long as they liked, a heartbeat keeping even a stream that never
// reads alive, and every other visitor was refused 503. A full replica now
// gives a newcomer the place of the newest stream of the site holding the
// most (an IPv6 /48 counts as one, however many /64s it uses), which ends.
func TestAFewAddressesCannotHoldTheFeed(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) {
		trustLoopback(c)
		c.LiveMaxWatchers, c.LiveMaxWatchersPerIP = 10, 2
	}))
	from := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }
	var held []*apitest.LiveStream
	for i := range 5 {
		for range 2 {
			s, res := env.WatchLiveWith(t, "", from(fmt.Sprintf("2001:db8:1:1%d::1", i)))
			if s == nil {
				t.Fatalf("stream %d of the /56: %d %v", len(held), res.Status, res.Body)
			}
			held = append(held, s)
		}
	}
	s, res := env.WatchLiveWith(t, "", from("198.51.100.9"))
	if s == nil {
		t.Fatalf("another visitor, with the feed held by one /56: %d %v", res.Status, res.Body)
	}
	ended := 0
	for _, h := range held {
		select {
		case <-h.Ended():
			ended++
		case <-time.After(50 * time.Millisecond):
		}
	}
	if ended != 1 {
		t.Fatalf("%d of the held streams ended, want the one whose place was given", ended)
	}
	if st := env.App.Live.Stats(); st.Watchers != 10 || st.Displaced != 1 {
		t.Fatalf("feed %+v, want 10 streams and 1 displaced", st)
	}
}
