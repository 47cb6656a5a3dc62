package chaos_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/money"
)

// Every bet stakes the minimum, 10 cents, so a long run cannot lose a
// player's 1000 starting dollars.
const betDollars = 0.1

var betStake = money.FromCents(10)

const (
	// deadline bounds every request of the load.
	deadline = 5 * time.Second
	// hangMargin is how far past its deadline a request may end (scheduling,
	// reading the body) before it counts as hung.
	hangMargin = time.Second
)

// phases names what the drills are doing; every request is counted under
// the phase it ended in (a request in flight when the server is killed
// counts as the kill's).
type phases struct {
	mu    sync.Mutex
	names []string
	since []time.Time
	cur   atomic.Int64
}

func (p *phases) enter(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.names = append(p.names, name)
	p.since = append(p.since, time.Now())
	p.cur.Store(int64(len(p.names) - 1))
	return len(p.names) - 1
}

func (p *phases) current() int { return int(p.cur.Load()) }

func (p *phases) name(i int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.names[i]
}

// phaseStats counts one phase's requests.
type phaseStats struct {
	Requests, OK, Bets int
	Statuses           map[int]int // non-200 answers
	Transport          int         // no answer: refused, reset, EOF
	TimedOut           int         // no answer within the deadline
	Latencies          []time.Duration
}

// percentile is the q-th latency (0 < q <= 1).
func (ps *phaseStats) percentile(q float64) time.Duration {
	if len(ps.Latencies) == 0 {
		return 0
	}
	l := slices.Clone(ps.Latencies)
	slices.Sort(l)
	return l[min(len(l)-1, int(float64(len(l))*q))]
}

// stats is what the load saw, and what it saw that it must not.
type stats struct {
	phases *phases
	mu     sync.Mutex
	by     map[int]*phaseStats
	// problems are requests that broke a rule: hung past the deadline, a
	// status other than 503 during an outage, an error without a JSON message.
	problems []string
	errText  map[string]int // a sample of the errors seen, by phase and text
	// clientErrorsOK lets 4xx answers pass (counted, not problems): after a
	// failover with asynchronous replication a game the player saw start may
	// be gone, and its next action is rightly refused.
	clientErrorsOK bool
	// bets are the bet requests' spans and outcomes, for the outage figures.
	bets []betSpan
	// acked is signalled (without blocking) whenever a bet is acknowledged.
	acked chan struct{}
}

// betSpan is one bet-placing or game-action request: when it was sent and
// answered, and whether it succeeded.
type betSpan struct {
	start, end time.Time
	ok         bool
	status     int // 0: no answer
}

func newStats(p *phases) *stats {
	return &stats{phases: p, by: map[int]*phaseStats{}, errText: map[string]int{}, acked: make(chan struct{}, 1)}
}

func (s *stats) phase(i int) phaseStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ps := s.by[i]; ps != nil {
		return *ps
	}
	return phaseStats{}
}

func (s *stats) problem(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
}

// record counts one finished request and checks it against the rules.
func (s *stats) record(phase int, method, path string, r result, elapsed time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := s.by[phase]
	if ps == nil {
		ps = &phaseStats{Statuses: map[int]int{}}
		s.by[phase] = ps
	}
	ps.Requests++
	ps.Latencies = append(ps.Latencies, elapsed)
	name := s.phases.name(phase)
	where := fmt.Sprintf("[%s] %s %s", name, method, path)
	if method == http.MethodPost && strings.HasPrefix(path, "/api/games/") {
		end := time.Now()
		s.bets = append(s.bets, betSpan{start: end.Add(-elapsed), end: end, ok: r.ok(), status: r.status})
		if r.ok() {
			select {
			case s.acked <- struct{}{}:
			default:
			}
		}
	}
	if elapsed > deadline+hangMargin {
		s.problems = append(s.problems, fmt.Sprintf("%s hung for %s (deadline %s): %v", where, elapsed.Round(time.Millisecond), deadline, r.err))
	}
	switch {
	case r.err != nil && errors.Is(r.err, context.DeadlineExceeded):
		ps.TimedOut++
		s.problems = append(s.problems, fmt.Sprintf("%s: no answer within the %s deadline", where, deadline))
	case r.err != nil:
		ps.Transport++
		s.errText[fmt.Sprintf("[%s] transport: %s", name, errorKind(r.err))]++
	case r.status == http.StatusOK:
		ps.OK++
		if method == http.MethodPost && strings.HasPrefix(path, "/api/games/") {
			ps.Bets++
		}
	default:
		ps.Statuses[r.status]++
		msg, isJSON := r.message()
		s.errText[fmt.Sprintf("[%s] %d %q", name, r.status, msg)]++
		if !isJSON {
			s.problems = append(s.problems, fmt.Sprintf("%s: %d without a JSON message: %q", where, r.status, r.raw))
		}
		if r.status != http.StatusServiceUnavailable && (!s.clientErrorsOK || r.status >= 500) {
			s.problems = append(s.problems, fmt.Sprintf("%s: %d %s (an outage must be a 503 or no answer: never a client error, nor a 500 that hides it)", where, r.status, r.raw))
		}
	}
}

// errorKind shortens a transport error to its cause, for the summary.
func errorKind(err error) string {
	msg := err.Error()
	for _, k := range []string{"connection refused", "connection reset by peer", "EOF", "broken pipe"} {
		if strings.Contains(msg, k) {
			return k
		}
	}
	return msg
}

// summary is one line per phase and the errors seen.
func (s *stats) summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	s.phases.mu.Lock()
	names, since := slices.Clone(s.phases.names), slices.Clone(s.phases.since)
	s.phases.mu.Unlock()
	for i, name := range names {
		ps := s.by[i]
		if ps == nil {
			ps = &phaseStats{}
		}
		end := time.Now()
		if i+1 < len(since) {
			end = since[i+1]
		}
		var st []string
		for code, n := range ps.Statuses {
			st = append(st, fmt.Sprintf("%d×%d", n, code))
		}
		sort.Strings(st)
		fmt.Fprintf(&b, "  %-24s %6s  requests %5d  ok %5d (bets %5d)  errors: status [%s] transport %d timeout %d  latency p50 %s p99 %s max %s\n",
			name, end.Sub(since[i]).Round(100*time.Millisecond), ps.Requests, ps.OK, ps.Bets, strings.Join(st, " "),
			ps.Transport, ps.TimedOut, ps.percentile(0.5).Round(time.Millisecond), ps.percentile(0.99).Round(time.Millisecond),
			ps.percentile(1).Round(time.Millisecond))
	}
	var errs []string
	for k, n := range s.errText {
		errs = append(errs, fmt.Sprintf("    %5d  %s", n, k))
	}
	sort.Strings(errs)
	if len(errs) > 0 {
		b.WriteString("  errors seen:\n" + strings.Join(errs, "\n") + "\n")
	}
	return b.String()
}

// result is one request's outcome: an answer (status, body) or err.
type result struct {
	status int
	err    error
	body   map[string]any
	raw    []byte
}

func (r result) ok() bool { return r.err == nil && r.status == http.StatusOK }

// definite reports whether the server answered that the request was not
// carried out (a 4xx); after no answer or a 5xx it may or may not have been.
func (r result) definite() bool { return r.ok() || r.err == nil && r.status < 500 }

// message is an error body's message, and whether the body was JSON with one.
func (r result) message() (string, bool) {
	m, ok := r.body["message"].(string)
	return m, ok
}

func (r result) str(key string) string {
	s, _ := r.body[key].(string)
	return s
}

func (r result) amount(key string) (money.Amount, error) {
	v, ok := r.body[key]
	if !ok {
		return 0, fmt.Errorf("no %s in %s", key, r.raw)
	}
	return money.Parse(fmt.Sprint(v))
}

func (r result) int(key string) int {
	n, _ := json.Number(fmt.Sprint(r.body[key])).Int64()
	return int(n)
}

// client is one browser: the anti-forgery cookie, the bearer token, and a
// deadline on every request, which is counted in stats.
type client struct {
	base    string
	http    *http.Client
	token   string
	refresh string
	fresh   time.Time // when token was issued
	stats   *stats
	phases  *phases
}

func newClient(base string, st *stats, ph *phases) *client {
	jar, _ := cookiejar.New(nil)
	return &client{base: base, http: &http.Client{Jar: jar, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}, stats: st, phases: ph}
}

func (c *client) csrf() string {
	u, _ := url.Parse(c.base)
	for _, ck := range c.http.Jar.Cookies(u) {
		if ck.Name == "fairplay_csrf" {
			return ck.Value
		}
	}
	return ""
}

// do sends one request with the deadline and records its outcome.
func (c *client) do(method, path string, body any) result {
	start := time.Now()
	r := c.send(method, path, body)
	c.stats.record(c.phases.current(), method, path, r, time.Since(start))
	return r
}

func (c *client) send(method, path string, body any) result {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return result{err: err}
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return result{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	if csrf := c.csrf(); csrf != "" && method != http.MethodGet {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return result{err: err}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return result{err: err}
	}
	out := result{status: res.StatusCode, raw: raw}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	_ = dec.Decode(&out.body)
	return out
}

// seenBet is a settled bet as its player saw it.
type seenBet struct {
	game   string
	stake  money.Amount
	payout money.Amount
}

// player is one worker of the load: it plays every game in turn and keeps
// what it saw, to be checked against the database at the end.
type player struct {
	name   string
	userID string
	c      *client
	rng    *rand.Rand
	// running: a stateful game may be running (its last request failed), so
	// the next stateful game first finishes whatever /api/games/active shows.
	running bool
	seen    map[string]seenBet // settled bets, by id
	started map[string]string  // stateful games seen started: id → game
	placed  map[string]bool    // bets whose placing request was answered
	// unknown are the bet-placing requests without a definite answer: each
	// may have placed a bet the player never saw.
	unknown []string
	// broken are answers that make no sense (a 200 without its fields).
	broken []string
	// resettled are games seen settled twice, the first settlement lost by
	// a failover (only allowed when writes may be lost).
	resettled []string
}

func newPlayer(i int, base string, st *stats, ph *phases) *player {
	return &player{
		name: fmt.Sprintf("chaos%d", i), c: newClient(base, st, ph), rng: rand.New(rand.NewPCG(uint64(i), 727)),
		seen: map[string]seenBet{}, started: map[string]string{}, placed: map[string]bool{},
	}
}

// register signs the player up (before the drills, so it must work).
func (p *player) register() error {
	if r := p.c.do(http.MethodGet, "/api/csrf", nil); !r.ok() {
		return fmt.Errorf("GET /api/csrf: %d %v %s", r.status, r.err, r.raw)
	}
	r := p.c.do(http.MethodPost, "/api/auth/register", map[string]any{
		"username": p.name, "email": p.name + "@example.com", "password": "secret123", "turnstileToken": accounts.DevelopmentBotToken,
	})
	if !r.ok() {
		return fmt.Errorf("register %s: %d %v %s", p.name, r.status, r.err, r.raw)
	}
	p.c.token, p.c.refresh, p.c.fresh = r.str("token"), r.str("refreshToken"), time.Now()
	if u, ok := r.body["user"].(map[string]any); ok {
		p.userID, _ = u["_id"].(string)
	}
	if p.c.token == "" || p.c.refresh == "" || p.userID == "" {
		return fmt.Errorf("register %s: no token or user id in %s", p.name, r.raw)
	}
	return nil
}

// run plays until stop is closed. After a failed request it waits a little,
// as a browser's retry would, so an outage is not a busy loop.
func (p *player) run(stop <-chan struct{}, offset int) {
	ops := []func() bool{p.dice, p.plinko, p.keno, p.mines, p.pump, p.blackjack, p.balance}
	for i := offset; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		op := ops[i%len(ops)]
		if time.Since(p.c.fresh) > 10*time.Minute {
			op = p.refresh // as the web app does, for long runs
		}
		pause := 5 * time.Millisecond
		if !op() {
			pause = 100*time.Millisecond + time.Duration(p.rng.IntN(100))*time.Millisecond
		}
		select {
		case <-stop:
			return
		case <-time.After(pause):
		}
	}
}

// refresh renews the access token with the refresh token.
func (p *player) refresh() bool {
	r := p.c.do(http.MethodPost, "/api/auth/refresh", map[string]any{"refreshToken": p.c.refresh})
	if r.ok() {
		// Refresh tokens rotate: keep the new one.
		if tok, next := r.str("token"), r.str("refreshToken"); tok != "" && next != "" {
			p.c.token, p.c.refresh, p.c.fresh = tok, next, time.Now()
		} else {
			p.brokenf("refresh without a token and a refresh token: %s", r.raw)
		}
	}
	return r.ok()
}

func (p *player) brokenf(format string, args ...any) {
	p.broken = append(p.broken, fmt.Sprintf(p.name+": "+format, args...))
}

// place sends a request that places a bet; one without a definite answer
// may have placed it.
func (p *player) place(path string, body any) result {
	r := p.c.do(http.MethodPost, path, body)
	if !r.definite() {
		what := fmt.Sprint(r.err)
		if r.err == nil {
			what = fmt.Sprintf("%d %s", r.status, bytes.TrimSpace(r.raw))
		}
		p.unknown = append(p.unknown, fmt.Sprintf("%s [%s] POST %s: %s",
			time.Now().Format("15:04:05.000"), p.c.phases.name(p.c.phases.current()), path, what))
	}
	return r
}

// settled records the settled bet id as the response r shows it.
func (p *player) settled(id, game string, stake money.Amount, r result) {
	win, err := r.amount("winAmount")
	if err != nil || id == "" {
		p.brokenf("%s settled without an id or win amount (%v): %s", game, err, r.raw)
		return
	}
	if prev, dup := p.seen[id]; dup {
		if p.c.stats.clientErrorsOK {
			// The failover lost the first settlement: the game was running
			// again on the new primary, and settled once more.
			p.resettled = append(p.resettled, fmt.Sprintf("%s bet %s settled twice (the first lost): %+v, then %s", game, id, prev, r.raw))
		} else {
			p.brokenf("%s bet %s settled twice: %+v, then %s", game, id, prev, r.raw)
		}
	}
	p.seen[id] = seenBet{game: game, stake: stake, payout: win}
}

func (p *player) instant(game string, body map[string]any) bool {
	r := p.place("/api/games/"+game, body)
	if r.ok() {
		p.placed[r.str("betId")] = true
		p.settled(r.str("betId"), game, betStake, r)
	}
	return r.ok()
}

func (p *player) dice() bool {
	return p.instant("dice", map[string]any{"betAmount": betDollars, "rollTarget": 10 + p.rng.IntN(80)})
}

func (p *player) plinko() bool {
	risks := []string{"low", "medium", "high"}
	return p.instant("plinko", map[string]any{"betAmount": betDollars, "rows": 8 + p.rng.IntN(9), "risk": risks[p.rng.IntN(3)]})
}

func (p *player) keno() bool {
	risks := []string{"classic", "low", "medium", "high"}
	picks := p.rng.Perm(40)[:1+p.rng.IntN(10)]
	for i := range picks {
		picks[i]++
	}
	return p.instant("keno", map[string]any{"betAmount": betDollars, "selectedNumbers": picks, "riskLevel": risks[p.rng.IntN(4)]})
}

func (p *player) balance() bool {
	r := p.c.do(http.MethodGet, "/api/auth/user", nil)
	if r.ok() {
		if u, _ := r.body["user"].(map[string]any); u == nil || u["balance"] == nil {
			p.brokenf("GET /api/auth/user without a balance: %s", r.raw)
		}
	}
	return r.ok()
}

// start begins a stateful game; ok is false when it did not (visibly) start.
func (p *player) start(game string, body any) (r result, id string, ok bool) {
	if p.running && !p.finish() {
		return r, "", false
	}
	p.running = true
	r = p.place("/api/games/"+game+"/start", body)
	if !r.ok() {
		return r, "", false
	}
	id = r.str("gameId")
	if id == "" {
		p.brokenf("%s start without a game id: %s", game, r.raw)
		return r, "", false
	}
	p.started[id] = game
	p.placed[id] = true
	return r, id, true
}

// mines reveals one to three random tiles, then cashes out.
func (p *player) mines() bool {
	_, id, ok := p.start("mines", map[string]any{"betAmount": betDollars, "mineCount": 1 + p.rng.IntN(3)})
	if !ok {
		return false
	}
	tiles := p.rng.Perm(25)[:1+p.rng.IntN(3)]
	for _, n := range tiles {
		r := p.c.do(http.MethodPost, "/api/games/mines/click", map[string]any{"gameId": id, "row": n / 5, "col": n % 5})
		if !r.ok() {
			return false
		}
		if r.body["gameOver"] == true {
			p.settled(id, "mines", betStake, r)
			p.running = false
			return true
		}
	}
	return p.cashOut("mines", id, betStake)
}

func (p *player) cashOut(game, id string, stake money.Amount) bool {
	r := p.c.do(http.MethodPost, "/api/games/"+game+"/cashout", map[string]any{"gameId": id})
	if !r.ok() {
		return false
	}
	p.settled(id, game, stake, r)
	p.running = false
	return true
}

// pump pumps one to three times, then cashes out if the balloon held.
func (p *player) pump() bool {
	difficulties := []string{"easy", "medium", "hard", "expert"}
	_, id, ok := p.start("pump", map[string]any{"betAmount": betDollars, "difficulty": difficulties[p.rng.IntN(4)]})
	if !ok {
		return false
	}
	for range 1 + p.rng.IntN(3) {
		r := p.c.do(http.MethodPost, "/api/games/pump/pump", map[string]any{"gameId": id})
		if !r.ok() {
			return false
		}
		if r.body["gameOver"] == true {
			p.settled(id, "pump", betStake, r)
			p.running = false
			return true
		}
	}
	return p.cashOut("pump", id, betStake)
}

// blackjack doubles one hand in five when it may, else hits below 15 and
// stands.
func (p *player) blackjack() bool {
	r, id, ok := p.start("blackjack", map[string]any{"betAmount": betDollars})
	if !ok {
		return false
	}
	stake := betStake
	if hands, _ := r.body["hands"].(map[string]any); hands["insurance"] == "offered" {
		// The dealer shows an ace: decline insurance, then the dealer peeks.
		if r = p.c.do(http.MethodPost, "/api/games/blackjack/insurance", map[string]any{"gameId": id, "accept": false}); !r.ok() {
			return false
		}
	}
	for step := 0; r.body["gameOver"] != true; step++ {
		action := "stand"
		switch {
		case step == 0 && r.body["canDouble"] == true && p.rng.IntN(5) == 0:
			action, stake = "double", 2*betStake
		case r.int("playerValue") < 15 && step < 10:
			action = "hit"
		}
		if r = p.c.do(http.MethodPost, "/api/games/blackjack/"+action, map[string]any{"gameId": id}); !r.ok() {
			return false
		}
		if action != "hit" && r.body["gameOver"] != true {
			p.brokenf("blackjack %s did not end the hand: %s", action, r.raw)
			return false
		}
	}
	p.settled(id, "blackjack", stake, r)
	p.running = false
	return true
}

// finish ends every game /api/games/active shows: a Mines game by revealing
// a hidden tile and cashing out, a Pump game by one pump and a cash-out, a
// hand by standing. It reports whether none is left running.
func (p *player) finish() bool {
	r := p.c.do(http.MethodGet, "/api/games/active", nil)
	if !r.ok() {
		return false
	}
	done := true
	for _, game := range []string{"mines", "pump", "blackjack"} {
		g, _ := r.body[game].(map[string]any)
		if g == nil {
			continue
		}
		id, _ := g["gameId"].(string)
		stake, err := money.Parse(fmt.Sprint(g["betAmount"]))
		if id == "" || err != nil {
			p.brokenf("active %s without a game id or stake: %s", game, r.raw)
			return false
		}
		if !p.finishGame(game, id, stake, g) {
			done = false
		}
	}
	p.running = !done
	return done
}

func (p *player) finishGame(game, id string, stake money.Amount, g map[string]any) bool {
	var r result
	switch game {
	case "mines":
		revealed := map[string]bool{}
		if list, ok := g["revealed"].([]any); ok {
			for _, t := range list {
				revealed[fmt.Sprint(t)] = true
			}
		}
		for _, n := range p.rng.Perm(25) {
			if !revealed[fmt.Sprintf("%d,%d", n/5, n%5)] {
				r = p.c.do(http.MethodPost, "/api/games/mines/click", map[string]any{"gameId": id, "row": n / 5, "col": n % 5})
				break
			}
		}
	case "pump":
		r = p.c.do(http.MethodPost, "/api/games/pump/pump", map[string]any{"gameId": id})
	case "blackjack":
		if hands, _ := g["hands"].(map[string]any); hands["insurance"] == "offered" {
			if r = p.c.do(http.MethodPost, "/api/games/blackjack/insurance", map[string]any{"gameId": id, "accept": false}); !r.ok() {
				return false
			}
			if r.body["gameOver"] == true {
				p.settled(id, game, stake, r)
				return true
			}
		}
		r = p.c.do(http.MethodPost, "/api/games/blackjack/stand", map[string]any{"gameId": id})
	}
	if !r.ok() {
		return false
	}
	if r.body["gameOver"] == true {
		p.settled(id, game, stake, r)
		return true
	}
	if game == "blackjack" {
		p.brokenf("blackjack stand did not end the hand: %s", r.raw)
		return false
	}
	return p.cashOut(game, id, stake)
}
