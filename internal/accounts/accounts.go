// Package accounts holds the account use cases: registration, sign-in,
// access and refresh tokens, sessions, password changes and the bot check.
// It declares the Store it needs (implemented by internal/postgres) and the
// errors users see; it knows nothing of HTTP, Connect or SQL.
package accounts

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/problem"
	"github.com/fairplay/fairplay/internal/settings"
)

// User is an account.
type User struct {
	ID        uuid.UUID
	Username  string
	Email     string
	Balance   money.Amount
	IsAdmin   bool
	CreatedAt time.Time
	// HideUsername keeps the name off the live bets feed ("Hidden").
	HideUsername bool
	// TwoFactor is whether sign-in asks for a TOTP code (or a recovery code).
	TwoFactor bool
}

// Preferences are the settings a player changes about their own account;
// a nil field is left as it is.
type Preferences struct {
	// HideUsername keeps the player's name off the live bets feed.
	HideUsername *bool
}

// Credentials is a user with the stored password hash, for sign-in.
type Credentials struct {
	User
	PasswordHash string
}

// Checked is what a sign-in checked: the password hash it verified the
// password against, and the two-factor key it checked a code against (nil
// when two-factor sign-in was off and no code was asked).
type Checked struct {
	PasswordHash string
	TwoFactorKey []byte
}

// SessionOpened is OpenSession's answer: whether the session was stored and,
// when it was not, whether the user is still live with the checked password
// hash and whether two-factor sign-in is on now.
type SessionOpened struct {
	Opened       bool
	SamePassword bool
	TwoFactor    bool
}

// Session is one signed-in device of a user.
type Session struct {
	ID         uuid.UUID
	UserID     uuid.UUID
	IPAddress  string
	UserAgent  string
	CreatedAt  time.Time
	LastUsedAt time.Time
}

// Device is what a session's user agent says about the client.
type Device struct {
	Browser  string
	Platform string
	Mobile   bool
}

// Principal is the caller behind a verified access token.
type Principal struct {
	UserID    uuid.UUID
	SessionID uuid.UUID
	Username  string
	IsAdmin   bool
	// LiveSince is the oldest last use that kept the session live when the
	// token was checked, for callers that check the session again in their
	// own transaction (bets do).
	LiveSince time.Time
	// TwoFactor is whether the user has two-factor sign-in on.
	TwoFactor bool
}

// Client is what the transport knows about the caller's connection.
type Client struct {
	IP        string
	UserAgent string
}

// NewUser is a validated registration ready to be stored.
type NewUser struct {
	ID           uuid.UUID
	Username     string
	Email        string
	PasswordHash string
	Grant        money.Amount
	IsAdmin      bool
	CreatedAt    time.Time
}

// Store persists accounts and sessions. Implementations translate their
// own errors into the sentinels below.
type Store interface {
	// InTx runs fn with a Store bound to one transaction.
	InTx(ctx context.Context, fn func(Store) error) error
	// CreateUser inserts the user and, when Grant > 0, its signup ledger entry.
	// It returns ErrUsernameTaken or ErrEmailTaken on a clash.
	CreateUser(ctx context.Context, u NewUser) (User, error)
	// CredentialsByLogin finds a live user by username or email (case-insensitive).
	CredentialsByLogin(ctx context.Context, login string) (Credentials, error)
	// CredentialsByID finds a live user by id.
	CredentialsByID(ctx context.Context, id uuid.UUID) (Credentials, error)
	// SetAdmin sets or clears the admin flag of the live user id, locking
	// the row, and returns the user and whether they were an administrator
	// before; ErrUserNotFound when there is none.
	SetAdmin(ctx context.Context, id uuid.UUID, admin bool) (u User, was bool, err error)
	// UpdatePreferences changes a live user's preferences (nil fields stay)
	// and returns the user; ErrUserNotFound when there is none.
	UpdatePreferences(ctx context.Context, userID uuid.UUID, p Preferences) (User, error)
	// UpdatePassword replaces a user's password hash.
	UpdatePassword(ctx context.Context, userID uuid.UUID, hash string) error
	// CreateSession stores a session with the hash of its refresh token.
	CreateSession(ctx context.Context, s Session, refreshHash []byte) error
	// OpenSession stores a session for a sign-in that checked the user's
	// credentials as they were: only while the user is live with that
	// password hash and that confirmed two-factor key (nil: off), waiting for
	// a change of them under way. Otherwise it stores nothing and says what
	// the user has now.
	OpenSession(ctx context.Context, s Session, refreshHash []byte, checked Checked) (SessionOpened, error)
	// SessionByRefreshHash finds the live session whose current refresh
	// token has this hash.
	SessionByRefreshHash(ctx context.Context, refreshHash []byte, live Liveness) (Session, error)
	// RotateRefreshToken replaces the current refresh token of a live session
	// of a live user, retiring the old one, and records the use (client,
	// time). It returns ErrSessionNotFound when no live session's current
	// token has oldHash; of two rotations racing with one token, one wins. A
	// session refreshed MaxRefreshes times is revoked instead, and
	// ErrSessionSpent returned: the caller commits the revocation.
	RotateRefreshToken(ctx context.Context, oldHash, newHash []byte, live Liveness, c Client, at time.Time) (Session, error)
	// RevokeByRetiredRefreshHash revokes the session a retired refresh token
	// belonged to (if it is not revoked already) and returns it, or returns
	// ErrSessionNotFound when no session ever retired that token.
	RevokeByRetiredRefreshHash(ctx context.Context, refreshHash []byte, at time.Time) (Session, error)
	// ActivePrincipal returns the principal of a live session of a live
	// user, or ErrSessionNotFound.
	ActivePrincipal(ctx context.Context, sessionID uuid.UUID, live Liveness) (Principal, error)
	// SessionUser returns the live user userID if sessionID is a live
	// session of theirs, or ErrSessionNotFound: ActivePrincipal and
	// CredentialsByID in one statement.
	SessionUser(ctx context.Context, userID, sessionID uuid.UUID, live Liveness) (User, error)
	// ListSessions lists a user's live sessions, newest use first.
	ListSessions(ctx context.Context, userID uuid.UUID, live Liveness) ([]Session, error)
	// RevokeSession revokes one of the user's sessions; ErrSessionNotFound if none.
	RevokeSession(ctx context.Context, userID, sessionID uuid.UUID, at time.Time) error
	// RevokeOtherSessions revokes every unrevoked session of the user but keep
	// and returns how many it revoked.
	RevokeOtherSessions(ctx context.Context, userID, keep uuid.UUID, at time.Time) (int, error)
	// TwoFactorKeys returns a live user's TOTP keys and last accepted step.
	TwoFactorKeys(ctx context.Context, userID uuid.UUID) (TwoFactorKeys, error)
	// SetTwoFactorPending stores the key being set up; ErrTwoFactorOn when
	// two-factor sign-in is on already.
	SetTwoFactorPending(ctx context.Context, userID uuid.UUID, key []byte) error
	// EnableTwoFactor confirms the pending key if it is still pending
	// (ErrTwoFactorNoSetup if not), records step as used and replaces the
	// recovery codes with these hashes.
	EnableTwoFactor(ctx context.Context, userID uuid.UUID, pending []byte, step int64, codeHashes [][]byte) error
	// UseTwoFactorStep records step as used; false if it or a later one was.
	UseTwoFactorStep(ctx context.Context, userID uuid.UUID, step int64) (bool, error)
	// UseRecoveryCode spends an unused recovery code; false if there is none.
	UseRecoveryCode(ctx context.Context, userID uuid.UUID, codeHash []byte, at time.Time) (bool, error)
	// RecoveryCodesLeft counts the unused recovery codes.
	RecoveryCodesLeft(ctx context.Context, userID uuid.UUID) (int, error)
	// DisableTwoFactor turns two-factor sign-in off and drops the codes.
	// It returns whether it was on, as the change found the row.
	DisableTwoFactor(ctx context.Context, userID uuid.UUID) (bool, error)
	// InsertOperatorAudit records an operator's command in the admin audit
	// log, with no administrator as its actor.
	InsertOperatorAudit(ctx context.Context, e OperatorAudit) error
}

// The audit log's actions of the operator's commands (the log's own, an
// administrator's, are in package admin).
const (
	AuditCreateAdmin = "create_admin"
	AuditPromote     = "promote"
	AuditSetPassword = "set_password"
	AuditResetTwoFA  = "reset_2fa"
)

// OperatorAudit is one audit row of an operator's command: `fairplay admin
// ...` and `fairplay user ...` run with the database's credentials, not as
// an administrator. Before and After are the target's fields, marshalled
// as JSON objects.
type OperatorAudit struct {
	Action        string
	UserID        uuid.UUID
	Before, After map[string]any
	At            time.Time
}

// Liveness is what keeps a session alive: not revoked, used at or after
// UsedSince (the idle timeout) and created at or after CreatedSince (the
// absolute lifetime).
type Liveness struct {
	UsedSince    time.Time
	CreatedSince time.Time
}

// Limiter counts events against a rate in a shared store. An error means the
// limiter could not decide (its store is down).
type Limiter interface {
	// Allow counts one event and reports whether it is allowed and, if not,
	// when to retry.
	Allow(ctx context.Context, key string, rate settings.Rate) (allowed bool, retryAfter time.Duration, err error)
	// Check reports whether one more event would be allowed, counting nothing.
	Check(ctx context.Context, key string, rate settings.Rate) (allowed bool, retryAfter time.Duration, err error)
	// Add counts one event that has happened.
	Add(ctx context.Context, key string, rate settings.Rate) error
}

// BotChecker verifies a bot-check token (Cloudflare Turnstile).
type BotChecker interface {
	// Verify returns ErrBotCheck when the token is missing or rejected, and
	// another error when the check itself could not be made.
	Verify(ctx context.Context, token, remoteIP string) error
	// SiteKey is the public key the web widget uses; "" in development.
	SiteKey() string
}

// Errors users see, with the texts of SPEC.md where it gives them.
var (
	ErrUsernameLength   = problem.Invalid("Username must be between 3 and 20 characters")
	ErrUsernameChars    = problem.Invalid("Username can only contain lowercase letters, numbers, and underscores")
	ErrEmailLocal       = problem.Invalid("Email local part must be at most 64 characters long")
	ErrEmailDomain      = problem.Invalid("Email domain must be at most 255 characters long")
	ErrEmailInvalid     = problem.Invalid("Please enter a valid email address")
	ErrPasswordTooShort = problem.Invalid("Password must be at least 6 characters long")
	ErrPasswordTooLong  = problem.Invalid("Password must not exceed 128 characters")
	ErrPasswordWeak     = problem.Invalid("Password must contain at least one uppercase letter, one lowercase letter, one number, and one special character")
	ErrPasswordRequired = problem.Invalid("Password is required")
	ErrCurrentRequired  = problem.Invalid("Current password is required")
	ErrNewRequired      = problem.Invalid("New password is required")
	ErrCurrentWrong     = problem.Invalid("Current password is incorrect")
	ErrLoginRequired    = problem.Invalid("Please provide username and password")
	ErrBotCheck         = problem.Invalid("Please complete the Turnstile verification")
	ErrUsernameTaken    = problem.Conflict("Username already exists")
	ErrEmailTaken       = problem.Conflict("Email already exists")
	ErrBadCredentials   = problem.Unauthenticated("Invalid username or password")
	ErrNoToken          = problem.Unauthenticated("No authentication token, access denied")
	ErrBadToken         = problem.Unauthenticated("Token is not valid")
	ErrSessionExpired   = problem.Unauthenticated("Session expired, please log in again")
	ErrRefreshRequired  = problem.Invalid("Refresh token is required")
	ErrSessionNotFound  = problem.NotFound("Session not found")
	// ErrSessionSpent is RotateRefreshToken's answer for a session it
	// revoked at MaxRefreshes; the player hears ErrSessionExpired.
	ErrSessionSpent     = errors.New("accounts: the session has had its refreshes")
	ErrSessionIDInvalid = problem.Invalid("Invalid session id")
	ErrUserNotFound     = problem.NotFound("User not found")
	ErrAdminRequired    = problem.Forbidden("Admin access required")
	ErrBotCheckDown     = problem.Unavailable("The bot check is unavailable, please try again")

	ErrTwoFactorCodeRequired = problem.Invalid("Enter the code from your authenticator app")
	ErrTwoFactorCode         = problem.Invalid("Invalid two-factor code")
	ErrTwoFactorLogin        = problem.Unauthenticated("Invalid two-factor code")
	ErrTwoFactorReplay       = problem.Invalid("This code was already used, wait for the next one")
	ErrTwoFactorOn           = problem.Conflict("Two-factor authentication is already on")
	ErrTwoFactorOff          = problem.Conflict("Two-factor authentication is not on")
	ErrTwoFactorNoSetup      = problem.Conflict("Start the two-factor setup again: it was not found or has changed")
	ErrAdminTwoFactor        = problem.Forbidden("Admin accounts must turn on two-factor authentication in Settings first")
)

// ErrRateLimited is the message of every exceeded rate limit.
const ErrRateLimited = "Too many requests, please try again later"

// Service runs the account use cases.
type Service struct {
	store   Store
	tokens  *Tokens
	bots    BotChecker
	limiter Limiter
	cfg     settings.Config
	log     *slog.Logger
	now     func() time.Time
	hasher  *Hasher
	// gate lets one password computation run per account at a time.
	gate passwordGate
	// dummyHash is what a login that names no account is verified against:
	// made by hasher, so that it costs what a real account's hash costs.
	dummyHash string
}

// Options are the Service's collaborators.
type Options struct {
	Store   Store
	Tokens  *Tokens
	Bots    BotChecker
	Limiter Limiter
	Config  settings.Config
	Logger  *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Hasher hashes passwords; DefaultHasher when nil.
	Hasher *Hasher
}

// NewService returns a Service.
func NewService(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Hasher == nil {
		o.Hasher = DefaultHasher()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	dummy, err := o.Hasher.Hash(context.Background(), "no account has this password")
	if err != nil {
		dummy = fallbackDummyHash
	}
	return &Service{store: o.Store, tokens: o.Tokens, bots: o.Bots, limiter: o.Limiter, cfg: o.Config, log: o.Logger,
		now: o.Now, hasher: o.Hasher, dummyHash: dummy}
}

// BotSiteKey is the site key the web app's bot-check widget needs ("" in development).
func (s *Service) BotSiteKey() string { return s.bots.SiteKey() }

// limit applies a rate limit. When the limiter's store is down the event is
// allowed (fail open): availability of sign-in matters more than the limit,
// and the outage is logged.
func (s *Service) limit(ctx context.Context, key string, r settings.Rate) error {
	if r.N == 0 || s.limiter == nil {
		return nil
	}
	return s.limited(ctx, key)(s.limiter.Allow(ctx, key, r))
}

// checkLimit is limit for events counted afterwards (with count): it refuses
// when the limit is spent and counts nothing itself.
func (s *Service) checkLimit(ctx context.Context, key string, r settings.Rate) error {
	if r.N == 0 || s.limiter == nil {
		return nil
	}
	return s.limited(ctx, key)(s.limiter.Check(ctx, key, r))
}

// count records an event for a limit applied with checkLimit.
func (s *Service) count(ctx context.Context, key string, r settings.Rate) {
	if r.N == 0 || s.limiter == nil {
		return
	}
	if err := s.limiter.Add(ctx, key, r); err != nil {
		s.log.DebugContext(ctx, "rate limiter unavailable, event not counted", "key_kind", keyKind(key), "err", err)
	}
}

// limited turns a limiter's answer into the error the caller sees.
func (s *Service) limited(ctx context.Context, key string) func(ok bool, retry time.Duration, err error) error {
	return func(ok bool, retry time.Duration, err error) error {
		if err != nil {
			// The limiter logs the outage once; each request only at debug level.
			s.log.DebugContext(ctx, "rate limiter unavailable, allowing request", "key_kind", keyKind(key), "err", err)
			return nil
		}
		if !ok {
			return problem.TooManyRequests(ErrRateLimited, retry)
		}
		return nil
	}
}

func keyKind(key string) string {
	for i := 0; i < len(key); i++ {
		if key[i] == ':' {
			for j := i + 1; j < len(key); j++ {
				if key[j] == ':' {
					return key[:j]
				}
			}
		}
	}
	return key
}

// MaxRefreshes is how many times one session's refresh token may be
// rotated: the next refresh revokes the session (401, as an expired one),
// and the player signs in again. Each rotation retires a token, kept while
// the session lives for reuse detection; the web app refreshes about every
// 15 minutes while open, under 3,000 times in a session's 30 days.
const MaxRefreshes = 10000

// Liveness is the times before which a session is dead now: unused since
// UsedSince, or signed in before CreatedSince.
func (s *Service) Liveness() Liveness { return s.live() }

// live is what keeps a session alive now: its idle timeout and its
// absolute lifetime.
func (s *Service) live() Liveness {
	now := s.now()
	return Liveness{UsedSince: now.Add(-s.cfg.SessionIdleTimeout), CreatedSince: now.Add(-s.cfg.SessionMaxLifetime)}
}

// sessionEnd is when a session created at created ends, however it is used;
// no access token of it outlives that.
func (s *Service) sessionEnd(created time.Time) time.Time {
	return created.Add(s.cfg.SessionMaxLifetime)
}

// isNotFound reports a store miss.
func isNotFound(err error) bool {
	return errors.Is(err, ErrUserNotFound) || errors.Is(err, ErrSessionNotFound)
}
