package api

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/settings"
	"github.com/fairplay/fairplay/test/apitest"
)

func totp(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	code, err := accounts.TOTPCode(secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// TestTwoFactor walks two-factor sign-in from setup to turning it off: a
// code confirms the key, sign-in then asks for a code, each code works once
// (TOTP and recovery codes alike), and turning it off takes a code.
func TestTwoFactor(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t)
	c := env.Client()
	c.Register("twofa")
	login := func(code string) apitest.Response {
		body := map[string]any{"username": "twofa", "password": "secret123", "turnstileToken": apitest.BotToken}
		if code != "" {
			body["twoFactorCode"] = code
		}
		return env.Client().Do("POST", "/api/auth/login", body)
	}
	expect := func(what string, res apitest.Response, status int, message string) {
		t.Helper()
		if res.Status != status || (message != "" && res.Message() != message) {
			t.Fatalf("%s: %d %s, want %d %q", what, res.Status, res.Raw, status, message)
		}
	}

	if res := c.Do("GET", "/api/auth/2fa", nil); res.Status != 200 || res.Get("enabled") != false || res.Get("user.twoFactorEnabled") != nil {
		t.Fatalf("state before: %d %s", res.Status, res.Raw)
	}
	expect("enable before setup", c.Do("POST", "/api/auth/2fa/enable", map[string]any{"code": "123456", "password": "secret123"}), 409,
		"Start the two-factor setup again: it was not found or has changed")
	expect("disable while off", c.Do("POST", "/api/auth/2fa/disable", map[string]any{"code": "123456", "password": "secret123"}), 409,
		"Two-factor authentication is not on")

	setup := c.Do("POST", "/api/auth/2fa/setup", map[string]any{})
	secret := setup.Str("secret")
	if setup.Status != 200 || len(secret) != 32 || !strings.HasPrefix(setup.Str("qrPath"), "M0 0h7v1h-7z") || !strings.HasPrefix(setup.Str("otpauthUrl"), "otpauth://totp/Fairplay:twofa?") {
		t.Fatalf("setup: %d %s", setup.Status, setup.Raw)
	}
	expect("enable without a code", c.Do("POST", "/api/auth/2fa/enable", map[string]any{}), 400, "Enter the code from your authenticator app")
	expect("enable without the password", c.Do("POST", "/api/auth/2fa/enable", map[string]any{"code": "123456"}), 400,
		"Current password is required")
	expect("enable with a wrong password", c.Do("POST", "/api/auth/2fa/enable", map[string]any{"code": totp(t, secret, env.Clock.Now()), "password": "secret124"}),
		400, "Current password is incorrect")
	expect("enable with a wrong code", c.Do("POST", "/api/auth/2fa/enable", map[string]any{"code": "000000", "password": "secret123"}), 400, "Invalid two-factor code")
	if res := login(""); res.Status != 200 || res.Str("token") == "" {
		t.Fatalf("an unconfirmed setup changes sign-in: %d %s", res.Status, res.Raw)
	}

	now := env.Clock.Now()
	on := c.Do("POST", "/api/auth/2fa/enable", map[string]any{"code": totp(t, secret, now), "password": "secret123"})
	if on.Status != 200 || on.Get("user.twoFactorEnabled") != true {
		t.Fatalf("enable: %d %s", on.Status, on.Raw)
	}
	codes, _ := on.Get("recoveryCodes").([]any)
	if len(codes) != 10 {
		t.Fatalf("recovery codes: %v", codes)
	}
	expect("setup while on", c.Do("POST", "/api/auth/2fa/setup", map[string]any{}), 409, "Two-factor authentication is already on")
	if res := c.Do("GET", "/api/auth/2fa", nil); res.Get("enabled") != true || fmt.Sprint(res.Get("recoveryCodesLeft")) != "10" {
		t.Fatalf("state after: %s", res.Raw)
	}

	// Sign-in now stops after the password.
	if res := login(""); res.Status != 200 || res.Get("twoFactorRequired") != true || res.Str("token") != "" || res.Get("user") != nil {
		t.Fatalf("login without a code: %d %s", res.Status, res.Raw)
	}
	expect("wrong password with a code", env.Client().Do("POST", "/api/auth/login", map[string]any{
		"username": "twofa", "password": "wrong123", "turnstileToken": apitest.BotToken, "twoFactorCode": totp(t, secret, now),
	}), 401, "Invalid username or password")
	expect("login with the code that enabled it", login(totp(t, secret, now)), 400, "This code was already used, wait for the next one")
	expect("login with a wrong code", login("000000"), 401, "Invalid two-factor code")
	next := totp(t, secret, now.Add(30*time.Second)) // the next step: within the window
	if res := login(next); res.Status != 200 || res.Str("token") == "" || res.Get("user.twoFactorEnabled") != true {
		t.Fatalf("login with the next code: %d %s", res.Status, res.Raw)
	}
	expect("the same code again", login(next), 400, "This code was already used, wait for the next one")

	// A recovery code works once, in any case, with or without its dash.
	code := codes[0].(string)
	if res := login(strings.ToUpper(strings.ReplaceAll(code, "-", ""))); res.Status != 200 || res.Str("token") == "" {
		t.Fatalf("login with a recovery code: %d %s", res.Status, res.Raw)
	}
	expect("a spent recovery code", login(code), 401, "Invalid two-factor code")
	if res := c.Do("GET", "/api/auth/2fa", nil); fmt.Sprint(res.Get("recoveryCodesLeft")) != "9" {
		t.Fatalf("codes left: %s", res.Raw)
	}

	// Turning it off takes the password and a code.
	expect("disable without the password", c.Do("POST", "/api/auth/2fa/disable", map[string]any{"code": codes[1]}), 400,
		"Current password is required")
	expect("disable with a wrong password", c.Do("POST", "/api/auth/2fa/disable", map[string]any{"code": codes[1], "password": "guess"}),
		400, "Current password is incorrect")
	expect("disable with a wrong code", c.Do("POST", "/api/auth/2fa/disable", map[string]any{"code": "000000", "password": "secret123"}),
		400, "Invalid two-factor code")
	off := c.Do("POST", "/api/auth/2fa/disable", map[string]any{"code": codes[1], "password": "secret123"})
	if off.Status != 200 || off.Message() != "Two-factor authentication is off" || off.Get("user.twoFactorEnabled") != false {
		t.Fatalf("disable: %d %s", off.Status, off.Raw)
	}
	if res := login(""); res.Status != 200 || res.Str("token") == "" {
		t.Fatalf("login after turning it off: %d %s", res.Status, res.Raw)
	}
}

// TestTwoFactorGuessingIsBounded: wrong codes count per account
// (FAIRPLAY_RATE_2FA_FAILURES), and once spent even the right code is
// refused, so six digits cannot be guessed by volume.
func TestTwoFactorGuessingIsBounded(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) {
		c.TwoFactorFailures = settings.Rate{N: 3, Period: time.Hour}
	}))
	c := env.Client()
	c.Register("guessed")
	secret := c.Do("POST", "/api/auth/2fa/setup", map[string]any{}).Str("secret")
	if res := c.Do("POST", "/api/auth/2fa/enable", map[string]any{"code": totp(t, secret, env.Clock.Now()), "password": "secret123"}); res.Status != 200 {
		t.Fatalf("enable: %d %s", res.Status, res.Raw)
	}
	try := func(code string) apitest.Response {
		return env.Client().Do("POST", "/api/auth/login", map[string]any{
			"username": "guessed", "password": "secret123", "turnstileToken": apitest.BotToken, "twoFactorCode": code})
	}
	for i := range 3 {
		if res := try("000000"); res.Status != 401 {
			t.Fatalf("guess %d: %d %s", i+1, res.Status, res.Raw)
		}
	}
	res := try(totp(t, secret, env.Clock.Now().Add(30*time.Second)))
	if res.Status != 429 || res.Str("token") != "" {
		t.Fatalf("the right code after the limit: %d %s", res.Status, res.Raw)
	}
}

// TestAdminRequiresTwoFactor: with FAIRPLAY_ADMIN_REQUIRE_2FA an admin
// signs in but may use the dashboard only once two-factor sign-in is on.
func TestAdminRequiresTwoFactor(t *testing.T) {
	t.Parallel()
	env := apitest.Start(t, apitest.WithConfig(func(c *settings.Config) { c.AdminRequireTwoFactor = true }))
	if _, _, err := env.App.Accounts.CreateAdmin(t.Context(), "chief", "chief@example.com", "secret123", false); err != nil {
		t.Fatal(err)
	}
	a := env.Client()
	a.Login("chief", "secret123")
	if res := a.Do("GET", "/api/auth/stats/users", nil); res.Status != 403 ||
		res.Message() != "Admin accounts must turn on two-factor authentication in Settings first" {
		t.Fatalf("admin without 2FA: %d %s", res.Status, res.Raw)
	}
	secret := a.Do("POST", "/api/auth/2fa/setup", map[string]any{}).Str("secret")
	if res := a.Do("POST", "/api/auth/2fa/enable", map[string]any{"code": totp(t, secret, env.Clock.Now()), "password": "secret123"}); res.Status != 200 {
		t.Fatalf("enable: %d %s", res.Status, res.Raw)
	}
	if res := a.Do("GET", "/api/auth/stats/users", nil); res.Status != 200 {
		t.Fatalf("admin with 2FA: %d %s", res.Status, res.Raw)
	}
}
