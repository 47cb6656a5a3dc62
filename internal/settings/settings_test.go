package settings_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fairplay/fairplay/internal/settings"
)

func load(env map[string]string) (settings.Config, error) {
	return settings.Load(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
}

func TestAccountLimitDefaults(t *testing.T) {
	t.Parallel()
	c, err := load(nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]settings.Rate{
		"login per IP":               c.LoginPerIP,
		"login per account and IP":   c.LoginPerAccountIP,
		"login failures per account": c.LoginFailuresPerAccount,
		"password changes per user":  c.PasswordChangePerUser,
		"password changes per IP":    c.PasswordChangePerIP,
	} {
		want := map[string]settings.Rate{
			"login per IP":               {N: 30, Period: time.Minute},
			"login per account and IP":   {N: 10, Period: 15 * time.Minute},
			"login failures per account": {N: 100, Period: time.Hour},
			"password changes per user":  {N: 5, Period: 15 * time.Minute},
			"password changes per IP":    {N: 20, Period: 15 * time.Minute},
		}[name]
		if got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	if c.SessionMaxLifetime != 720*time.Hour || c.SessionIdleTimeout != 720*time.Hour {
		t.Errorf("session lifetime %v, idle timeout %v; want 720h each", c.SessionMaxLifetime, c.SessionIdleTimeout)
	}
	c, err = load(map[string]string{"FAIRPLAY_RATE_LOGIN_ACCOUNT_IP": "0", "FAIRPLAY_RATE_PASSWORD_USER": "3/1h",
		"FAIRPLAY_SESSION_MAX_LIFETIME": "168h"})
	if err != nil || c.LoginPerAccountIP.N != 0 || c.PasswordChangePerUser != (settings.Rate{N: 3, Period: time.Hour}) ||
		c.SessionMaxLifetime != 168*time.Hour {
		t.Fatalf("overrides: %+v %v", c, err)
	}
}

func TestBadAccountSettingsAreRefused(t *testing.T) {
	t.Parallel()
	for name, env := range map[string]map[string]string{
		"the old per-username limit": {"FAIRPLAY_RATE_LOGIN_USERNAME": "10/1m"},
		"a bad failure limit":        {"FAIRPLAY_RATE_LOGIN_ACCOUNT_FAILURES": "100"},
		"a bad password limit":       {"FAIRPLAY_RATE_PASSWORD_IP": "x/1m"},
		"a zero session lifetime":    {"FAIRPLAY_SESSION_MAX_LIFETIME": "0s"},
	} {
		if _, err := load(env); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			for k := range env {
				if !strings.Contains(err.Error(), k) {
					t.Errorf("%s: the error does not name %s: %v", name, k, err)
				}
			}
		}
	}
}

func TestSigningKeyActivationDelay(t *testing.T) {
	t.Parallel()
	c, err := load(nil)
	if err != nil || c.SigningKeyActivationDelay != 3*time.Minute {
		t.Fatalf("default activation delay %v (%v), want 3m", c.SigningKeyActivationDelay, err)
	}
	c, err = load(map[string]string{"FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY": "5m"})
	if err != nil || c.SigningKeyActivationDelay != 5*time.Minute {
		t.Fatalf("activation delay 5m: %v (%v)", c.SigningKeyActivationDelay, err)
	}
	for _, bad := range []string{"0s", "-1m", "soon", "11m"} {
		_, err := load(map[string]string{"FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY": bad})
		if err == nil || !strings.Contains(err.Error(), "FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY") {
			t.Errorf("activation delay %q: %v", bad, err)
		}
	}
}

// The profiler listens on loopback only: it has no authentication, and a
// pod without a NetworkPolicy would serve it to every pod of the cluster.
func TestDebugAddrIsLoopback(t *testing.T) {
	t.Parallel()
	for _, good := range []string{"127.0.0.1:6060", "[::1]:6060", "localhost:6060", "127.0.0.2:0"} {
		if c, err := load(map[string]string{"FAIRPLAY_DEBUG_ADDR": good}); err != nil || c.DebugAddr != good {
			t.Errorf("debug address %q: %v", good, err)
		}
	}
	for _, bad := range []string{":6060", "0.0.0.0:6060", "[::]:6060", "10.0.0.5:6060", "pod.example:6060", "127.0.0.1"} {
		_, err := load(map[string]string{"FAIRPLAY_DEBUG_ADDR": bad})
		if err == nil || !strings.Contains(err.Error(), "FAIRPLAY_DEBUG_ADDR: want a loopback address") {
			t.Errorf("debug address %q: %v, want refused", bad, err)
		}
	}
}

func TestDrainAndReadinessSettings(t *testing.T) {
	t.Parallel()
	c, err := load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.DrainDelay != 10*time.Second || c.ShutdownTimeout != 20*time.Second {
		t.Errorf("drain delay %v, shutdown timeout %v; want 10s and 20s", c.DrainDelay, c.ShutdownTimeout)
	}
	if c.ReadinessInterval != 2*time.Second || c.ReadinessFailures != 3 || c.ReadinessSuccesses != 2 {
		t.Errorf("readiness every %v, down after %d, up after %d; want 2s, 3, 2", c.ReadinessInterval, c.ReadinessFailures, c.ReadinessSuccesses)
	}
	c, err = load(map[string]string{"FAIRPLAY_DRAIN_DELAY": "0", "FAIRPLAY_READINESS_INTERVAL": "500ms",
		"FAIRPLAY_READINESS_FAILURES": "5", "FAIRPLAY_READINESS_SUCCESSES": "1"})
	if err != nil || c.DrainDelay != 0 || c.ReadinessInterval != 500*time.Millisecond || c.ReadinessFailures != 5 || c.ReadinessSuccesses != 1 {
		t.Fatalf("overrides: %v %v %d %d (%v)", c.DrainDelay, c.ReadinessInterval, c.ReadinessFailures, c.ReadinessSuccesses, err)
	}
	for name, env := range map[string]map[string]string{
		"a negative drain delay":    {"FAIRPLAY_DRAIN_DELAY": "-1s"},
		"a drain delay in words":    {"FAIRPLAY_DRAIN_DELAY": "ten seconds"},
		"a zero readiness interval": {"FAIRPLAY_READINESS_INTERVAL": "0s"},
		"zero failures":             {"FAIRPLAY_READINESS_FAILURES": "0"},
		"a fractional success":      {"FAIRPLAY_READINESS_SUCCESSES": "1.5"},
		"a huge failure count":      {"FAIRPLAY_READINESS_FAILURES": "1000"},
	} {
		_, err := load(env)
		for k := range env {
			if err == nil || !strings.Contains(err.Error(), k) {
				t.Errorf("%s: %v, want an error naming %s", name, err, k)
			}
		}
	}
}

// TestVariablesAreWhatLoadReads: Load reads exactly the variables of
// settings.Variables (plus the retired one it refuses), each once, so the
// list `fairplay --help` prints cannot miss one or name one nobody reads;
// every default loads, and README.md's configuration table has every name.
func TestVariablesAreWhatLoadReads(t *testing.T) {
	t.Parallel()
	read := map[string]int{}
	if _, err := settings.Load(func(k string) (string, bool) { read[k]++; return "", false }); err != nil {
		t.Fatalf("the defaults do not load: %v", err)
	}
	delete(read, "FAIRPLAY_RATE_LOGIN_USERNAME") // retired: set, it stops the server
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, v := range settings.Variables {
		if listed[v.Name] {
			t.Errorf("%s is listed twice", v.Name)
		}
		listed[v.Name] = true
		if read[v.Name] == 0 {
			t.Errorf("%s is in settings.Variables but Load never reads it", v.Name)
		}
		if v.Usage == "" {
			t.Errorf("%s has no usage text", v.Name)
		}
		if !strings.Contains(string(readme), "| `"+v.Name+"`") && !strings.Contains(string(readme), "/ `"+v.Name+"`") {
			t.Errorf("README.md's configuration table lacks %s", v.Name)
		}
	}
	for name, n := range read {
		if !listed[name] {
			t.Errorf("Load reads %s, which settings.Variables lacks", name)
		}
		if n != 1 {
			t.Errorf("Load reads %s %d times", name, n)
		}
	}
}
