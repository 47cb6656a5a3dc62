package security_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/test/apitest"
)

// TestTwoFactorRevealsNothingWithoutThePassword: whether an account has
// two-factor sign-in on is learned only with its password. A wrong password,
// with or without a code, and an unknown account answer exactly alike for an
// account with 2FA and one without; and once it is on, no answer carries the
// key again (a second setup is refused without one, the state has none).
func TestTwoFactorRevealsNothingWithoutThePassword(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	guarded := env.Client()
	guarded.Register("guarded")
	env.Client().Register("plain")
	secret := guarded.Do("POST", "/api/auth/2fa/setup", map[string]any{}).Str("secret")
	code, err := accounts.TOTPCode(secret, env.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if res := guarded.Do("POST", "/api/auth/2fa/enable", map[string]any{"code": code, "password": "secret123"}); res.Status != 200 {
		t.Fatalf("enable: %d %s", res.Status, res.Raw)
	}

	login := func(user, password, code string) apitest.Response {
		body := map[string]any{"username": user, "password": password, "turnstileToken": apitest.BotToken}
		if code != "" {
			body["twoFactorCode"] = code
		}
		return env.Client().Do("POST", "/api/auth/login", body)
	}
	for _, code := range []string{"", "000000", "abcde-fghij"} {
		want := login("plain", "wrong123", code)
		if want.Status != 401 {
			t.Fatalf("wrong password: %d %s", want.Status, want.Raw)
		}
		for _, user := range []string{"guarded", "nobody_here"} {
			if got := login(user, "wrong123", code); got.Status != want.Status || string(got.Raw) != string(want.Raw) {
				t.Errorf("%s, wrong password, code %q: %d %s; an account without 2FA: %d %s",
					user, code, got.Status, got.Raw, want.Status, want.Raw)
			}
		}
	}

	again := guarded.Do("POST", "/api/auth/2fa/setup", map[string]any{})
	state := guarded.Do("GET", "/api/auth/2fa", nil)
	user := guarded.Do("GET", "/api/auth/user", nil)
	for name, res := range map[string]apitest.Response{"a second setup": again, "the state": state, "the user": user} {
		if strings.Contains(string(res.Raw), secret) || res.Str("secret") != "" || res.Str("otpauthUrl") != "" {
			t.Errorf("%s carries the key: %d %s", name, res.Status, res.Raw)
		}
	}
	if again.Status != 409 {
		t.Errorf("a second setup while on: %d %s", again.Status, again.Raw)
	}
}

// Whoever holds a player's session for a moment (an unlocked browser) must
// not be able to turn two-factor sign-in on with their own app: the owner
// would be locked out for good, since signing in and turning it off both
// need its codes. Turning it on asks for the current password; without it,
// or with a wrong one, nothing changes and the owner still signs in with
// the password alone. Wrong passwords here count against the
// password-change limit, so the step is no faster way to guess it.
func TestStolenSessionCannotTurnOnTwoFactor(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) {
		c.PasswordChangePerUser = settings.Rate{N: 3, Period: 15 * time.Minute}
	}))
	thief := env.Client()
	thief.Register("victim")
	secret := thief.Do("POST", "/api/auth/2fa/setup", map[string]any{}).Str("secret")
	code, err := accounts.TOTPCode(secret, env.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	enable := func(body map[string]any) apitest.Response {
		return thief.Do("POST", "/api/auth/2fa/enable", body)
	}
	if res := enable(map[string]any{"code": code}); res.Status != 400 || res.Message() != "Current password is required" {
		t.Fatalf("without the password: %d %s", res.Status, res.Raw)
	}
	for i, guess := range []string{"password1", "victim123", "letmein!"} {
		if res := enable(map[string]any{"code": code, "password": guess}); res.Status != 400 || res.Message() != "Current password is incorrect" {
			t.Fatalf("guess %d: %d %s", i+1, res.Status, res.Raw)
		}
	}
	expectRateLimited(t, enable(map[string]any{"code": code, "password": "another"}), "a 4th guess")
	if res := thief.Do("GET", "/api/auth/2fa", nil); res.Status != 200 || res.Get("enabled") != false {
		t.Fatalf("two-factor state after the attempts: %d %s", res.Status, res.Raw)
	}
	if res := env.Client().Do("POST", "/api/auth/login", map[string]any{"username": "victim", "password": "secret123",
		"turnstileToken": apitest.BotToken}); res.Status != 200 || res.Str("token") == "" {
		t.Fatalf("the owner's sign-in without a code: %d %s", res.Status, res.Raw)
	}
}
