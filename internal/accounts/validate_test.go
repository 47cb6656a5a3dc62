package accounts_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fairplay/fairplay/internal/accounts"
)

func TestValidateUsername(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]error{
		"abc": nil, "a_b_9": nil, strings.Repeat("z", 20): nil,
		"ab": accounts.ErrUsernameLength, strings.Repeat("z", 21): accounts.ErrUsernameLength, "": accounts.ErrUsernameLength,
		"Abc": accounts.ErrUsernameChars, "a b": accounts.ErrUsernameChars, "ab.c": accounts.ErrUsernameChars, "ábc": accounts.ErrUsernameChars,
	} {
		if got := accounts.ValidateUsername(in); !errors.Is(got, want) && got != want {
			t.Errorf("%q: got %v, want %v", in, got, want)
		}
	}
}

func TestValidateEmail(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]error{
		"a@b.co": nil, "first.last+tag@sub.example.com": nil,
		strings.Repeat("l", 64) + "@x.io": nil,
		strings.Repeat("l", 65) + "@x.io": accounts.ErrEmailLocal,
		"a@" + strings.Repeat("d", 256):   accounts.ErrEmailDomain,
		"plain":                           accounts.ErrEmailInvalid, "@x.io": accounts.ErrEmailInvalid, "a@": accounts.ErrEmailInvalid,
		"a@localhost": accounts.ErrEmailInvalid, "a b@x.io": accounts.ErrEmailInvalid, "a@x..io": accounts.ErrEmailInvalid,
		// Visible letters of any script pass; invisible characters do not.
		"jürgen@bücher.de": nil, "用户@例え.jp": nil,
		"boss@example.com\u200b": accounts.ErrEmailInvalid, "a\u202emoc@x.io": accounts.ErrEmailInvalid,
		"a\u00a0b@x.io": accounts.ErrEmailInvalid, "a\x01b@x.io": accounts.ErrEmailInvalid, "ab\x7f@x.io": accounts.ErrEmailInvalid,
		"a\ufeff@x.io": accounts.ErrEmailInvalid, "a\u2066b@x.io": accounts.ErrEmailInvalid, "a\xffb@x.io": accounts.ErrEmailInvalid,
		"a\ufe0f@x.io": accounts.ErrEmailInvalid, "a\U000e0100@x.io": accounts.ErrEmailInvalid, "a\u034fb@x.io": accounts.ErrEmailInvalid,
		"a\u3164@x.io": accounts.ErrEmailInvalid, "a\u115fb@x.io": accounts.ErrEmailInvalid, "a\uffa0@x.io": accounts.ErrEmailInvalid,
		"a\u17b4@x.io": accounts.ErrEmailInvalid, "a\u2800@x.io": accounts.ErrEmailInvalid, "a\ue000@x.io": accounts.ErrEmailInvalid,
		"jose\u0301@x.io": accounts.ErrEmailInvalid, "jos\u00e9@x.io": nil,
	} {
		if got := accounts.ValidateEmail(in); got != want {
			t.Errorf("%q: got %v, want %v", in, got, want)
		}
	}
}

func TestValidateNewPassword(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{`Abcde1!`, `Zz9(),.?`, `Aa1"xyz`, `Aa1:{}|<>`} {
		if err := accounts.ValidateNewPassword(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for in, want := range map[string]error{
		"Ab1!":                            accounts.ErrPasswordTooShort,
		"Ab1!" + strings.Repeat("x", 125): accounts.ErrPasswordTooLong,
		"abcdef1!":                        accounts.ErrPasswordWeak,
		"ABCDEF1!":                        accounts.ErrPasswordWeak,
		"Abcdefg!":                        accounts.ErrPasswordWeak,
		"Abcdefg1":                        accounts.ErrPasswordWeak,
		"Abcdef1-":                        accounts.ErrPasswordWeak,
	} {
		if got := accounts.ValidateNewPassword(in); got != want {
			t.Errorf("%q: got %v, want %v", in, got, want)
		}
	}
}

func TestHasher(t *testing.T) {
	t.Parallel()
	h := accounts.NewHasher(1024, 1, 1, 2)
	ctx := context.Background()
	enc, err := h.Hash(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=1024,t=1,p=1$") {
		t.Fatalf("encoding %q", enc)
	}
	if ok, err := h.Verify(ctx, "correct horse", enc); !ok || err != nil {
		t.Fatalf("right password: %v %v", ok, err)
	}
	if ok, _ := h.Verify(ctx, "wrong horse", enc); ok {
		t.Fatal("wrong password verified")
	}
	// The default hasher verifies a hash made with other costs (they are stored in the hash).
	if ok, _ := accounts.DefaultHasher().Verify(ctx, "correct horse", enc); !ok {
		t.Fatal("cost parameters not read from the hash")
	}
	if _, err := h.Verify(ctx, "x", "$bcrypt$whatever"); err == nil {
		t.Fatal("malformed hash accepted")
	}
}

func TestParseDevice(t *testing.T) {
	t.Parallel()
	cases := map[string]accounts.Device{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36":                         {Browser: "Chrome", Platform: "Windows"},
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1": {Browser: "Safari", Platform: "iOS", Mobile: true},
		"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36":                   {Browser: "Chrome", Platform: "Android", Mobile: true},
		"": {},
	}
	for ua, want := range cases {
		if got := accounts.ParseDevice(ua); got != want {
			t.Errorf("%q: got %+v, want %+v", ua, got, want)
		}
	}
}

func TestTurnstile(t *testing.T) {
	t.Parallel()
	var gotSecret, gotIP string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		gotSecret, gotIP = r.PostForm.Get("secret"), r.PostForm.Get("remoteip")
		if r.PostForm.Get("response") == "good" {
			_, _ = w.Write([]byte(`{"success":true}`))
			return
		}
		if r.PostForm.Get("response") == "boom" {
			w.WriteHeader(500)
			return
		}
		_, _ = w.Write([]byte(`{"success":false,"error-codes":["invalid-input-response"]}`))
	}))
	defer srv.Close()
	ts := accounts.NewTurnstile("s3cret", "site", srv.URL, srv.Client())
	ctx := context.Background()
	if err := ts.Verify(ctx, "good", "10.0.0.1"); err != nil {
		t.Fatalf("good token: %v", err)
	}
	if gotSecret != "s3cret" || gotIP != "10.0.0.1" {
		t.Fatalf("siteverify got secret %q ip %q", gotSecret, gotIP)
	}
	if err := ts.Verify(ctx, "bad", ""); !errors.Is(err, accounts.ErrBotCheck) {
		t.Fatalf("bad token: %v", err)
	}
	if err := ts.Verify(ctx, "", ""); !errors.Is(err, accounts.ErrBotCheck) {
		t.Fatalf("empty token: %v", err)
	}
	if err := ts.Verify(ctx, "boom", ""); err == nil || errors.Is(err, accounts.ErrBotCheck) {
		t.Fatalf("siteverify outage must be an operational error, got %v", err)
	}
	dev := accounts.DevelopmentBotCheck{}
	if dev.Verify(ctx, accounts.DevelopmentBotToken, "") != nil || dev.Verify(ctx, "XXXX.DUMMY.TOKEN.XXXY", "") == nil {
		t.Fatal("development bot check accepts the wrong tokens")
	}
}
