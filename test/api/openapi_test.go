package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/fairplay/fairplay/internal/gen/openapi"
	"github.com/fairplay/fairplay/internal/routes"
	"github.com/fairplay/fairplay/test/apitest"
)

// openAPIDoc is the part of the OpenAPI document the tests read.
type openAPIDoc struct {
	OpenAPI string                                 `json:"openapi"`
	Paths   map[string]map[string]openAPIOperation `json:"paths"`
}

type openAPIOperation struct {
	OperationID string `json:"operationId"`
	Access      string `json:"x-fairplay-access"`
	Parameters  []struct {
		Name    string `json:"name"`
		In      string `json:"in"`
		Example any    `json:"example"`
	} `json:"parameters"`
	RequestBody *struct {
		Content map[string]struct {
			Example map[string]any `json:"example"`
		} `json:"content"`
	} `json:"requestBody"`
	Responses map[string]json.RawMessage `json:"responses"`
}

// fetchOpenAPI reads GET /api/openapi.json.
func fetchOpenAPI(t *testing.T, env *apitest.Env) openAPIDoc {
	t.Helper()
	res := env.Client().Do("GET", "/api/openapi.json", nil)
	if res.Status != 200 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /api/openapi.json: %d %s", res.Status, res.Header.Get("Content-Type"))
	}
	if !bytes.Equal(res.Raw, openapi.JSON) {
		t.Fatal("GET /api/openapi.json is not the generated document")
	}
	var doc openAPIDoc
	if err := json.Unmarshal(res.Raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	return doc
}

// TestOpenAPIDocumentsEveryProcedure: every procedure the server serves
// over Connect has its /api operation in the document, and that route
// answers (it is no 404 of an unknown path).
func TestOpenAPIDocumentsEveryProcedure(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	doc := fetchOpenAPI(t, env)
	ops := map[string]string{}
	for path, item := range doc.Paths {
		for method, op := range item {
			ops[op.OperationID] = strings.ToUpper(method) + " " + path
		}
	}
	c := env.Client()
	for _, svc := range routes.Services() {
		for i := 0; i < svc.Methods().Len(); i++ {
			md := svc.Methods().Get(i)
			id := string(svc.Name()) + "." + string(md.Name())
			route, ok := ops[id]
			if !ok {
				t.Errorf("%s is not in the document", md.FullName())
				continue
			}
			if md.IsStreamingServer() {
				continue // TestOpenAPIExamplesAreAccepted opens it
			}
			method, path, _ := strings.Cut(route, " ")
			path = strings.NewReplacer("{betId}", "x", "{userId}", "x").Replace(path)
			res := c.Do(method, path, nil)
			if res.Status == http.StatusNotFound && res.Message() == "Not found" || res.Status == http.StatusMethodNotAllowed {
				t.Errorf("%s (%s) is not served: %d %s", route, id, res.Status, res.Raw)
			}
		}
	}
	for _, extra := range []string{"GetCSRFToken", "GetOpenAPI"} {
		if _, ok := ops[extra]; !ok {
			t.Errorf("%s is not in the document", extra)
		}
	}
}

// placeholders are the example values that name an object no fresh server
// has (a bet, a game, a session, a user, a refresh token): a request naming
// one is accepted when its handler answers, be it 404 or 401.
// The two-factor code is one too: no fresh account has two-factor sign-in
// set up, so its routes answer 409.
var placeholders = []string{"00000000-0000-4000-8000-000000000000", "the-refresh-token", `"123456"`}

// exampleSetup puts the player in the state an example needs.
var exampleSetup = map[string]func(t *testing.T, admin, player *apitest.Client){
	// A top-up is for a player whose balance is below the minimum bet.
	"WalletService.ClaimTopUp": func(t *testing.T, admin, player *apitest.Client) {
		id := player.Do("GET", "/api/auth/user", nil).Str("user._id")
		if res := admin.Do("PATCH", "/api/auth/users/"+id+"/balance", map[string]any{"amount": -1000}); res.Status != 200 {
			t.Fatalf("empty the balance: %d %s", res.Status, res.Raw)
		}
	},
}

// TestOpenAPIExamplesAreAccepted walks the document and sends every
// operation's example request (body, path and query) as a signed-in player
// (administrator for admin operations): each answers 200, or — when it
// names an object that does not exist — is refused by its handler (401,
// 404, 409), never as malformed (400, 415) or unknown.
func TestOpenAPIExamplesAreAccepted(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	doc := fetchOpenAPI(t, env)
	if _, created, err := env.App.Accounts.CreateAdmin(context.Background(), "boss", "boss@example.com", "secret123", false); err != nil || !created {
		t.Fatalf("create admin: %v", err)
	}
	admin := env.Client()
	admin.Login("boss", "secret123")
	env.Client().Register("player1") // the login example's account

	var paths []string
	for p := range doc.Paths {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	players := 0
	for _, path := range paths {
		for method, op := range doc.Paths[path] {
			method = strings.ToUpper(method)
			t.Run(method+" "+path, func(t *testing.T) {
				c := admin
				if op.Access != "ADMIN" {
					players++
					c = env.Client()
					c.Register(fmt.Sprintf("example%d", players))
				}
				if setup := exampleSetup[op.OperationID]; setup != nil {
					setup(t, admin, c)
				}
				target, q := path, url.Values{}
				for _, p := range op.Parameters {
					if p.Example == nil {
						continue
					}
					v := fmt.Sprint(p.Example)
					switch p.In {
					case "path":
						target = strings.ReplaceAll(target, "{"+p.Name+"}", url.PathEscape(v))
					case "query":
						q.Set(p.Name, v)
					}
				}
				if len(q) > 0 {
					target += "?" + q.Encode()
				}
				var body any
				if op.RequestBody != nil {
					example := op.RequestBody.Content["application/json"].Example
					if example == nil {
						t.Fatal("a request body without an example")
					}
					body = example
				}
				raw, _ := json.Marshal(body)
				if strings.Contains(target, "{") {
					t.Fatalf("%s: a path parameter has no example", target)
				}
				if op.OperationID == "LiveService.WatchBets" { // the one stream
					openSSE(t, env, target)
					return
				}
				res := c.Do(method, target, body)
				named := false
				for _, p := range placeholders {
					named = named || strings.Contains(target, p) || strings.Contains(string(raw), p)
				}
				switch {
				case res.Status == 200:
				case named && (res.Status == 401 || res.Status == 404 || res.Status == 409) && res.Message() != "Not found":
				default:
					t.Fatalf("%s %s %s: %d %s", method, target, raw, res.Status, res.Raw)
				}
			})
		}
	}
}

// openSSE opens an event stream and checks that it opened.
func openSSE(t *testing.T, env *apitest.Env, target string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", env.URL+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET %s: %d %s", target, res.StatusCode, res.Header.Get("Content-Type"))
	}
}
