package security_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/fairplay/fairplay/internal/routes"
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

// bases are the requests of the routes whose example (the protos'
// (fairplay.v1.example)) would not do: those that name the world's own
// player, session or tokens. Every other route starts from its example.
var bases = map[string]func(w *hostileWorld) map[string]any{
	"fairplay.v1.AuthService.Login": func(*hostileWorld) map[string]any {
		return map[string]any{"username": "mallory", "password": "secret123", "turnstileToken": apitest.BotToken}
	},
	"fairplay.v1.AuthService.Refresh": func(w *hostileWorld) map[string]any {
		return map[string]any{"refreshToken": w.player.RefreshToken}
	},
	"fairplay.v1.AuthService.Logout": func(w *hostileWorld) map[string]any {
		return map[string]any{"refreshToken": w.player.RefreshToken}
	},
	"fairplay.v1.AuthService.RevokeSession": func(w *hostileWorld) map[string]any {
		return map[string]any{"sessionId": w.sessionID}
	},
	"fairplay.v1.AuthService.RevokeOtherSessions": func(w *hostileWorld) map[string]any {
		return map[string]any{"currentRefreshToken": w.player.RefreshToken}
	},
	"fairplay.v1.AdminService.AdjustBalance": func(w *hostileWorld) map[string]any {
		return map[string]any{"userId": w.playerID, "amount": 5, "note": "goodwill"}
	},
	"fairplay.v1.AdminService.DeleteUser": func(w *hostileWorld) map[string]any {
		return map[string]any{"userId": w.playerID}
	},
	"fairplay.v1.AdminService.ListAuditEntries": func(w *hostileWorld) map[string]any {
		return map[string]any{"userId": w.playerID}
	},
}

// apiRoutes are every /api route, read off the protos' google.api.http
// rules (internal/routes), each with its base request.
var apiRoutes = func() []apiRoute {
	var out []apiRoute
	for _, rt := range routes.MustAll() {
		r := apiRoute{procedure: string(rt.Procedure.FullName()), method: rt.Method, path: rt.Path,
			pathFields: map[string]string{}, base: bases[string(rt.Procedure.FullName())]}
		for _, fd := range rt.PathFields {
			r.pathFields[fd.JSONName()] = fd.JSONName()
		}
		if r.base == nil {
			example, _ := rt.Example()
			r.base = func(*hostileWorld) map[string]any {
				fields := map[string]any{}
				if example != "" {
					dec := json.NewDecoder(strings.NewReader(example))
					dec.UseNumber()
					if err := dec.Decode(&fields); err != nil {
						panic(fmt.Sprintf("example of %s: %v", r.procedure, err))
					}
				}
				return fields
			}
		}
		out = append(out, r)
	}
	return out
}()

// apiServices are the files of the services the /api routes front.
var apiServices = func() []protoreflect.FileDescriptor {
	var out []protoreflect.FileDescriptor
	for _, svc := range routes.Services() {
		if !slices.Contains(out, svc.ParentFile()) {
			out = append(out, svc.ParentFile())
		}
	}
	return out
}()

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
		q.Set(k, fmt.Sprint(v))
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
