package security_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/fairplay/fairplay/test/apitest"
)

// withNUL returns v (a string or a number) with a NUL byte in its middle,
// so that it is what the field wants but for that one byte.
func withNUL(v any) string {
	s := fmt.Sprint(v)
	if s == "" {
		return "\x00"
	}
	i := len(s) / 2
	return s[:i] + "\x00" + s[i:]
}

// TestNULBytesAreRefused: a NUL byte in any string field of any /api route
// — in the body, the query or the path — and of any Connect procedure is
// answered 400 with a message naming the field, never 500 (Postgres
// refuses NUL in text), and changes nothing in the database.
func TestNULBytesAreRefused(t *testing.T) {
	t.Parallel()
	w := newHostileWorld(t)
	before := dbSnapshot(t, w.env)
	for _, r := range apiRoutes {
		md := procedureInput(t, r.procedure)
		for _, field := range stringFields(md) {
			t.Run("api "+r.method+" "+r.path+" "+field, func(t *testing.T) {
				fields := r.base(w)
				fields[field] = withNUL(fields[field])
				path, body := r.request(fields)
				var res apitest.Response
				if body == nil {
					res = w.client(r).Do(r.method, path, nil)
				} else {
					res = w.client(r).Do(r.method, path, body)
				}
				if res.Status != http.StatusBadRequest {
					t.Fatalf("%s %s with a NUL in %s: %d %s", r.method, path, field, res.Status, res.Raw)
				}
				if msg := res.Message(); !strings.Contains(msg, field) || !strings.Contains(msg, "NUL") {
					t.Errorf("message %q does not say that %s holds a NUL", msg, field)
				}
				sameDB(t, w.env, before, "a refused request")
			})
			t.Run("connect "+r.procedure+" "+field, func(t *testing.T) {
				fields := connectFields(md, r.base(w))
				fields[field] = withNUL(fields[field])
				status, res := connectCall(t, w.env, w.client(r), r.procedure, fields)
				if status != http.StatusBadRequest || res["code"] != "invalid_argument" {
					t.Fatalf("%s with a NUL in %s: %d %v", r.procedure, field, status, res)
				}
				if msg, _ := res["message"].(string); !strings.Contains(msg, field) || !strings.Contains(msg, "NUL") {
					t.Errorf("message %q does not say that %s holds a NUL", msg, field)
				}
				sameDB(t, w.env, before, "a refused request")
			})
		}
	}
	// The player and the administrator still work, unharmed.
	if res := w.player.Do("GET", "/api/auth/user", nil); res.Status != 200 || res.Str("user.username") != "mallory" {
		t.Fatalf("player after the NULs: %d %s", res.Status, res.Raw)
	}
	if res := w.admin.Do("GET", "/api/auth/users/search?query=mall", nil); res.Status != 200 {
		t.Fatalf("admin search after the NULs: %d %s", res.Status, res.Raw)
	}
}

// connectFields is an /api body as Connect's JSON wants it: decimal fields
// (numbers on /api) are strings.
func connectFields(md protoreflect.MessageDescriptor, fields map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range fields {
		if fd := md.Fields().ByJSONName(k); fd != nil && fd.Kind() == protoreflect.StringKind {
			v = fmt.Sprint(v)
		}
		out[k] = v
	}
	return out
}

// connectCall calls a unary procedure with the Connect protocol's JSON
// encoding and the client's bearer token, and returns the status and body.
// A server-streaming procedure is called with the streaming protocol, and a
// stream that ends with an error answers as a unary call would (the status
// of its code, the error's code and message).
func connectCall(t *testing.T, env *apitest.Env, c *apitest.Client, procedure string, fields map[string]any) (int, map[string]any) {
	t.Helper()
	i := strings.LastIndexByte(procedure, '.')
	body, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	if streamingProcedure(procedure) {
		return connectStreamCall(t, env, c, procedure[:i]+"/"+procedure[i+1:], body)
	}
	req, err := http.NewRequest("POST", env.URL+"/"+procedure[:i]+"/"+procedure[i+1:], bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connect-Protocol-Version", "1")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	if out == nil {
		out = map[string]any{"raw": string(raw)}
	}
	return res.StatusCode, out
}

// TestUserAgentIsStoredAsValidUTF8: a User-Agent that is not UTF-8, or is
// longer than 512 bytes with a multi-byte character across the cut, is
// stored with the session as valid UTF-8 of at most 512 bytes, cut on a
// character boundary; signing in never fails because of it. A NUL in the
// header is refused by the HTTP layer (400).
func TestUserAgentIsStoredAsValidUTF8(t *testing.T) {
	t.Parallel()
	w := newHostileWorld(t)
	// 33 ASCII bytes, then two-byte characters: byte 512 is in the middle of one.
	long := "Mozilla/5.0 (X11; Linux x86_64) x" + strings.Repeat("é", 600)
	for _, tc := range []struct {
		name, userAgent string
		want            func(stored string) bool
	}{
		{"latin-1 bytes", "Mozilla/5.0 (X11; Linux x86_64) caf\xe9 \xff\xfe Chrome/126.0", func(s string) bool {
			return s == "Mozilla/5.0 (X11; Linux x86_64) caf\uFFFD \uFFFD Chrome/126.0"
		}},
		{"over-long, cut inside a character", long, func(s string) bool {
			return len(s) == 511 && strings.HasPrefix(long, s)
		}},
		{"over-long and not UTF-8", strings.Repeat("\xff", 2000), func(s string) bool {
			return s != "" && len(s) <= 512 && strings.Trim(s, "\uFFFD") == ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := w.env.Client()
			c.UserAgent = tc.userAgent
			res := c.Do("POST", "/api/auth/login", map[string]any{"username": "mallory", "password": "secret123", "turnstileToken": apitest.BotToken})
			if res.Status != 200 {
				t.Fatalf("sign-in with that User-Agent: %d %s", res.Status, res.Raw)
			}
			c.Token = res.Str("token")
			// Refreshing records the User-Agent again.
			if r := c.Do("POST", "/api/auth/refresh", map[string]any{"refreshToken": res.Str("refreshToken")}); r.Status != 200 {
				t.Fatalf("refresh with that User-Agent: %d %s", r.Status, r.Raw)
			}
			var stored []string
			for _, s := range w.player.Do("GET", "/api/auth/sessions", nil).Get("sessions").([]any) {
				stored = append(stored, s.(map[string]any)["deviceInfo"].(map[string]any)["userAgent"].(string))
			}
			var got string
			var n int
			for _, ua := range stored {
				if ua != w.player.UserAgent {
					got = ua
					n++
				}
			}
			if n != 1 {
				t.Fatalf("want one new session, got user agents %q", stored)
			}
			if !utf8.ValidString(got) || !tc.want(got) {
				t.Fatalf("stored User-Agent %q (%d bytes)", got, len(got))
			}
			if r := c.Do("POST", "/api/auth/logout", map[string]any{"refreshToken": res.Str("refreshToken")}); r.Status != 200 {
				t.Fatalf("logout: %d %s", r.Status, r.Raw)
			}
		})
	}

	t.Run("NUL", func(t *testing.T) {
		u, _ := url.Parse(w.env.URL)
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		body := `{"username":"mallory","password":"secret123","turnstileToken":"` + apitest.BotToken + `"}`
		fmt.Fprintf(conn, "POST /api/auth/login HTTP/1.1\r\nHost: %s\r\nUser-Agent: a\x00b\r\nContent-Type: application/json\r\n"+
			"Content-Length: %d\r\nConnection: close\r\n\r\n%s", u.Host, len(body), body)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Fatalf("a NUL in the User-Agent: %d", res.StatusCode)
		}
	})
}

// TestNonJSONBodiesAre415: every /api route that takes a body answers a
// body that is not declared application/json with 415 {"message": ...}
// and changes nothing — form posts and text/plain are what a cross-site
// form can send without a preflight. application/json with parameters is
// JSON; a request without a body needs no Content-Type.
func TestNonJSONBodiesAre415(t *testing.T) {
	t.Parallel()
	w := newHostileWorld(t)
	before := dbSnapshot(t, w.env)
	for _, r := range apiRoutes {
		if r.method == "GET" {
			continue
		}
		for _, ct := range []string{"", "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
			"multipart/form-data; boundary=x", "application/jsonp", "application/xml", "json", "application/json-patch+json"} {
			t.Run(r.method+" "+r.path+" "+ct, func(t *testing.T) {
				path, body := r.request(r.base(w))
				raw, _ := json.Marshal(body)
				res := w.client(r).DoWith(r.method, path, raw, func(req *http.Request) {
					if ct == "" {
						req.Header.Del("Content-Type")
					} else {
						req.Header.Set("Content-Type", ct)
					}
				})
				if res.Status != http.StatusUnsupportedMediaType {
					t.Fatalf("%s %s as %q: %d %s", r.method, path, ct, res.Status, res.Raw)
				}
				var e map[string]string
				if err := json.Unmarshal(res.Raw, &e); err != nil || len(e) != 1 || e["message"] == "" {
					t.Fatalf("415 body %s is not {\"message\": ...}", res.Raw)
				}
				if got := res.Header.Get("Content-Type"); got != "application/json" {
					t.Errorf("415 Content-Type %q", got)
				}
				sameDB(t, w.env, before, "a refused request")
			})
		}
	}

	// JSON with parameters, in any case, is JSON.
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8"} {
		res := w.player.DoWith("POST", "/api/fair/client-seed", []byte(`{"clientSeed":"s`+fmt.Sprint(len(ct))+`"}`),
			func(req *http.Request) { req.Header.Set("Content-Type", ct) })
		if res.Status != 200 {
			t.Errorf("client seed as %q: %d %s", ct, res.Status, res.Raw)
		}
	}
	// A body-less POST needs no Content-Type; an empty body with a wrong one is still refused.
	if res := w.player.DoWith("POST", "/api/fair/rotate", nil, func(req *http.Request) { req.Header.Del("Content-Type") }); res.Status != 200 {
		t.Errorf("rotate without a body or Content-Type: %d %s", res.Status, res.Raw)
	}
	if res := w.player.DoWith("POST", "/api/fair/rotate", nil, func(req *http.Request) { req.Header.Set("Content-Type", "text/plain") }); res.Status != http.StatusUnsupportedMediaType {
		t.Errorf("rotate without a body as text/plain: %d %s", res.Status, res.Raw)
	}
}

// TestMalformedJSONBodiesAre400: the /api body reader (internal/rpc's own
// JSON reader since issue 18) refuses what is not one JSON document — a
// second document or text after the first, a cut-off body, nesting deeper
// than encoding/json allows — with 400 "Invalid JSON body" on every route,
// before any handler, and nothing changes. A request must not be able to
// smuggle a second body past the first.
func TestMalformedJSONBodiesAre400(t *testing.T) {
	t.Parallel()
	w := newHostileWorld(t)
	before := dbSnapshot(t, w.env)
	for _, r := range apiRoutes {
		if r.method == "GET" {
			continue
		}
		path, body := r.request(r.base(w))
		raw, _ := json.Marshal(body)
		bad := map[string][]byte{
			"two documents":   append(append([]byte{}, raw...), raw...),
			"trailing text":   append(append([]byte{}, raw...), " }"...),
			"cut off":         raw[:len(raw)-1],
			"deeper than 10k": []byte(`{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`),
		}
		for name, b := range bad {
			t.Run(r.method+" "+r.path+" "+name, func(t *testing.T) {
				res := w.client(r).DoWith(r.method, path, b, func(req *http.Request) {
					req.Header.Set("Content-Type", "application/json")
				})
				if res.Status != http.StatusBadRequest || res.Message() != "Invalid JSON body" {
					t.Fatalf("%s %s with %s: %d %s", r.method, path, name, res.Status, res.Raw)
				}
			})
		}
	}
	sameDB(t, w.env, before, "a malformed body")
}

// TestUndecodableConnectBodiesNameNoGoType: a Connect request whose body
// does not decode (JSON that is not JSON, protobuf that is not protobuf) is
// refused with 400 invalid_argument and the decoder's reason, before any
// rule runs and for a caller signed in or not, and the answer names no Go
// type: connect-go's own codecs answered "unmarshal into
// *fairplayv1.PlayDiceRequest: ...", the server's language and package
// layout to anyone (internal/rpc/codec.go). Every procedure of every
// service, the admin's as the player and as nobody, and Connect's GET of
// every procedure without side effects, whose base64 message that did not
// decode was a 500 in Go's words (rpc.getMessageChecked); nothing changes.
func TestUndecodableConnectBodiesNameNoGoType(t *testing.T) {
	t.Parallel()
	w := newHostileWorld(t)
	before := dbSnapshot(t, w.env)
	bodies := []struct{ name, contentType, body string }{
		{"text as JSON", "application/json", "not json"},
		{"a JSON array", "application/json", "[1, 2]"},
		{"bytes as protobuf", "application/proto", "\xff\xff\xff"},
		{"a cut-off protobuf field", "application/proto", "\x0a\x05\xff"},
	}
	var procedures, gets int
	for _, f := range apiServices {
		for i := 0; i < f.Services().Len(); i++ {
			svc := f.Services().Get(i)
			for j := 0; j < svc.Methods().Len(); j++ {
				m := svc.Methods().Get(j)
				path := "/" + string(svc.FullName()) + "/" + string(m.Name())
				procedures++
				if m.Options().(*descriptorpb.MethodOptions).GetIdempotencyLevel() == descriptorpb.MethodOptions_NO_SIDE_EFFECTS {
					// Connect's GET: the message in the query.
					gets++
					for _, q := range []string{
						"encoding=json&message=not%20json",
						"encoding=proto&base64=1&message=!!",
						"encoding=proto&base64=1&message=____", // decodes to bytes that are not protobuf
						"encoding=proto&message=%FF%FF%FF",
					} {
						res := w.player.Do("GET", path+"?connect=v1&"+q, nil)
						msg := res.Str("message")
						if res.Status != http.StatusBadRequest || res.Str("code") != "invalid_argument" ||
							!strings.HasPrefix(msg, "unmarshal message: ") || leaks(msg) != "" {
							t.Errorf("GET %s?%s: %d %s; want 400 invalid_argument naming no Go type", path, q, res.Status, res.Raw)
						}
					}
				}
				for _, caller := range []*apitest.Client{w.player, w.env.Client()} {
					for _, b := range bodies {
						var status int
						var answer map[string]any
						if m.IsStreamingServer() {
							if b.contentType != "application/json" {
								continue
							}
							status, answer = connectStreamCall(t, w.env, caller, path[1:], []byte(b.body))
						} else {
							res := caller.DoWith("POST", path, []byte(b.body), func(req *http.Request) {
								req.Header.Set("Content-Type", b.contentType)
								req.Header.Set("Connect-Protocol-Version", "1")
							})
							status, answer = res.Status, map[string]any{"code": res.Str("code"), "message": res.Str("message"), "raw": string(res.Raw)}
						}
						msg, _ := answer["message"].(string)
						if status != http.StatusBadRequest || answer["code"] != "invalid_argument" ||
							!strings.HasPrefix(msg, "unmarshal message: proto:") {
							t.Errorf("%s with %s (signed in: %v): %d %v; want 400 invalid_argument with the decoder's reason",
								path, b.name, caller.Token != "", status, answer)
						}
						if leak := leaks(msg); leak != "" {
							t.Errorf("%s with %s: the answer %q names %q", path, b.name, msg, leak)
						}
					}
				}
			}
		}
	}
	if procedures < 20 || gets < 5 {
		t.Fatalf("only %d procedures found, %d of them answering GET", procedures, gets)
	}
	sameDB(t, w.env, before, "bodies that do not decode")
}

// leaks is what of the server's Go insides an error message names, if
// anything: a package or type name, a source file.
func leaks(msg string) string {
	for _, leak := range []string{"fairplayv1", "*", "github.com", ".go", "illegal base64"} {
		if strings.Contains(msg, leak) {
			return leak
		}
	}
	return ""
}

// streamingProcedure reports whether a procedure streams its responses.
func streamingProcedure(procedure string) bool {
	for _, f := range apiServices {
		for i := 0; i < f.Services().Len(); i++ {
			svc := f.Services().Get(i)
			for j := 0; j < svc.Methods().Len(); j++ {
				if m := svc.Methods().Get(j); string(m.FullName()) == procedure {
					return m.IsStreamingServer()
				}
			}
		}
	}
	return false
}

// connectStreamCall opens a server stream with one enveloped JSON request
// and, if the stream ends with an error before any message, returns that
// error as connectCall does; a stream that opens fails the test.
func connectStreamCall(t *testing.T, env *apitest.Env, c *apitest.Client, path string, msg []byte) (int, map[string]any) {
	t.Helper()
	env5 := append([]byte{0, 0, 0, 0, 0}, msg...)
	binary.BigEndian.PutUint32(env5[1:5], uint32(len(msg)))
	req, err := http.NewRequest("POST", env.URL+"/"+path, bytes.NewReader(env5))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/connect+json")
	req.Header.Set("Connect-Protocol-Version", "1")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(res.Body)
		return res.StatusCode, map[string]any{"raw": string(raw)}
	}
	head := make([]byte, 5)
	if _, err := io.ReadFull(res.Body, head); err != nil {
		t.Fatalf("%s: read the first frame: %v", path, err)
	}
	frame := make([]byte, binary.BigEndian.Uint32(head[1:]))
	if _, err := io.ReadFull(res.Body, frame); err != nil {
		t.Fatalf("%s: read the first frame: %v", path, err)
	}
	if head[0]&2 == 0 {
		t.Fatalf("%s: the stream opened (first frame %s)", path, frame)
	}
	var end struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(frame, &end); err != nil || end.Error == nil {
		t.Fatalf("%s: end of stream %s without an error", path, frame)
	}
	status := http.StatusOK
	switch end.Error["code"] {
	case "invalid_argument":
		status = http.StatusBadRequest
	case "unavailable":
		status = http.StatusServiceUnavailable
	case "unauthenticated":
		status = http.StatusUnauthorized
	}
	return status, end.Error
}
