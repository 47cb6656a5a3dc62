package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/wallet"
	"github.com/fairplay/fairplay/test/apitest"
)

// The body fuzzers start one server per fuzzing process, sign a player in,
// and POST fuzzed bodies to the routes: the first input byte picks the
// route, the rest is the body. In a body, $GAME becomes the player's active
// game id for that route's game, $REFRESH their refresh token and $PASSWORD
// their password, so that valid bodies reach the handlers past the id
// checks.

var gameRoutes = []string{
	"/api/games/dice",
	"/api/games/plinko",
	"/api/games/keno",
	"/api/games/mines/start",
	"/api/games/mines/click",
	"/api/games/mines/cashout",
	"/api/games/pump/start",
	"/api/games/pump/pump",
	"/api/games/pump/cashout",
	"/api/games/blackjack/start",
	"/api/games/blackjack/hit",
	"/api/games/blackjack/stand",
	"/api/games/blackjack/double",
	"/api/games/blackjack/split",
	"/api/games/blackjack/insurance",
}

var authRoutes = []string{
	"/api/auth/register",
	"/api/auth/login",
	"/api/auth/refresh",
	"/api/auth/logout",
	"/api/auth/revoke-session",
	"/api/auth/revoke-other-sessions",
	"/api/auth/change-password",
}

// fuzzStatuses are the statuses a /api route may answer with.
var fuzzStatuses = map[int]bool{200: true, 400: true, 401: true, 403: true, 404: true, 409: true, 429: true}

const fuzzPassword = "secret123"

// bodyFuzzer is the server and player shared by one fuzzing process.
type bodyFuzzer struct {
	env  *apitest.Env
	name string

	mu       sync.Mutex
	player   *apitest.Client
	password string
	players  int
	runs     int
}

func startBodyFuzzer(f *testing.F, name string) *bodyFuzzer {
	env := apitest.Start(f)
	z := &bodyFuzzer{env: env, name: name, password: fuzzPassword}
	z.player = env.Client()
	z.player.Register(z.nextName())
	f.Cleanup(func() {
		if err := z.verify(context.Background()); err != nil {
			f.Error(err)
		}
	})
	return z
}

func (z *bodyFuzzer) nextName() string {
	z.players++
	return fmt.Sprintf("%s%d", z.name, z.players)
}

// client returns the player's client bound to t (apitest clients fail the
// test they were made for, and the fuzz target must not touch *testing.F).
func (z *bodyFuzzer) client(t *testing.T) *apitest.Client {
	e := *z.env
	e.T = t
	return z.player.Via(&e)
}

// post sends body to path and checks the response's shape.
func (z *bodyFuzzer) post(t *testing.T, c *apitest.Client, path, body string) apitest.Response {
	t.Helper()
	res := c.Do("POST", path, body)
	if !fuzzStatuses[res.Status] {
		t.Fatalf("POST %s %q: status %d %s", path, body, res.Status, res.Raw)
	}
	if res.Status != 200 {
		var e map[string]json.RawMessage
		if err := json.Unmarshal(res.Raw, &e); err != nil || len(e) != 1 {
			t.Fatalf("POST %s %q: error body %s is not {\"message\": ...}", path, body, res.Raw)
		}
		var msg string
		if err := json.Unmarshal(e["message"], &msg); err != nil || msg == "" {
			t.Fatalf("POST %s %q: error body %s has no message", path, body, res.Raw)
		}
	} else if !json.Valid(res.Raw) {
		t.Fatalf("POST %s %q: invalid JSON %s", path, body, res.Raw)
	}
	return res
}

// fill replaces the placeholders in body.
func (z *bodyFuzzer) fill(c *apitest.Client, path, body string) string {
	if strings.Contains(body, "$GAME") {
		id := ""
		active := c.Do("GET", "/api/games/active", nil)
		for _, game := range []string{"mines", "pump", "blackjack"} {
			if strings.Contains(path, "/"+game+"/") {
				id = active.Str(game + ".gameId")
			}
		}
		body = strings.ReplaceAll(body, "$GAME", id)
	}
	body = strings.ReplaceAll(body, "$REFRESH", c.RefreshToken)
	body = strings.ReplaceAll(body, "$PASSWORD", z.password)
	return body
}

// check asserts that no balance is negative, the player's included, and
// every 50th run that the ledger is exact.
func (z *bodyFuzzer) check(t *testing.T, c *apitest.Client) {
	t.Helper()
	ctx := context.Background()
	var negative int64
	if err := z.env.App.Postgres.QueryRow(ctx, `SELECT count(*) FROM users WHERE balance < 0`).Scan(&negative); err != nil {
		t.Fatal(err)
	}
	if negative != 0 {
		t.Fatalf("%d users have a negative balance", negative)
	}
	if res := c.Do("GET", "/api/auth/user", nil); res.Status == 200 {
		bal, err := money.Parse(fmt.Sprint(res.Get("user.balance")))
		if err != nil || bal < 0 {
			t.Fatalf("player balance %v: %v", res.Get("user.balance"), err)
		}
	}
	z.runs++
	if z.runs%50 == 0 {
		if err := z.verify(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func (z *bodyFuzzer) verify(ctx context.Context) error {
	r, err := wallet.Verify(ctx, postgres.NewLedgerStore(z.env.App.Postgres))
	if err != nil {
		return err
	}
	if !r.Clean() {
		return fmt.Errorf("ledger not clean: %+v", r)
	}
	return nil
}

// route splits a fuzz input into its route and body.
func route(routes []string, in []byte) (string, string) {
	if len(in) == 0 {
		return routes[0], ""
	}
	return routes[int(in[0])%len(routes)], string(in[1:])
}

// addSeeds adds the seed bodies in the routes' order, so that a game's
// start comes before its moves.
func addSeeds(f *testing.F, routes []string, seeds map[string][]string) {
	n := 0
	for i, path := range routes {
		for _, body := range seeds[path] {
			f.Add(append([]byte{byte(i)}, body...))
			n++
		}
	}
	total := 0
	for _, bodies := range seeds {
		total += len(bodies)
	}
	if n != total {
		f.Fatalf("seeds for unknown routes: %d of %d used", n, total)
	}
}

func FuzzGameBodies(f *testing.F) {
	z := startBodyFuzzer(f, "gamer")
	addSeeds(f, gameRoutes, map[string][]string{
		"/api/games/dice": {`{"betAmount":2.5,"rollTarget":49.5}`, `{"betAmount":"1","rollTarget":"50"}`,
			`{"betAmount":0.01,"rollTarget":98}`, `{"betAmount":-1,"rollTarget":50}`, `{"betAmount":1e308,"rollTarget":50}`,
			`{"betAmount":0.001,"rollTarget":50}`, `{"betAmount":1,"rollTarget":100}`, `{"betAmount":true}`, `{`},
		"/api/games/plinko": {`{"betAmount":1,"rows":16,"risk":"high"}`, `{"betAmount":1,"rows":7,"risk":"low"}`,
			`{"betAmount":1,"rows":"12","risk":"medium"}`, `{"betAmount":1,"rows":99999999999}`},
		"/api/games/keno": {`{"betAmount":1,"selectedNumbers":[1,2,3,4,5],"riskLevel":"classic"}`,
			`{"betAmount":1,"selectedNumbers":[1,1],"riskLevel":"high"}`, `{"betAmount":1,"selectedNumbers":[]}`,
			`{"betAmount":1,"selectedNumbers":[0,41]}`, `{"betAmount":1,"selectedNumbers":"1"}`},
		"/api/games/mines/start":         {`{"betAmount":1,"mineCount":3}`, `{"betAmount":1,"mineCount":25}`, `{"betAmount":1,"mineCount":0}`},
		"/api/games/mines/click":         {`{"gameId":"$GAME","row":0,"col":0}`, `{"gameId":"$GAME","row":5,"col":0}`, `{"gameId":"nope","row":0,"col":0}`},
		"/api/games/mines/cashout":       {`{"gameId":"$GAME"}`, `{"gameId":""}`},
		"/api/games/pump/start":          {`{"betAmount":1,"difficulty":"easy"}`, `{"betAmount":1,"difficulty":"expert"}`, `{"betAmount":1,"difficulty":"x"}`},
		"/api/games/pump/pump":           {`{"gameId":"$GAME"}`},
		"/api/games/pump/cashout":        {`{"gameId":"$GAME"}`},
		"/api/games/blackjack/start":     {`{"betAmount":1}`, `{"betAmount":"0"}`},
		"/api/games/blackjack/hit":       {`{"gameId":"$GAME"}`},
		"/api/games/blackjack/stand":     {`{"gameId":"$GAME"}`},
		"/api/games/blackjack/double":    {`{"gameId":"$GAME"}`, `{"gameId":"00000000-0000-0000-0000-000000000000"}`},
		"/api/games/blackjack/split":     {`{"gameId":"$GAME"}`, `{"gameId":"nope"}`},
		"/api/games/blackjack/insurance": {`{"gameId":"$GAME","accept":true}`, `{"gameId":"$GAME","accept":false}`, `{"gameId":"$GAME"}`, `{"gameId":"$GAME","accept":"yes"}`},
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		z.mu.Lock()
		defer z.mu.Unlock()
		c := z.client(t)
		path, body := route(gameRoutes, in)
		z.post(t, c, path, z.fill(c, path, body))
		z.check(t, c)
	})
}

func FuzzAuthBodies(f *testing.F) {
	z := startBodyFuzzer(f, "authfuzz")
	tok := apitest.BotToken
	addSeeds(f, authRoutes, map[string][]string{
		"/api/auth/register": {
			`{"username":"newbie","email":"newbie@example.com","password":"secret123","turnstileToken":"` + tok + `"}`,
			`{"username":"authfuzz1","email":"dup@example.com","password":"secret123","turnstileToken":"` + tok + `"}`,
			`{"username":"x","email":"bad","password":"1","turnstileToken":"` + tok + `"}`,
			`{"username":"nobot","email":"nobot@example.com","password":"secret123"}`,
			`{"username":5}`},
		"/api/auth/login": {
			`{"username":"authfuzz1","password":"$PASSWORD","turnstileToken":"` + tok + `"}`,
			`{"username":"authfuzz1@example.com","password":"$PASSWORD","turnstileToken":"` + tok + `"}`,
			`{"username":"authfuzz1","password":"wrong","turnstileToken":"` + tok + `"}`,
			`{"username":"","password":""}`},
		"/api/auth/refresh":               {`{"refreshToken":"$REFRESH"}`, `{"refreshToken":"nope"}`, `{}`},
		"/api/auth/logout":                {`{"refreshToken":"$REFRESH"}`, `{"refreshToken":7}`},
		"/api/auth/revoke-session":        {`{"sessionId":"00000000-0000-0000-0000-000000000000"}`, `{"sessionId":"x"}`},
		"/api/auth/revoke-other-sessions": {`{"currentRefreshToken":"$REFRESH"}`, `{"currentRefreshToken":""}`},
		"/api/auth/change-password": {`{"currentPassword":"$PASSWORD","newPassword":"Secret456!"}`,
			`{"currentPassword":"wrong","newPassword":"Secret456!"}`, `{"currentPassword":"$PASSWORD","newPassword":5}`,
			`{"currentPassword":"$PASSWORD","newPassword":"1"}`},
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		z.mu.Lock()
		defer z.mu.Unlock()
		c := z.client(t)
		path, body := route(authRoutes, in)
		filled := z.fill(c, path, body)
		res := z.post(t, c, path, filled)
		if res.Status == 200 && path == "/api/auth/refresh" && strings.Contains(body, "$REFRESH") {
			// Refresh rotates the tokens: keep the new ones.
			if tok := res.Str("token"); tok != "" {
				z.player.Token = tok
			}
			if tok := res.Str("refreshToken"); tok != "" {
				z.player.RefreshToken = tok
			}
		}
		if res.Status == 200 && path == "/api/auth/change-password" && strings.Contains(body, "$PASSWORD") {
			var req struct {
				NewPassword string `json:"newPassword"`
			}
			if json.Unmarshal([]byte(filled), &req) == nil && req.NewPassword != "" {
				z.password = req.NewPassword
			}
		}
		z.check(t, c)
		// A fuzzed logout, revocation or password change may end the
		// player's session; carry on as a new player.
		if c.Do("GET", "/api/auth/user", nil).Status != 200 {
			e := *z.env
			e.T = t
			z.player = e.Client()
			z.player.Register(z.nextName())
			z.password = fuzzPassword
		}
	})
}
