package security_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/fairplay/fairplay/test/apitest"
)

// TestBodyRoutesTakeNothingFromTheQuery: a route whose rule takes the
// request from the body (body "*": every bet, game action and change) reads
// nothing from the query string. The /api server filled any field missing
// from the body from the query, so a POST with an empty body, no
// Content-Type and the bet in its URL placed the bet; that is a request a
// cross-site page can send without a CORS preflight (fetch with mode
// no-cors). The anti-forgery header and the bearer token still stopped it,
// but the rule that only JSON bodies reach a handler did not hold. Found by
// a review playing a hostile outsider.
func TestBodyRoutesTakeNothingFromTheQuery(t *testing.T) {
	t.Parallel()
	w := newHostileWorld(t)
	// The body as a cross-site fetch without a preflight sends it: none,
	// and no Content-Type.
	noBody := func(r *http.Request) { r.Header.Del("Content-Type") }
	query := func(fields map[string]any) string {
		q := url.Values{}
		for k, v := range fields {
			q.Set(k, fmt.Sprint(v))
		}
		return q.Encode()
	}
	bet := map[string]any{"betAmount": 1, "rollTarget": 50}
	adjust := map[string]any{"amount": 5, "note": "goodwill"}
	seed := map[string]any{"clientSeed": "chosen by the page"}
	for _, c := range []struct {
		name, method, path string
		client             *apitest.Client
		fields             map[string]any
	}{
		{"a dice bet", "POST", "/api/games/dice", w.player, bet},
		{"an admin's balance adjustment", "PATCH", "/api/auth/users/" + w.playerID + "/balance", w.admin, adjust},
		{"a client seed", "POST", "/api/fair/client-seed", w.player, seed},
	} {
		before := dbSnapshot(t, w.env)
		res := c.client.DoWith(c.method, c.path+"?"+query(c.fields), nil, noBody)
		if res.Status != http.StatusBadRequest || res.Message() == "" {
			t.Errorf("%s with its fields in the query and no body: %d %s, want 400 with a message", c.name, res.Status, res.Raw)
		}
		sameDB(t, w.env, before, c.name+" sent in the query")
		// The same fields in a JSON body are a valid request: what the
		// query was refused for is only where the fields were.
		if res := c.client.Do(c.method, c.path, c.fields); res.Status != http.StatusOK {
			t.Fatalf("%s in a JSON body: %d %s", c.name, res.Status, res.Raw)
		}
	}
	// A route without a body still reads its query.
	if res := w.player.Do("GET", "/api/games/bets?limit=1", nil); res.Status != http.StatusOK ||
		len(res.Get("bets").([]any)) != 1 {
		t.Errorf("GET /api/games/bets?limit=1: %d %s, want one bet", res.Status, res.Raw)
	}
}

// TestErrorAnswersAreNotStored: every answer of /api is Cache-Control:
// no-store, its errors too. Only the calls' replies were: a 404 (which a
// shared cache may keep by heuristic freshness) carried the anti-forgery
// cookie it set, to be handed to every visitor, and a signed-in player's
// refusals were cacheable. Found by a review playing a hostile outsider.
func TestErrorAnswersAreNotStored(t *testing.T) {
	t.Parallel()
	w := newHostileWorld(t)
	check := func(what string, status int, res *http.Response, raw []byte) {
		t.Helper()
		if res.StatusCode != status {
			t.Fatalf("%s: status %d, want %d (%s)", what, res.StatusCode, status, raw)
		}
		if got := res.Header.Values("Cache-Control"); !slices.Equal(got, []string{"no-store"}) {
			t.Errorf("%s: Cache-Control %q, want no-store", what, got)
		}
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q, want JSON", what, ct)
		}
	}
	for _, p := range []probe{
		{name: "401", method: "GET", path: "/api/auth/user", status: 401},
		{name: "403 (no anti-forgery token)", method: "POST", path: "/api/auth/login", body: `{}`, status: 403},
		{name: "404", method: "GET", path: "/api/no-such-route", status: 404},
	} {
		res, body := p.do(t, w.env.URL)
		check(p.name, p.status, res, []byte(body))
		if p.status == 404 && len(res.Cookies()) == 0 {
			t.Errorf("404: sets no anti-forgery cookie; the probe no longer covers the case it was found with")
		}
	}
	signedIn := []struct {
		what, method, path string
		body               any
		edit               func(*http.Request)
		status             int
	}{
		{"400 (bad JSON)", "POST", "/api/games/dice", `{"betAmount":`, nil, 400},
		{"400 (bad bet)", "POST", "/api/games/dice", map[string]any{"betAmount": -1, "rollTarget": 50}, nil, 400},
		{"415 (not JSON)", "POST", "/api/games/dice", `betAmount=1`,
			func(r *http.Request) { r.Header.Set("Content-Type", "application/x-www-form-urlencoded") }, 415},
		{"404 (another's bet)", "GET", "/api/games/bets/00000000-0000-7000-8000-000000000000", nil, nil, 404},
	}
	for _, c := range signedIn {
		res := w.player.DoWith(c.method, c.path, c.body, c.edit)
		check(c.what, c.status, &http.Response{StatusCode: res.Status, Header: res.Header}, res.Raw)
	}
}
