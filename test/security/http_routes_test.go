package security_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/protobuf/reflect/protoreflect"

	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/test/apitest"
)

// apiRoute is one /api route and the Connect procedure it calls.
type apiRoute struct {
	// procedure is the Connect method's full name, e.g. fairplay.v1.AuthService.Register.
	procedure string
	method    string
	// path may hold wildcards {name}; pathFields maps them to request
	// fields (by JSON name).
	path       string
	pathFields map[string]string
	// base builds a request that is valid apart from what a test spoils.
	base func(w *hostileWorld) map[string]any
}

// hostileWorld is a running server with a player and an administrator
// signed in, and the ids a well-formed request names.
type hostileWorld struct {
	env    *apitest.Env
	player *apitest.Client
	admin  *apitest.Client
	// playerID is the player's user id, sessionID one of their sessions.
	playerID, sessionID string
}

// newHostileWorld starts a server with the player "mallory" and the
// administrator "boss" signed in.
func newHostileWorld(t *testing.T, opts ...apitest.Option) *hostileWorld {
	t.Helper()
	env := apitest.Start(t, opts...)
	if _, created, err := env.App.Accounts.CreateAdmin(context.Background(), "boss", "boss@example.com", "secret123", false); err != nil || !created {
		t.Fatalf("create admin: %v", err)
	}
	w := &hostileWorld{env: env, player: env.Client(), admin: env.Client()}
	w.player.Register("mallory")
	w.admin.Login("boss", "secret123")
	w.playerID = w.player.Do("GET", "/api/auth/user", nil).Str("user._id")
	sessions := w.player.Do("GET", "/api/auth/sessions", nil).Get("sessions").([]any)
	w.sessionID = sessions[0].(map[string]any)["_id"].(string)
	if w.playerID == "" || w.sessionID == "" {
		t.Fatal("no player id or session id")
	}
	return w
}

// client is the caller a route expects: the administrator for admin routes.
func (w *hostileWorld) client(r apiRoute) *apitest.Client {
	if strings.HasPrefix(r.procedure, "fairplay.v1.AdminService.") {
		return w.admin
	}
	return w.player
}

func noFields(*hostileWorld) map[string]any { return map[string]any{} }

// apiRoutes are every /api route with a Connect procedure behind it (the
// route tables of internal/rpc); TestRouteTableIsComplete keeps the list
// whole.
var apiRoutes = []apiRoute{
	{procedure: "fairplay.v1.AuthService.Register", method: "POST", path: "/api/auth/register", base: func(*hostileWorld) map[string]any {
		return map[string]any{"username": "newbie", "email": "newbie@example.com", "password": "secret123", "turnstileToken": apitest.BotToken}
	}},
	{procedure: "fairplay.v1.AuthService.Login", method: "POST", path: "/api/auth/login", base: func(*hostileWorld) map[string]any {
		return map[string]any{"username": "mallory", "password": "secret123", "turnstileToken": apitest.BotToken}
	}},
	{procedure: "fairplay.v1.AuthService.Refresh", method: "POST", path: "/api/auth/refresh", base: func(w *hostileWorld) map[string]any {
		return map[string]any{"refreshToken": w.player.RefreshToken}
	}},
	{procedure: "fairplay.v1.AuthService.Logout", method: "POST", path: "/api/auth/logout", base: func(w *hostileWorld) map[string]any {
		return map[string]any{"refreshToken": w.player.RefreshToken}
	}},
	{procedure: "fairplay.v1.AuthService.GetUser", method: "GET", path: "/api/auth/user", base: noFields},
	{procedure: "fairplay.v1.AuthService.ListSessions", method: "GET", path: "/api/auth/sessions", base: noFields},
	{procedure: "fairplay.v1.AuthService.RevokeSession", method: "POST", path: "/api/auth/revoke-session", base: func(w *hostileWorld) map[string]any {
		return map[string]any{"sessionId": w.sessionID}
	}},
	{procedure: "fairplay.v1.AuthService.RevokeOtherSessions", method: "POST", path: "/api/auth/revoke-other-sessions", base: func(w *hostileWorld) map[string]any {
		return map[string]any{"currentRefreshToken": w.player.RefreshToken}
	}},
	{procedure: "fairplay.v1.AuthService.ChangePassword", method: "POST", path: "/api/auth/change-password", base: func(*hostileWorld) map[string]any {
		return map[string]any{"currentPassword": "secret123", "newPassword": "N3w!password"}
	}},
	{procedure: "fairplay.v1.AuthService.GetConfig", method: "GET", path: "/api/auth/config", base: noFields},
	{procedure: "fairplay.v1.AuthService.UpdatePreferences", method: "POST", path: "/api/auth/preferences", base: func(*hostileWorld) map[string]any {
		return map[string]any{"hideUsername": true}
	}},

	{procedure: "fairplay.v1.WalletService.GetTopUp", method: "GET", path: "/api/wallet/top-up", base: noFields},
	{procedure: "fairplay.v1.WalletService.ClaimTopUp", method: "POST", path: "/api/wallet/top-up", base: noFields},

	// A stream: tests that call every route send it requests that are
	// refused before it opens (it never ends on its own).
	{procedure: "fairplay.v1.LiveService.WatchBets", method: "GET", path: "/api/live/bets", base: func(*hostileWorld) map[string]any {
		return map[string]any{"minAmount": "100"}
	}},

	{procedure: "fairplay.v1.FairnessService.GetSeeds", method: "GET", path: "/api/fair/seeds", base: noFields},
	{procedure: "fairplay.v1.FairnessService.SetClientSeed", method: "POST", path: "/api/fair/client-seed", base: func(*hostileWorld) map[string]any {
		return map[string]any{"clientSeed": "lucky"}
	}},
	{procedure: "fairplay.v1.FairnessService.RotateSeed", method: "POST", path: "/api/fair/rotate", base: func(*hostileWorld) map[string]any {
		return map[string]any{"clientSeed": "lucky"}
	}},
	{procedure: "fairplay.v1.FairnessService.VerifyBet", method: "GET", path: "/api/fair/verify/{betId}", pathFields: map[string]string{"betId": "betId"},
		base: func(*hostileWorld) map[string]any { return map[string]any{"betId": uuid.NewString()} }},

	{procedure: "fairplay.v1.GameService.PlayDice", method: "POST", path: "/api/games/dice", base: func(*hostileWorld) map[string]any {
		return map[string]any{"betAmount": 1, "rollTarget": 50}
	}},
	{procedure: "fairplay.v1.GameService.PlayPlinko", method: "POST", path: "/api/games/plinko", base: func(*hostileWorld) map[string]any {
		return map[string]any{"betAmount": 1, "rows": 8, "risk": "medium"}
	}},
	{procedure: "fairplay.v1.GameService.PlayKeno", method: "POST", path: "/api/games/keno", base: func(*hostileWorld) map[string]any {
		return map[string]any{"betAmount": 1, "selectedNumbers": []int{1, 2, 3}, "riskLevel": "classic"}
	}},
	{procedure: "fairplay.v1.GameService.ListBets", method: "GET", path: "/api/games/bets", base: noFields},
	{procedure: "fairplay.v1.GameService.GetBet", method: "GET", path: "/api/games/bets/{betId}", pathFields: map[string]string{"betId": "betId"},
		base: func(*hostileWorld) map[string]any { return map[string]any{"betId": uuid.NewString()} }},
	{procedure: "fairplay.v1.GameService.StartMines", method: "POST", path: "/api/games/mines/start", base: func(*hostileWorld) map[string]any {
		return map[string]any{"betAmount": 1, "mineCount": 3}
	}},
	{procedure: "fairplay.v1.GameService.RevealMinesTile", method: "POST", path: "/api/games/mines/click", base: func(*hostileWorld) map[string]any {
		return map[string]any{"gameId": uuid.NewString(), "row": 0, "col": 0}
	}},
	{procedure: "fairplay.v1.GameService.CashOutMines", method: "POST", path: "/api/games/mines/cashout", base: gameID},
	{procedure: "fairplay.v1.GameService.StartPump", method: "POST", path: "/api/games/pump/start", base: func(*hostileWorld) map[string]any {
		return map[string]any{"betAmount": 1, "difficulty": "medium"}
	}},
	{procedure: "fairplay.v1.GameService.PumpBalloon", method: "POST", path: "/api/games/pump/pump", base: gameID},
	{procedure: "fairplay.v1.GameService.CashOutPump", method: "POST", path: "/api/games/pump/cashout", base: gameID},
	{procedure: "fairplay.v1.GameService.StartBlackjack", method: "POST", path: "/api/games/blackjack/start", base: func(*hostileWorld) map[string]any {
		return map[string]any{"betAmount": 1}
	}},
	{procedure: "fairplay.v1.GameService.HitBlackjack", method: "POST", path: "/api/games/blackjack/hit", base: gameID},
	{procedure: "fairplay.v1.GameService.StandBlackjack", method: "POST", path: "/api/games/blackjack/stand", base: gameID},
	{procedure: "fairplay.v1.GameService.DoubleBlackjack", method: "POST", path: "/api/games/blackjack/double", base: gameID},
	{procedure: "fairplay.v1.GameService.GetActiveGames", method: "GET", path: "/api/games/active", base: noFields},

	{procedure: "fairplay.v1.AdminService.GetUserStats", method: "GET", path: "/api/auth/stats/users", base: noFields},
	{procedure: "fairplay.v1.AdminService.GetWageringStats", method: "GET", path: "/api/auth/stats/wagering", base: noFields},
	{procedure: "fairplay.v1.AdminService.GetActivityStats", method: "GET", path: "/api/auth/stats/activity", base: noFields},
	{procedure: "fairplay.v1.AdminService.ListUsers", method: "GET", path: "/api/auth/users", base: noFields},
	{procedure: "fairplay.v1.AdminService.SearchUsers", method: "GET", path: "/api/auth/users/search", base: func(*hostileWorld) map[string]any {
		return map[string]any{"query": "mall"}
	}},
	{procedure: "fairplay.v1.AdminService.AdjustBalance", method: "PATCH", path: "/api/auth/users/{id}/balance", pathFields: map[string]string{"id": "userId"},
		base: func(w *hostileWorld) map[string]any {
			return map[string]any{"userId": w.playerID, "amount": 5, "note": "goodwill"}
		}},
	{procedure: "fairplay.v1.AdminService.DeleteUser", method: "DELETE", path: "/api/auth/users/{id}", pathFields: map[string]string{"id": "userId"},
		base: func(w *hostileWorld) map[string]any { return map[string]any{"userId": w.playerID} }},
	{procedure: "fairplay.v1.AdminService.ListAuditEntries", method: "GET", path: "/api/auth/audit", base: func(w *hostileWorld) map[string]any {
		return map[string]any{"userId": w.playerID}
	}},
}

func gameID(*hostileWorld) map[string]any { return map[string]any{"gameId": uuid.NewString()} }

// apiServices are the Connect apiServices the /api routes front.
var apiServices = []protoreflect.FileDescriptor{
	fairplayv1.File_fairplay_v1_auth_proto,
	fairplayv1.File_fairplay_v1_game_proto,
	fairplayv1.File_fairplay_v1_fairness_proto,
	fairplayv1.File_fairplay_v1_admin_proto,
	fairplayv1.File_fairplay_v1_wallet_proto,
	fairplayv1.File_fairplay_v1_live_proto,
}

// procedureInput returns the request message of a procedure.
func procedureInput(t *testing.T, procedure string) protoreflect.MessageDescriptor {
	t.Helper()
	for _, f := range apiServices {
		for i := 0; i < f.Services().Len(); i++ {
			svc := f.Services().Get(i)
			for j := 0; j < svc.Methods().Len(); j++ {
				if m := svc.Methods().Get(j); string(m.FullName()) == procedure {
					return m.Input()
				}
			}
		}
	}
	t.Fatalf("no procedure %s", procedure)
	return nil
}

// stringFields are the JSON names of a request's string fields (plain
// strings and the decimal strings that /api takes as numbers).
func stringFields(md protoreflect.MessageDescriptor) []string {
	var out []string
	for i := 0; i < md.Fields().Len(); i++ {
		if fd := md.Fields().Get(i); fd.Kind() == protoreflect.StringKind {
			out = append(out, fd.JSONName())
		}
	}
	return out
}

// TestRouteTableIsComplete: apiRoutes names every procedure of every
// service once, so the route-wide tests below cover every route.
func TestRouteTableIsComplete(t *testing.T) {
	t.Parallel()
	listed := map[string]int{}
	for _, r := range apiRoutes {
		listed[r.procedure]++
	}
	for _, f := range apiServices {
		for i := 0; i < f.Services().Len(); i++ {
			svc := f.Services().Get(i)
			for j := 0; j < svc.Methods().Len(); j++ {
				name := string(svc.Methods().Get(j).FullName())
				if listed[name] != 1 {
					t.Errorf("%s is listed %d times in apiRoutes", name, listed[name])
				}
				delete(listed, name)
			}
		}
	}
	for name := range listed {
		t.Errorf("apiRoutes lists %s, which no service has", name)
	}
	for _, r := range apiRoutes {
		md := procedureInput(t, r.procedure)
		for wildcard, field := range r.pathFields {
			if !strings.Contains(r.path, "{"+wildcard+"}") || !slices.Contains(stringFields(md), field) {
				t.Errorf("%s: path field %s -> %s does not fit %s", r.procedure, wildcard, field, md.FullName())
			}
		}
	}
}

// request turns a route and its fields into a method, a URL path (with
// the path fields in it and, for GET, the other fields as the query) and
// the JSON body (nil for GET).
func (r apiRoute) request(fields map[string]any) (string, map[string]any) {
	path := r.path
	rest := map[string]any{}
	for k, v := range fields {
		rest[k] = v
	}
	for wildcard, field := range r.pathFields {
		s, _ := rest[field].(string)
		path = strings.ReplaceAll(path, "{"+wildcard+"}", url.PathEscape(s))
		delete(rest, field)
	}
	if r.method != "GET" {
		return path, rest
	}
	q := url.Values{}
	for k, v := range rest {
		s, ok := v.(string)
		if !ok {
			panic("query value of " + k + " is not a string")
		}
		q.Set(k, s)
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path, nil
}

// dbSnapshot fingerprints every table of the test's database, row by row.
func dbSnapshot(t *testing.T, env *apitest.Env) map[string]string {
	t.Helper()
	ctx := context.Background()
	rows, err := env.App.Postgres.Query(ctx, `SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(tables) < 5 {
		t.Fatalf("only %d tables in the schema: %v", len(tables), tables)
	}
	out := map[string]string{}
	for _, table := range tables {
		var sum string
		err := env.App.Postgres.QueryRow(ctx,
			`SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, E'\n' ORDER BY t::text)), '') FROM `+table+` t`).Scan(&sum)
		if err != nil {
			t.Fatalf("snapshot %s: %v", table, err)
		}
		out[table] = sum
	}
	return out
}

// sameDB fails the test when the database differs from before.
func sameDB(t *testing.T, env *apitest.Env, before map[string]string, what string) {
	t.Helper()
	after := dbSnapshot(t, env)
	for table, sum := range before {
		if after[table] != sum {
			t.Errorf("%s changed table %s", what, table)
		}
	}
}
