// Package settings reads the server's configuration from the environment.
// Every setting has an environment variable (the names DESIGN.md fixes) and a
// default suitable for local development; README.md lists them all.
package settings

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/fairplay/fairplay/internal/money"
)

// Config is the whole server configuration.
type Config struct {
	// HTTPAddr is the listen address (FAIRPLAY_HTTP_ADDR, default ":8080").
	HTTPAddr string
	// MetricsAddr is the internal listener serving Prometheus' /metrics
	// (FAIRPLAY_METRICS_ADDR, default ":9090"). The public HTTPAddr never
	// serves metrics; expose this port to the scraper only.
	MetricsAddr string
	// DebugAddr, when set, serves Go's profiler (net/http/pprof) on its own
	// listener (FAIRPLAY_DEBUG_ADDR, e.g. 127.0.0.1:6060; default off). Keep
	// it on loopback: profiles show internals and cost CPU, so it is not on
	// the metrics listener, which the scraper reaches over the network.
	DebugAddr string
	// DatabaseURL is the Postgres connection string (DATABASE_URL).
	DatabaseURL string
	// RedisURL is the Redis connection URL (REDIS_URL).
	RedisURL string
	// RedisPrefix prefixes every Redis key (FAIRPLAY_REDIS_PREFIX, default "fairplay:").
	RedisPrefix string
	// SigningKeysDir holds the access-token signing keys (FAIRPLAY_SIGNING_KEYS_DIR).
	SigningKeysDir string
	// SigningKeyActivationDelay is how long after its creation (the time in
	// its id) a signing key starts signing; it verifies as soon as it is
	// read (FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY, default 3m, at most
	// 10m). It must exceed the time a new key takes to reach every replica
	// (a mounted Secret: up to about 2 minutes), and whoever retires keys
	// must keep the previous one longer than this delay + the access-token
	// TTL + that propagation time (the operator keeps it 30 minutes).
	SigningKeyActivationDelay time.Duration
	// TurnstileSecretKey enables the real Turnstile check (TURNSTILE_SECRET_KEY).
	TurnstileSecretKey string
	// TurnstileSiteKey is given to the web app (TURNSTILE_SITE_KEY).
	TurnstileSiteKey string
	// TurnstileVerifyURL is the siteverify endpoint (TURNSTILE_VERIFY_URL).
	TurnstileVerifyURL string
	// AdminPassword is the development admin's password (FAIRPLAY_ADMIN_PASSWORD).
	AdminPassword string
	// StartingBalance is granted to every new account (FAIRPLAY_STARTING_BALANCE, default 1000).
	StartingBalance money.Amount
	// Bet limits (play.Limits, checked when the server starts): the minimum
	// bet (FAIRPLAY_MIN_BET, default 0.1), the maximum bet
	// (FAIRPLAY_MAX_BET, default 10000) and the maximum payout of one bet
	// (FAIRPLAY_MAX_PAYOUT, default 1000000).
	MinBet, MaxBet, MaxPayout money.Amount
	// AccessTokenTTL is the access-token lifetime (FAIRPLAY_ACCESS_TOKEN_TTL, default 15m, at most 15m).
	AccessTokenTTL time.Duration
	// SessionIdleTimeout ends sessions unused for this long (FAIRPLAY_SESSION_IDLE_TIMEOUT, default 720h).
	SessionIdleTimeout time.Duration
	// SessionMaxLifetime ends sessions this long after their sign-in,
	// however often they are used (FAIRPLAY_SESSION_MAX_LIFETIME, default 720h).
	SessionMaxLifetime time.Duration
	// Rate limits, each "N/period" (e.g. "10/1m"); "0" disables one.
	LoginPerIP              Rate // FAIRPLAY_RATE_LOGIN_IP, default 30/1m: sign-in attempts per client IP
	LoginPerAccountIP       Rate // FAIRPLAY_RATE_LOGIN_ACCOUNT_IP, default 10/15m: sign-in attempts per login and client IP
	LoginFailuresPerAccount Rate // FAIRPLAY_RATE_LOGIN_ACCOUNT_FAILURES, default 100/1h: failed sign-ins per login, from anywhere
	// TwoFactorFailures bounds wrong two-factor codes per account, at sign-in
	// and in Settings (FAIRPLAY_RATE_2FA_FAILURES, default 10/1h): a
	// six-digit code must not be guessable by volume.
	TwoFactorFailures     Rate
	PasswordChangePerUser Rate // FAIRPLAY_RATE_PASSWORD_USER, default 5/15m: password changes per account
	PasswordChangePerIP   Rate // FAIRPLAY_RATE_PASSWORD_IP, default 20/15m: password changes per client IP
	RegisterPerIP         Rate // FAIRPLAY_RATE_REGISTER_IP, default 10/1h
	// SessionPerIP bounds refreshes and sign-outs per client IP
	// (FAIRPLAY_RATE_SESSION_IP, default 300/1m): both are public, each a
	// transaction on the pool, so an address sending made-up tokens is
	// bounded as sign-in is.
	SessionPerIP Rate
	BetsPerUser  Rate // FAIRPLAY_RATE_BETS_USER, default 50/1s
	// TrustedProxies lists CIDRs whose X-Forwarded-For is believed (FAIRPLAY_TRUSTED_PROXIES, comma separated).
	TrustedProxies []string
	// TraceParents lists CIDRs whose W3C traceparent is believed
	// (FAIRPLAY_TRACE_PARENTS, comma separated); anyone else's request
	// starts a trace of its own.
	TraceParents []string
	// SecureCookies marks cookies Secure (FAIRPLAY_SECURE_COOKIES, default false).
	SecureCookies bool
	// AdminRequireTwoFactor refuses the admin dashboard's procedures to an
	// admin without two-factor sign-in (FAIRPLAY_ADMIN_REQUIRE_2FA, default false).
	AdminRequireTwoFactor bool
	// LogLevel is debug, info, warn or error (FAIRPLAY_LOG_LEVEL, default info).
	LogLevel string
	// LogFormat is json or text (FAIRPLAY_LOG_FORMAT, default json).
	LogFormat string
	// ShutdownTimeout bounds graceful shutdown (FAIRPLAY_SHUTDOWN_TIMEOUT, default 20s).
	ShutdownTimeout time.Duration
	// DrainDelay is how long the server keeps serving after SIGTERM, not
	// ready and answering with Connection: close, before it shuts down: the
	// time load balancers and kube-proxy take to stop sending it requests
	// (FAIRPLAY_DRAIN_DELAY, default 10s; 0 shuts down at once, which
	// `make run` uses). A pod's terminationGracePeriodSeconds must exceed
	// DrainDelay + ShutdownTimeout.
	DrainDelay time.Duration
	// Readiness: the server pings Postgres every ReadinessInterval
	// (FAIRPLAY_READINESS_INTERVAL, default 2s); /readyz turns 503 after
	// ReadinessFailures failed pings in a row (FAIRPLAY_READINESS_FAILURES,
	// default 3) and 200 again after ReadinessSuccesses answered ones
	// (FAIRPLAY_READINESS_SUCCESSES, default 2). Redis is not part of it.
	ReadinessInterval                     time.Duration
	ReadinessFailures, ReadinessSuccesses int
	// TopUpAmount is the daily top-up a player whose balance is below the
	// minimum bet may claim (FAIRPLAY_TOPUP_AMOUNT, default 100; 0 turns
	// top-ups off), at most once per TopUpInterval
	// (FAIRPLAY_TOPUP_INTERVAL, default 24h).
	TopUpAmount   money.Amount
	TopUpInterval time.Duration
	// LiveMaxWatchers bounds the live-bets streams one replica serves at
	// once (FAIRPLAY_LIVE_MAX_WATCHERS, default 500); more are refused
	// with 503.
	LiveMaxWatchers int
	// LiveMaxWatchersPerIP bounds the streams of one client address (an
	// IPv6 client's /64) on one replica (FAIRPLAY_LIVE_MAX_WATCHERS_PER_IP,
	// default 20), so one client cannot take every place; more are refused
	// with 429.
	LiveMaxWatchersPerIP int
}

// Rate is a limit of N events per Period; N == 0 means unlimited.
type Rate struct {
	N      int
	Period time.Duration
}

// String formats the rate as N/period.
func (r Rate) String() string {
	if r.N == 0 {
		return "0"
	}
	return fmt.Sprintf("%d/%s", r.N, r.Period)
}

// ParseRate parses "N/period" such as "30/1m", or "0" for unlimited.
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return Rate{}, nil
	}
	n, p, ok := strings.Cut(s, "/")
	if !ok {
		return Rate{}, fmt.Errorf("rate %q: want N/period, e.g. 10/1m", s)
	}
	count, err := strconv.Atoi(n)
	if err != nil || count < 0 {
		return Rate{}, fmt.Errorf("rate %q: bad count", s)
	}
	period, err := time.ParseDuration(p)
	if err != nil || period <= 0 {
		return Rate{}, fmt.Errorf("rate %q: bad period", s)
	}
	return Rate{N: count, Period: period}, nil
}

// Variable is one environment variable of the configuration.
type Variable struct {
	// Name is the variable's name.
	Name string
	// Default is the value an unset or empty variable takes; "" means off
	// (or, for DATABASE_URL and REDIS_URL, required by the commands that
	// connect).
	Default string
	// Usage says in a few words what it sets (README.md says more).
	Usage string
}

// Variables lists every variable Load reads, with its default: Load takes
// its defaults from here and a test checks that it reads exactly these, so
// `fairplay --help` (which prints them) cannot drift from the code.
var Variables = []Variable{
	{"DATABASE_URL", "", "Postgres connection string (required)"},
	{"REDIS_URL", "", "Redis URL, e.g. redis://127.0.0.1:6379/0 (required by serve)"},
	{"FAIRPLAY_HTTP_ADDR", ":8080", "public listen address: web app, /api, Connect, /healthz, /readyz"},
	{"FAIRPLAY_METRICS_ADDR", ":9090", "internal listener serving only GET /metrics"},
	{"FAIRPLAY_DEBUG_ADDR", "", "serve Go's profiler (/debug/pprof/) here; loopback only"},
	{"FAIRPLAY_SIGNING_KEYS_DIR", "", "directory of Ed25519 signing keys; unset: one in-memory key"},
	{"FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY", "3m", "a new key signs this long after its creation (at most 10m)"},
	{"TURNSTILE_SECRET_KEY", "", "Cloudflare Turnstile secret; unset: development bot check"},
	{"TURNSTILE_SITE_KEY", "", "Turnstile site key given to the web app"},
	{"TURNSTILE_VERIFY_URL", "https://challenges.cloudflare.com/turnstile/v0/siteverify", "Turnstile siteverify endpoint"},
	{"FAIRPLAY_ADMIN_PASSWORD", "", "the development admin's password (admin create); unset: generated"},
	{"FAIRPLAY_STARTING_BALANCE", "1000", "play money granted to each new account"},
	{"FAIRPLAY_MIN_BET", "0.1", "the smallest stake (whole cents)"},
	{"FAIRPLAY_MAX_BET", "10000", "the largest stake"},
	{"FAIRPLAY_MAX_PAYOUT", "1000000", "the most one bet pays"},
	{"FAIRPLAY_TOPUP_AMOUNT", "100", "daily top-up for a player below the minimum bet; 0 turns top-ups off"},
	{"FAIRPLAY_TOPUP_INTERVAL", "24h", "the least time between two top-ups of a player"},
	{"FAIRPLAY_LIVE_MAX_WATCHERS", "500", "live bets streams one replica serves at once"},
	{"FAIRPLAY_LIVE_MAX_WATCHERS_PER_IP", "20", "live bets streams one replica serves one client address (an IPv6 /64) at once"},
	{"FAIRPLAY_ACCESS_TOKEN_TTL", "15m", "access-token lifetime (at most 15m)"},
	{"FAIRPLAY_SESSION_IDLE_TIMEOUT", "720h", "sessions unused this long expire"},
	{"FAIRPLAY_SESSION_MAX_LIFETIME", "720h", "sessions end this long after their sign-in"},
	{"FAIRPLAY_RATE_LOGIN_IP", "30/1m", "sign-in attempts per client IP (N/period, 0 = off)"},
	{"FAIRPLAY_RATE_LOGIN_ACCOUNT_IP", "10/15m", "sign-in attempts per login and client IP"},
	{"FAIRPLAY_RATE_LOGIN_ACCOUNT_FAILURES", "100/1h", "failed sign-ins per login, from anywhere"},
	{"FAIRPLAY_RATE_2FA_FAILURES", "10/1h", "wrong two-factor codes per account (sign-in and Settings)"},
	{"FAIRPLAY_RATE_PASSWORD_USER", "5/15m", "password changes per account"},
	{"FAIRPLAY_RATE_PASSWORD_IP", "20/15m", "password changes per client IP"},
	{"FAIRPLAY_RATE_REGISTER_IP", "10/1h", "registrations per client IP"},
	{"FAIRPLAY_RATE_SESSION_IP", "300/1m", "token refreshes and sign-outs per client IP"},
	{"FAIRPLAY_RATE_BETS_USER", "50/1s", "bets per player"},
	{"FAIRPLAY_TRUSTED_PROXIES", "", "comma-separated CIDRs whose X-Forwarded-For is believed"},
	{"FAIRPLAY_TRACE_PARENTS", "", "comma-separated CIDRs whose traceparent a request's trace continues"},
	{"FAIRPLAY_SECURE_COOKIES", "false", "served over HTTPS: Secure cookies and HSTS"},
	{"FAIRPLAY_ADMIN_REQUIRE_2FA", "false", "admins must turn on two-factor sign-in before using the dashboard"},
	{"FAIRPLAY_REDIS_PREFIX", "fairplay:", "prefix of every Redis key"},
	{"FAIRPLAY_LOG_LEVEL", "info", "debug, info, warn or error"},
	{"FAIRPLAY_LOG_FORMAT", "json", "json, or text for humans"},
	{"FAIRPLAY_DRAIN_DELAY", "10s", "after SIGTERM, keep serving (not ready) this long; 0 = stop at once"},
	{"FAIRPLAY_SHUTDOWN_TIMEOUT", "20s", "after the drain, how long requests in flight get to finish"},
	{"FAIRPLAY_READINESS_INTERVAL", "2s", "how often the server pings Postgres for /readyz"},
	{"FAIRPLAY_READINESS_FAILURES", "3", "failed pings in a row before /readyz turns 503 (1-100)"},
	{"FAIRPLAY_READINESS_SUCCESSES", "2", "answered pings in a row before /readyz turns 200 again (1-100)"},
}

// defaultOf is the default of a variable of Variables.
func defaultOf(name string) string {
	v, _ := Var(name)
	return v.Default
}

// Var returns the entry of Variables named name.
func Var(name string) (Variable, bool) {
	for _, v := range Variables {
		if v.Name == name {
			return v, true
		}
	}
	return Variable{}, false
}

// FromEnv reads the configuration from the process environment.
func FromEnv() (Config, error) { return Load(os.LookupEnv) }

// Load reads the configuration through lookup (os.LookupEnv in production).
func Load(lookup func(string) (string, bool)) (Config, error) {
	// get reads a variable of Variables, or its default when unset or
	// empty. A name missing from Variables is a programming error: every
	// test that loads a configuration panics on it.
	get := func(name string) string {
		if v, ok := lookup(name); ok && v != "" {
			return v
		}
		v, ok := Var(name)
		if !ok {
			panic("settings: " + name + " is not in settings.Variables")
		}
		return v.Default
	}
	var errs []error
	dur := func(name string) time.Duration {
		d, err := time.ParseDuration(get(name))
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s: want a positive duration such as 15m", name))
		}
		return d
	}
	rate := func(name string) Rate {
		r, err := ParseRate(get(name))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		return r
	}
	// nonNegative is dur that also takes 0 (off).
	nonNegative := func(name string) time.Duration {
		d, err := time.ParseDuration(get(name))
		if err != nil || d < 0 {
			errs = append(errs, fmt.Errorf("%s: want a duration such as 10s, or 0", name))
		}
		return d
	}
	count := func(name string, maxN int) int {
		n, err := strconv.Atoi(get(name))
		if err != nil || n < 1 || n > maxN {
			errs = append(errs, fmt.Errorf("%s: want a whole number from 1 to %d", name, maxN))
		}
		return n
	}
	boolean := func(name string) bool {
		b, err := strconv.ParseBool(get(name))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: want true or false", name))
		}
		return b
	}

	c := Config{
		HTTPAddr:                  get("FAIRPLAY_HTTP_ADDR"),
		DebugAddr:                 get("FAIRPLAY_DEBUG_ADDR"),
		DatabaseURL:               get("DATABASE_URL"),
		RedisURL:                  get("REDIS_URL"),
		RedisPrefix:               get("FAIRPLAY_REDIS_PREFIX"),
		SigningKeysDir:            get("FAIRPLAY_SIGNING_KEYS_DIR"),
		SigningKeyActivationDelay: dur("FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY"),
		TurnstileSecretKey:        get("TURNSTILE_SECRET_KEY"),
		TurnstileSiteKey:          get("TURNSTILE_SITE_KEY"),
		TurnstileVerifyURL:        get("TURNSTILE_VERIFY_URL"),
		AdminPassword:             get("FAIRPLAY_ADMIN_PASSWORD"),
		AccessTokenTTL:            dur("FAIRPLAY_ACCESS_TOKEN_TTL"),
		SessionIdleTimeout:        dur("FAIRPLAY_SESSION_IDLE_TIMEOUT"),
		SessionMaxLifetime:        dur("FAIRPLAY_SESSION_MAX_LIFETIME"),
		LoginPerIP:                rate("FAIRPLAY_RATE_LOGIN_IP"),
		LoginPerAccountIP:         rate("FAIRPLAY_RATE_LOGIN_ACCOUNT_IP"),
		LoginFailuresPerAccount:   rate("FAIRPLAY_RATE_LOGIN_ACCOUNT_FAILURES"),
		TwoFactorFailures:         rate("FAIRPLAY_RATE_2FA_FAILURES"),
		PasswordChangePerUser:     rate("FAIRPLAY_RATE_PASSWORD_USER"),
		PasswordChangePerIP:       rate("FAIRPLAY_RATE_PASSWORD_IP"),
		RegisterPerIP:             rate("FAIRPLAY_RATE_REGISTER_IP"),
		SessionPerIP:              rate("FAIRPLAY_RATE_SESSION_IP"),
		BetsPerUser:               rate("FAIRPLAY_RATE_BETS_USER"),
		SecureCookies:             boolean("FAIRPLAY_SECURE_COOKIES"),
		AdminRequireTwoFactor:     boolean("FAIRPLAY_ADMIN_REQUIRE_2FA"),
		LogLevel:                  get("FAIRPLAY_LOG_LEVEL"),
		LogFormat:                 get("FAIRPLAY_LOG_FORMAT"),
		ShutdownTimeout:           dur("FAIRPLAY_SHUTDOWN_TIMEOUT"),
		DrainDelay:                nonNegative("FAIRPLAY_DRAIN_DELAY"),
		ReadinessInterval:         dur("FAIRPLAY_READINESS_INTERVAL"),
		ReadinessFailures:         count("FAIRPLAY_READINESS_FAILURES", 100),
		ReadinessSuccesses:        count("FAIRPLAY_READINESS_SUCCESSES", 100),
		TopUpInterval:             dur("FAIRPLAY_TOPUP_INTERVAL"),
		LiveMaxWatchers:           count("FAIRPLAY_LIVE_MAX_WATCHERS", 100_000),
		LiveMaxWatchersPerIP:      count("FAIRPLAY_LIVE_MAX_WATCHERS_PER_IP", 100_000),
	}
	// The per-username limit counted every attempt, so anyone could lock an
	// owner out; refuse to start rather than silently drop a setting an
	// operator believes is in force.
	if v, _ := lookup("FAIRPLAY_RATE_LOGIN_USERNAME"); v != "" {
		errs = append(errs, errors.New("FAIRPLAY_RATE_LOGIN_USERNAME is no longer read: use FAIRPLAY_RATE_LOGIN_ACCOUNT_IP "+
			"(sign-in attempts per login and client IP) and FAIRPLAY_RATE_LOGIN_ACCOUNT_FAILURES (failed sign-ins per login)"))
	}
	c.TrustedProxies = cidrList(get("FAIRPLAY_TRUSTED_PROXIES"))
	c.TraceParents = cidrList(get("FAIRPLAY_TRACE_PARENTS"))
	bal, err := money.Parse(get("FAIRPLAY_STARTING_BALANCE"))
	if err != nil || bal < 0 {
		errs = append(errs, errors.New("FAIRPLAY_STARTING_BALANCE: want a non-negative amount such as 1000"))
	}
	c.StartingBalance = bal
	amount := func(name string) money.Amount {
		a, err := money.Parse(get(name))
		if err != nil || a <= 0 {
			errs = append(errs, fmt.Errorf("%s: want a positive amount such as %s", name, defaultOf(name)))
		}
		return a
	}
	c.MinBet = amount("FAIRPLAY_MIN_BET")
	topUp, err := money.Parse(get("FAIRPLAY_TOPUP_AMOUNT"))
	if err != nil || topUp < 0 || topUp%money.FromCents(1) != 0 || topUp > money.Dollars(1_000_000) {
		errs = append(errs, errors.New("FAIRPLAY_TOPUP_AMOUNT: want an amount in whole cents from 0 (off) to 1000000, such as 100"))
	}
	c.TopUpAmount = topUp
	c.MaxBet = amount("FAIRPLAY_MAX_BET")
	c.MaxPayout = amount("FAIRPLAY_MAX_PAYOUT")
	if c.AccessTokenTTL > 15*time.Minute {
		errs = append(errs, errors.New("FAIRPLAY_ACCESS_TOKEN_TTL: at most 15m"))
	}
	if c.SigningKeyActivationDelay > 10*time.Minute {
		// The operator retires a key 30 minutes after its successor: the
		// delay + a 15-minute token TTL + Secret propagation must fit.
		errs = append(errs, errors.New("FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY: at most 10m "+
			"(the previous key is retired 30m after its successor: the delay, the token TTL and Secret propagation must fit in that)"))
	}
	if c.DebugAddr != "" && !loopback(c.DebugAddr) {
		// The profiler has no authentication and shows internals; where a
		// pod has no NetworkPolicy any pod could read it. kubectl
		// port-forward reaches a pod's loopback, so nothing needs more.
		errs = append(errs, errors.New("FAIRPLAY_DEBUG_ADDR: want a loopback address such as 127.0.0.1:6060 or [::1]:6060 "+
			"(the profiler has no authentication; kubectl port-forward reaches it there)"))
	}
	c.MetricsAddr = get("FAIRPLAY_METRICS_ADDR")
	if c.MetricsAddr == c.HTTPAddr && !strings.HasSuffix(c.HTTPAddr, ":0") {
		errs = append(errs, errors.New("FAIRPLAY_METRICS_ADDR: must differ from FAIRPLAY_HTTP_ADDR (metrics are never served on the public port)"))
	}
	switch c.LogFormat {
	case "json", "text":
	default:
		errs = append(errs, errors.New("FAIRPLAY_LOG_FORMAT: want json or text"))
	}
	return c, errors.Join(errs...)
}

// Require reports the settings a command needs but lacks.
func (c Config) Require(names ...string) error {
	var errs []error
	for _, n := range names {
		var v string
		switch n {
		case "DATABASE_URL":
			v = c.DatabaseURL
		case "REDIS_URL":
			v = c.RedisURL
		default:
			return fmt.Errorf("settings: unknown required setting %s", n)
		}
		if v == "" {
			errs = append(errs, fmt.Errorf("%s is not set", n))
		}
	}
	return errors.Join(errs...)
}

// loopback reports whether addr (host:port) listens on loopback only: a
// loopback IP or localhost, never every interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// cidrList splits a comma-separated list, dropping blanks (the caller
// parses each).
func cidrList(v string) []string {
	var out []string
	for p := range strings.SplitSeq(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
