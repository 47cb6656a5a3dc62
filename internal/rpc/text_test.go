package rpc

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"connectrpc.com/connect"

	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
)

func TestCheckTextFindsNULAtAnyDepth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		check error
		field string
	}{
		{"top level", checkText((&fairplayv1.RegisterRequest{Username: "ok", Email: "a\x00b"}).ProtoReflect()), "email"},
		{"nested", checkText((&fairplayv1.GetUserResponse{User: &fairplayv1.User{Username: "\x00"}}).ProtoReflect()), "username"},
		{"in a list", checkText((&fairplayv1.ListSessionsResponse{Sessions: []*fairplayv1.Session{
			{Id: "1"}, {Id: "2", DeviceInfo: &fairplayv1.DeviceInfo{UserAgent: "x\x00"}},
		}}).ProtoReflect()), "userAgent"},
		{"clean", checkText((&fairplayv1.RegisterRequest{Username: "ok", Email: "é@example.com", Password: "\x01\t"}).ProtoReflect()), ""},
	} {
		var ne *nulError
		switch {
		case tc.field == "" && tc.check != nil:
			t.Errorf("%s: %v", tc.name, tc.check)
		case tc.field != "" && (!errors.As(tc.check, &ne) || ne.field != tc.field):
			t.Errorf("%s: got %v, want a NUL in %s", tc.name, tc.check, tc.field)
		}
	}
}

func TestTextInterceptorRefusesNUL(t *testing.T) {
	t.Parallel()
	called := false
	next := connect.UnaryFunc(func(context.Context, connect.AnyRequest) (connect.AnyResponse, error) {
		called = true
		return nil, nil
	})
	call := TextInterceptor().WrapUnary(next)
	_, err := call(context.Background(), connect.NewRequest(&fairplayv1.SetClientSeedRequest{ClientSeed: "a\x00"}))
	if connect.CodeOf(err) != connect.CodeInvalidArgument || called {
		t.Fatalf("NUL: err %v, handler called %v", err, called)
	}
	if want := "Invalid request: clientSeed must not contain NUL characters"; !strings.Contains(err.Error(), want) {
		t.Fatalf("message %q, want %q", err, want)
	}
	if _, err := call(context.Background(), connect.NewRequest(&fairplayv1.SetClientSeedRequest{ClientSeed: "a"})); err != nil || !called {
		t.Fatalf("clean request: err %v, handler called %v", err, called)
	}
}

func TestCleanUserAgent(t *testing.T) {
	t.Parallel()
	long := "x" + strings.Repeat("é", 300) // byte 512 falls inside an é
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"Mozilla/5.0 (X11; Linux x86_64)", "Mozilla/5.0 (X11; Linux x86_64)"},
		{"caf\xe9 \xff\xfe!", "caf\uFFFD \uFFFD!"},
		{"a\x00b", "ab"},
		{long, long[:511]},
		{strings.Repeat("a", 600), strings.Repeat("a", 512)},
		{strings.Repeat("\xff", 10000), "\uFFFD"},
	} {
		if got := cleanUserAgent(tc.in); got != tc.want {
			t.Errorf("cleanUserAgent(%.40q) = %.40q (%d bytes), want %.40q", tc.in, got, len(got), tc.want)
		}
	}
}

// FuzzCleanUserAgent: whatever the header, what is stored is valid UTF-8
// without NUL, at most 512 bytes, and a header that already is all that is
// kept as it is.
func FuzzCleanUserAgent(f *testing.F) {
	for _, s := range []string{"", "Mozilla/5.0", "caf\xe9", "a\x00b", strings.Repeat("é", 300), strings.Repeat("\xf0\x9f\x8e\xb2", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := cleanUserAgent(in)
		if !utf8.ValidString(out) || len(out) > maxUserAgent || strings.IndexByte(out, 0) >= 0 {
			t.Fatalf("cleanUserAgent(%q) = %q", in, out)
		}
		if utf8.ValidString(in) && len(in) <= maxUserAgent && strings.IndexByte(in, 0) < 0 && out != in {
			t.Fatalf("cleanUserAgent changed a clean %q to %q", in, out)
		}
	})
}

func TestReadObjectWantsJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		contentType, body string
		wantNotJSON       bool
	}{
		{"application/json", `{"a":1}`, false},
		{"application/json; charset=utf-8", `{"a":1}`, false},
		{"APPLICATION/JSON", `{"a":1}`, false},
		{"", ``, false},
		{"", "  \n", false},
		{"", `{"a":1}`, true},
		{"text/plain", `{"a":1}`, true},
		{"text/plain", ``, true},
		{"application/x-www-form-urlencoded", `a=1`, true},
		{"multipart/form-data; boundary=x", `--x--`, true},
		{"application/jsonx", `{}`, true},
		{"application/json-seq", `{}`, true},
		{";;", `{}`, true},
	} {
		r := httptest.NewRequest(http.MethodPost, "/api/x", strings.NewReader(tc.body))
		if tc.contentType != "" {
			r.Header.Set("Content-Type", tc.contentType)
		}
		_, err := readObject(r)
		if got := errors.Is(err, errNotJSON); got != tc.wantNotJSON {
			t.Errorf("%q with %q: err %v", tc.contentType, tc.body, err)
		}
	}
}
