package replicas_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/fair"
	"github.com/fairplay/fairplay/internal/games"
	"github.com/fairplay/fairplay/internal/games/mines"
	"github.com/fairplay/fairplay/internal/money"
)

const replicas = 3

// startingBalance is what each new user is granted.
var startingBalance = money.Dollars(1000)

// mineTiles replays a started Mines game's hidden board: the server seed is
// read from the database, the rest comes with the start response.
func mineTiles(t tb, cl *cluster, c *client, start response, m int) []int {
	t.Helper()
	var server string
	if err := cl.db.QueryRow(context.Background(),
		`SELECT server_seed FROM seed_pairs WHERE user_id = $1 AND revealed_at IS NULL`, c.UserID).Scan(&server); err != nil {
		t.Fatalf("active seed pair: %v", err)
	}
	nonce, err := json.Number(fmt.Sprint(start.Get("fairness.nonce"))).Int64()
	if err != nil {
		t.Fatalf("nonce in %s", start.Raw)
	}
	o, err := games.Replay(games.Mines, fair.NewStream(server, start.Str("fairness.clientSeed"), uint64(nonce)), games.Params{Mines: m})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	return o.Mines.MineTiles
}

func safeTiles(mineTiles []int) []int {
	var out []int
	for tile := range mines.Tiles {
		if !slices.Contains(mineTiles, tile) {
			out = append(out, tile)
		}
	}
	return out
}

func tile(id string, n int) map[string]any {
	return map[string]any{"gameId": id, "row": n / mines.Size, "col": n % mines.Size}
}

// player is one player's running account of what the API told them.
type player struct {
	t       tb
	cl      *cluster
	c       *client
	balance money.Amount // expected
	games   int
	actions int
	races   int
}

// settle checks that a game's final response shows the expected balance.
func (p *player) settle(res response, stake money.Amount) {
	p.t.Helper()
	p.games++
	p.balance += amount(p.t, res.Body["winAmount"]) - stake
	if got := amount(p.t, res.Body["newBalance"]); got != p.balance {
		p.t.Fatalf("replica %d: balance %s after the game, want %s: %s", res.Replica, got, p.balance, res.Raw)
	}
}

func (p *player) do(path string, body any) response {
	p.t.Helper()
	p.actions++
	return ok(p.t, p.c.Do("POST", path, body))
}

// mines plays one game: gems safe tiles, then a mine or a cash-out.
func (p *player) mines(m, gems int, boom bool) {
	p.t.Helper()
	start := p.do("/api/games/mines/start", map[string]any{"betAmount": 1, "mineCount": m})
	id := start.Str("gameId")
	board := mineTiles(p.t, p.cl, p.c, start, m)
	safe := safeTiles(board)
	var last response
	for _, n := range safe[:gems] {
		last = p.do("/api/games/mines/click", tile(id, n))
		if last.Body["isSafe"] != true || last.Body["gameOver"] == true {
			p.t.Fatalf("replica %d: gem %d of %d: %s", last.Replica, n, gems, last.Raw)
		}
	}
	if boom {
		last = p.do("/api/games/mines/click", tile(id, board[0]))
		if last.Body["hitMine"] != true || last.Body["gameOver"] != true {
			p.t.Fatalf("replica %d: mine: %s", last.Replica, last.Raw)
		}
	} else {
		last = p.do("/api/games/mines/cashout", map[string]any{"gameId": id})
		mult, _ := mines.Multiplier(m, gems)
		if want, _ := money.MulFloor(money.Dollars(1), mult); amount(p.t, last.Body["winAmount"]) != want {
			p.t.Fatalf("replica %d: %d gems of %d mines paid %v, want %s", last.Replica, gems, m, last.Body["winAmount"], want)
		}
	}
	p.settle(last, money.Dollars(1))
}

// pump plays one game: up to k pumps, then a cash-out if the balloon held.
func (p *player) pump(difficulty string, k int) {
	p.t.Helper()
	id := p.do("/api/games/pump/start", map[string]any{"betAmount": 1, "difficulty": difficulty}).Str("gameId")
	var last response
	for range k {
		if last = p.do("/api/games/pump/pump", map[string]any{"gameId": id}); last.Body["gameOver"] == true {
			p.settle(last, money.Dollars(1))
			return
		}
	}
	p.settle(p.do("/api/games/pump/cashout", map[string]any{"gameId": id}), money.Dollars(1))
}

// blackjack plays one hand: double at once, or hit below 15 and stand.
func (p *player) blackjack(double bool) {
	p.t.Helper()
	stake := money.Dollars(1)
	res := p.do("/api/games/blackjack/start", map[string]any{"betAmount": 1})
	id := res.Str("gameId")
	if res.Get("hands.insurance") == "offered" { // the dealer shows an ace: decline, then the dealer peeks
		res = p.do("/api/games/blackjack/insurance", map[string]any{"gameId": id, "accept": false})
	}
	for first := true; res.Body["gameOver"] != true; first = false {
		v, _ := json.Number(fmt.Sprint(res.Body["playerValue"])).Int64()
		switch {
		case first && double:
			stake *= 2
			res = p.do("/api/games/blackjack/double", map[string]any{"gameId": id})
			if res.Body["gameOver"] != true {
				p.t.Fatalf("replica %d: a double did not end the hand: %s", res.Replica, res.Raw)
			}
		case v < 15:
			res = p.do("/api/games/blackjack/hit", map[string]any{"gameId": id})
		default:
			res = p.do("/api/games/blackjack/stand", map[string]any{"gameId": id})
		}
	}
	p.settle(res, stake)
}

// race sends the same cash-out to every replica at once: one must win.
func (p *player) race(path, id string) {
	p.t.Helper()
	res := make([]response, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() { res[i], errs[i] = p.c.send(i, "POST", path, map[string]any{"gameId": id}) })
	}
	wg.Wait()
	p.actions += replicas
	p.races++
	var won []response
	for i, r := range res {
		switch {
		case errs[i] != nil:
			p.t.Fatalf("%s on replica %d: %v", path, i, errs[i])
		case r.Status == 200 && r.Body["success"] == true:
			won = append(won, r)
		case r.Status == 409 && r.Message() == "This game is already over":
		default:
			p.t.Fatalf("%s on replica %d: %d %s", path, i, r.Status, r.Raw)
		}
	}
	if len(won) != 1 {
		p.t.Fatalf("%d of %d racing %s calls on different replicas succeeded", len(won), replicas, path)
	}
	p.settle(won[0], money.Dollars(1))
}

// Every player's every action goes to the next replica, so each game is
// started, played and settled by different processes; racing cash-outs sent
// to all three at once pay exactly once.
func TestStatefulGamesMoveBetweenReplicas(t *testing.T) {
	t.Parallel()
	cl := startCluster(t, replicas)
	const players = 8
	var mu sync.Mutex
	var games, actions, races int
	var wg sync.WaitGroup
	for i := range players {
		wg.Go(func() {
			t := worker{t, fmt.Sprintf("player %d", i)}
			c := newClient(t, cl)
			c.next.Store(uint64(i)) // players start on different replicas
			c.Register(fmt.Sprintf("roamer%d", i))
			p := &player{t: t, cl: cl, c: c, balance: startingBalance}
			for g := range 3 {
				p.mines(1+(i+g)%5, 1+g, g == 1)
				p.pump([]string{"easy", "medium", "hard", "expert"}[(i+g)%4], 2+g)
				p.blackjack(g == 2)
			}
			for range 2 {
				// Mines: one gem found, then cash-outs race on all replicas.
				start := p.do("/api/games/mines/start", map[string]any{"betAmount": 1, "mineCount": 3})
				id := start.Str("gameId")
				p.do("/api/games/mines/click", tile(id, safeTiles(mineTiles(t, cl, c, start, 3))[0]))
				p.race("/api/games/mines/cashout", id)
				// Pump: one pump, then cash-outs race if the balloon held.
				id = p.do("/api/games/pump/start", map[string]any{"betAmount": 1, "difficulty": "easy"}).Str("gameId")
				if res := p.do("/api/games/pump/pump", map[string]any{"gameId": id}); res.Body["gameOver"] == true {
					p.settle(res, money.Dollars(1))
				} else {
					p.race("/api/games/pump/cashout", id)
				}
			}
			if a := c.Do("GET", "/api/games/active", nil); a.Body["mines"] != nil || a.Body["pump"] != nil || a.Body["blackjack"] != nil {
				t.Fatalf("replica %d: games left running: %s", a.Replica, a.Raw)
			}
			for r := range replicas {
				if got := amount(t, c.On(r, "GET", "/api/auth/user", nil).Get("user.balance")); got != p.balance {
					t.Fatalf("replica %d shows balance %s, want %s", r, got, p.balance)
				}
			}
			// The database agrees: 1000 + Σ(payout − amount) over the player's bets.
			var n int
			var net money.Amount
			if err := cl.db.QueryRow(context.Background(), `
					SELECT count(*), coalesce(sum(payout - amount), 0)::bigint FROM bets WHERE user_id = $1`, c.UserID).Scan(&n, &net); err != nil {
				t.Fatalf("player bets: %v", err)
			}
			if n != p.games || startingBalance+net != p.balance {
				t.Fatalf("database: %d bets netting %s, the API: %d games ending at %s", n, net, p.games, p.balance)
			}
			mu.Lock()
			games, actions, races = games+p.games, actions+p.actions, races+p.races
			mu.Unlock()
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	cl.settledOnce(t)
	r := cl.ledger(t)
	s := cl.totals(t)
	if s.Users != players || s.Bets != int64(games) || s.Balances != startingBalance*players-s.Staked+s.Paid {
		t.Fatalf("totals %+v for %d games", s, games)
	}
	t.Logf("%d players, %d games (%d racing cash-outs), %d actions; requests per replica %v; ledger %+v",
		players, games, races, actions, servedCounts(cl), r.Totals)
}

func servedCounts(cl *cluster) []int64 {
	out := make([]int64, len(cl.served))
	for i := range cl.served {
		out[i] = cl.served[i].Load()
	}
	return out
}

// expectStatus requires status from path on replica i.
func expectStatus(t *testing.T, c *client, i int, method, path string, body any, status int, what string) {
	t.Helper()
	if res := c.On(i, method, path, body); res.Status != status {
		t.Fatalf("%s on replica %d: %d %s, want %d", what, i, res.Status, res.Raw, status)
	}
}

// currentSession returns the id of the session c's token belongs to.
func currentSession(t *testing.T, c *client, i int) string {
	t.Helper()
	res := c.On(i, "GET", "/api/auth/sessions", nil)
	list, _ := res.Body["sessions"].([]any)
	for _, s := range list {
		if m, _ := s.(map[string]any); m["current"] == true {
			return m["_id"].(string)
		}
	}
	t.Fatalf("no current session on replica %d: %d %s", i, res.Status, res.Raw)
	return ""
}

// A session ended on one replica is refused by the others on the very next
// call, though each of them had just accepted it.
func TestRevocationIsImmediateAcrossReplicas(t *testing.T) {
	t.Parallel()
	cl := startCluster(t, replicas)
	const a, b, c = 0, 1, 2
	owner := newClient(t, cl)
	owner.Register("traveller")
	login := func() *client {
		t.Helper()
		s := newClient(t, cl)
		s.Login("traveller", "secret123")
		// Each replica accepts the new session first, so any replica that
		// remembered that would answer wrongly afterwards.
		for r := range replicas {
			expectStatus(t, s, r, "GET", "/api/auth/user", nil, 200, "fresh session")
		}
		return s
	}

	// Revoke a session on A: B and C refuse its access token at once.
	phone := login()
	id := currentSession(t, phone, c)
	expectStatus(t, owner, a, "POST", "/api/auth/revoke-session", map[string]any{"sessionId": id}, 200, "revoke")
	expectStatus(t, phone, b, "GET", "/api/auth/user", nil, 401, "revoked session's token")
	expectStatus(t, phone, c, "GET", "/api/auth/user", nil, 401, "revoked session's token")
	expectStatus(t, phone, a, "POST", "/api/games/dice", map[string]any{"betAmount": 1, "rollTarget": 50}, 401, "revoked session's bet")
	expectStatus(t, phone, c, "POST", "/api/auth/refresh", map[string]any{"refreshToken": phone.RefreshToken}, 401, "revoked session's refresh")

	// Log out on B: C refuses the refresh token, A and C the access token.
	laptop := login()
	ref := laptop.On(c, "POST", "/api/auth/refresh", map[string]any{"refreshToken": laptop.RefreshToken})
	if ref.Status != 200 || ref.Str("refreshToken") == "" {
		t.Fatalf("refresh before logout on replica %d: %d %s", c, ref.Status, ref.Raw)
	}
	// Refresh tokens rotate; the logout on another replica takes the new one.
	laptop.Token, laptop.RefreshToken = ref.Str("token"), ref.Str("refreshToken")
	expectStatus(t, laptop, b, "POST", "/api/auth/logout", map[string]any{"refreshToken": laptop.RefreshToken}, 200, "logout")
	expectStatus(t, laptop, c, "POST", "/api/auth/refresh", map[string]any{"refreshToken": laptop.RefreshToken}, 401, "refresh after logout")
	expectStatus(t, laptop, a, "GET", "/api/auth/user", nil, 401, "logged-out session's token")
	expectStatus(t, laptop, c, "GET", "/api/auth/user", nil, 401, "logged-out session's token")

	// Change the password on C: A and B refuse the other session at once;
	// the session that changed it lives on everywhere.
	tablet := login()
	expectStatus(t, owner, c, "POST", "/api/auth/change-password",
		map[string]any{"currentPassword": "secret123", "newPassword": "Abcdef1!"}, 200, "change password")
	expectStatus(t, tablet, a, "GET", "/api/auth/user", nil, 401, "other session after the password change")
	expectStatus(t, tablet, b, "GET", "/api/auth/user", nil, 401, "other session after the password change")
	expectStatus(t, tablet, a, "POST", "/api/auth/refresh", map[string]any{"refreshToken": tablet.RefreshToken}, 401, "other session's refresh after the password change")
	for r := range replicas {
		expectStatus(t, owner, r, "GET", "/api/auth/user", nil, 200, "current session after the password change")
	}
	expectStatus(t, newClient(t, cl), b, "POST", "/api/auth/login",
		map[string]any{"username": "traveller", "password": "secret123", "turnstileToken": "XXXX.DUMMY.TOKEN.XXXX"}, 401, "old password")
	fresh := newClient(t, cl)
	fresh.Login("traveller", "Abcdef1!")

	// The sessions left are the one that changed the password and the new one.
	if res := owner.On(a, "GET", "/api/auth/sessions", nil); len(res.Body["sessions"].([]any)) != 2 {
		t.Fatalf("sessions left: %s", res.Raw)
	}
}

// loadStats are the bets the load accepted, as the API reported them.
type loadStats struct {
	bets, mines  atomic.Int64
	staked, paid atomic.Int64 // money.Amount units
}

// A bounded mixed load on all three replicas leaves the books exact.
func TestLedgerExactAfterMixedLoad(t *testing.T) {
	t.Parallel()
	cl := startCluster(t, replicas)
	const (
		workers = 16
		maxBets = 150
		window  = 5 * time.Second
	)
	var st loadStats
	start := time.Now()
	clients := make([]*client, workers)
	for w := range workers {
		clients[w] = newClient(t, cl)
		clients[w].next.Store(uint64(w))
		clients[w].Register(fmt.Sprintf("loader%d", w))
	}
	deadline := time.Now().Add(window)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			t := worker{t, fmt.Sprintf("worker %d", w)}
			c := clients[w].clone(t)
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			bet := func(path string, body map[string]any, stake money.Amount) response {
				t.Helper()
				body["betAmount"] = json.Number(stake.String())
				res := ok(t, c.Do("POST", path, body))
				st.bets.Add(1)
				st.staked.Add(int64(stake))
				return res
			}
			for n := 0; n < maxBets && time.Now().Before(deadline); n++ {
				stake := money.FromCents(int64(10 + rng.IntN(91))) // 0.10 … 1.00, the minimum bet and up
				var res response
				switch n % 4 {
				case 0:
					res = bet("/api/games/dice", map[string]any{"rollTarget": 49.5}, stake)
				case 1:
					res = bet("/api/games/plinko", map[string]any{"rows": 8 + rng.IntN(9), "risk": []string{"low", "medium", "high"}[rng.IntN(3)]}, stake)
				case 2:
					picks := rng.Perm(40)[:1+rng.IntN(10)]
					for i := range picks {
						picks[i]++
					}
					res = bet("/api/games/keno", map[string]any{"selectedNumbers": picks, "riskLevel": "classic"}, stake)
				case 3:
					st.mines.Add(1)
					id := bet("/api/games/mines/start", map[string]any{"mineCount": 3}, stake).Str("gameId")
					res = ok(t, c.Do("POST", "/api/games/mines/click", tile(id, rng.IntN(mines.Tiles))))
					if res.Body["gameOver"] != true {
						res = ok(t, c.Do("POST", "/api/games/mines/cashout", map[string]any{"gameId": id}))
					}
				}
				st.paid.Add(int64(amount(t, res.Body["winAmount"])))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if t.Failed() {
		return
	}
	s := cl.totals(t)
	if s.Users != workers || s.Active != 0 || s.Bets != st.bets.Load() {
		t.Fatalf("%d users, %d bets (%d active); the API accepted %d bets", s.Users, s.Bets, s.Active, st.bets.Load())
	}
	if s.Staked != money.Amount(st.staked.Load()) || s.Paid != money.Amount(st.paid.Load()) {
		t.Fatalf("database: staked %s, paid %s; the API: staked %s, paid %s", s.Staked, s.Paid, money.Amount(st.staked.Load()), money.Amount(st.paid.Load()))
	}
	if want := startingBalance*workers - s.Staked + s.Paid; s.Balances != want {
		t.Fatalf("sum of balances %s, want %s (staked %s, paid %s)", s.Balances, want, s.Staked, s.Paid)
	}
	cl.settledOnce(t)
	r := cl.ledger(t)
	if r.Totals.Balances != s.Balances {
		t.Fatalf("ledger total %s, balances %s", r.Totals.Balances, s.Balances)
	}
	t.Logf("%d bets (%d mines games) by %d players in %s; staked %s, paid %s; requests per replica %v; ledger %+v",
		s.Bets, st.mines.Load(), workers, elapsed.Round(time.Millisecond), s.Staked, s.Paid, servedCounts(cl), r.Totals)
}
