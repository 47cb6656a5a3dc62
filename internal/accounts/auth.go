package accounts

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// AuthResult is a signed-in session: its tokens and its user.
type AuthResult struct {
	AccessToken  string
	RefreshToken string
	User         User
	// TwoFactorRequired: the password was right, and the account asks for a
	// two-factor code, which the login did not carry: no session yet.
	TwoFactorRequired bool
}

// RegisterInput is the sign-up form.
type RegisterInput struct {
	Username string
	Email    string
	Password string
	BotToken string
}

// Register validates the form as SPEC.md §5 says, checks the bot token,
// creates the account with its starting balance (a ledger entry) and opens a
// session, all or nothing.
func (s *Service) Register(ctx context.Context, in RegisterInput, c Client) (AuthResult, error) {
	if err := s.limit(ctx, "register:ip:"+NetworkOf(c.IP), s.cfg.RegisterPerIP); err != nil {
		return AuthResult{}, err
	}
	if err := ValidateUsername(in.Username); err != nil {
		return AuthResult{}, err
	}
	if err := ValidateEmail(in.Email); err != nil {
		return AuthResult{}, err
	}
	if err := validateRegisterPassword(in.Password); err != nil {
		return AuthResult{}, err
	}
	if err := s.checkBot(ctx, in.BotToken, c.IP); err != nil {
		return AuthResult{}, err
	}
	hash, err := s.hasher.Hash(ctx, in.Password)
	if err != nil {
		return AuthResult{}, fmt.Errorf("register: %w", err)
	}
	var res AuthResult
	err = s.store.InTx(ctx, func(tx Store) error {
		u, err := tx.CreateUser(ctx, NewUser{
			ID: uuid.Must(uuid.NewV7()), Username: in.Username, Email: in.Email, PasswordHash: hash,
			Grant: s.cfg.StartingBalance, CreatedAt: s.now(),
		})
		if err != nil {
			return err
		}
		res, err = s.openSession(ctx, tx, u, c)
		return err
	})
	if err != nil {
		return AuthResult{}, fmt.Errorf("register: %w", err)
	}
	s.log.InfoContext(ctx, "user registered", "user_id", res.User.ID)
	return res, nil
}

// LoginInput is the sign-in form; Login is a username or an email address.
type LoginInput struct {
	Login    string
	Password string
	BotToken string
	// TwoFactorCode is a TOTP code or a recovery code, for accounts with
	// two-factor sign-in; the login is sent again with it.
	TwoFactorCode string
}

// Login signs an account in. Its limits follow what identity providers do
// so that a stranger cannot lock an owner out: attempts count per client IP
// (LoginPerIP) and, once past the bot check, per login and client IP
// (LoginPerAccountIP), and only failures count per login from anywhere
// (LoginFailuresPerAccount, a slower limit). A login counts as typed,
// lowercased (loginKey): a username and its email address are two names, so
// the limits cannot tell anyone that they are one account. Whether or not
// the login names an account, it takes the same steps — a lookup, the bot
// check, the limits, one argon2 verification, counting the failure — so
// status, message and timing do not tell which usernames exist. One
// verification per login runs at a time; its other attempts wait their turn
// (passwordGate).
func (s *Service) Login(ctx context.Context, in LoginInput, c Client) (AuthResult, error) {
	if err := s.limit(ctx, "login:ip:"+NetworkOf(c.IP), s.cfg.LoginPerIP); err != nil {
		return AuthResult{}, err
	}
	login := strings.TrimSpace(in.Login)
	if login == "" || in.Password == "" {
		return AuthResult{}, ErrLoginRequired
	}
	cred, err := s.store.CredentialsByLogin(ctx, login)
	found := err == nil
	if err != nil && !errors.Is(err, ErrUserNotFound) {
		return AuthResult{}, fmt.Errorf("login: %w", err)
	}
	// The bot check comes before the per-login limits: an attempt that
	// fails it counts only against its address, so no one fills a login's
	// budget without solving a check per attempt.
	if err := s.checkBot(ctx, in.BotToken, c.IP); err != nil {
		return AuthResult{}, err
	}
	account := loginKey(login)
	if err := s.limit(ctx, "login:account-ip:"+account+":"+NetworkOf(c.IP), s.cfg.LoginPerAccountIP); err != nil {
		return AuthResult{}, err
	}
	// The account's failures are checked and counted in the account's
	// turn, as a second factor's are (secondFactor): checked before the
	// line and counted after it, every attempt sent at once passed the check
	// before any was counted, so ~33 guesses went through for each one the
	// limit let free (the line's 32 waiting and the one running; found by a
	// review playing a hostile player, TestSignInFailuresInParallelAreBounded).
	failures := "login:failures:" + account
	leave, err := s.gate.enter(ctx, account)
	if err != nil {
		return AuthResult{}, err
	}
	if err := s.checkLimit(ctx, failures, s.cfg.LoginFailuresPerAccount); err != nil {
		leave()
		return AuthResult{}, err
	}
	hash := s.dummyHash
	if found {
		hash = cred.PasswordHash
	}
	// A login that names no account spends the same time on the dummy hash.
	match, err := s.hasher.Verify(ctx, in.Password, hash)
	if err == nil && (!match || !found) {
		s.count(ctx, failures, s.cfg.LoginFailuresPerAccount)
	}
	leave()
	if err != nil {
		return AuthResult{}, fmt.Errorf("login: %w", err)
	}
	if !match || !found {
		return AuthResult{}, ErrBadCredentials
	}
	checked := Checked{PasswordHash: cred.PasswordHash}
	if cred.TwoFactor {
		// Only the password's holder learns that a code is asked for. A
		// wrong code counts as a failed sign-in, under the same limits.
		if normalizeCode(in.TwoFactorCode) == "" {
			return AuthResult{TwoFactorRequired: true}, nil
		}
		key, err := s.secondFactor(ctx, cred.ID, in.TwoFactorCode, ErrTwoFactorLogin)
		if err != nil {
			s.count(ctx, failures, s.cfg.LoginFailuresPerAccount)
			return AuthResult{}, err
		}
		checked.TwoFactorKey = key
	}
	// The credentials were read before the wait for the password check: a
	// new password, 2FA turned on or reset, or the account deleted since
	// then ended every session, and this one must not begin after it. The
	// session is stored only if the account is still as checked; otherwise
	// the sign-in is answered as it would be now (the password the player
	// typed no longer opens it, or a code is asked for).
	res, opened, err := s.openCheckedSession(ctx, cred.User, checked, c)
	if err != nil {
		return AuthResult{}, fmt.Errorf("login: %w", err)
	}
	switch {
	case opened.Opened:
		return res, nil
	case !opened.SamePassword:
		return AuthResult{}, ErrBadCredentials
	case opened.TwoFactor && checked.TwoFactorKey == nil:
		return AuthResult{TwoFactorRequired: true}, nil
	default:
		return AuthResult{}, ErrTwoFactorLogin
	}
}

// fallbackDummyHash is verified against when a login names no account and
// the Service could not make its own dummy hash (see NewService).
const fallbackDummyHash = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$2H2n6zQXq0n1ZzM3m1Qm6dKQm3o5yq1bXb8Q0l1Yl2c"

func (s *Service) checkBot(ctx context.Context, token, ip string) error {
	err := s.bots.Verify(ctx, token, ip)
	if err == nil || errors.Is(err, ErrBotCheck) {
		return err
	}
	s.log.ErrorContext(ctx, "bot check failed to run", "err", err)
	return ErrBotCheckDown
}

func (s *Service) openSession(ctx context.Context, st Store, u User, c Client) (AuthResult, error) {
	refresh, hash, err := newRefreshToken()
	if err != nil {
		return AuthResult{}, err
	}
	sess := s.newSession(u, c)
	if err := st.CreateSession(ctx, sess, hash); err != nil {
		return AuthResult{}, err
	}
	return s.issue(u, sess, refresh)
}

// newSession is a session of u's beginning now, on c's device.
func (s *Service) newSession(u User, c Client) Session {
	now := s.now()
	return Session{ID: uuid.Must(uuid.NewV7()), UserID: u.ID, IPAddress: c.IP, UserAgent: truncate(c.UserAgent, 512),
		CreatedAt: now, LastUsedAt: now}
}

// issue answers a stored session with its first access token and the
// refresh token whose hash it was stored with.
func (s *Service) issue(u User, sess Session, refresh string) (AuthResult, error) {
	access, err := s.tokens.Issue(u.ID, sess.ID, s.sessionEnd(sess.CreatedAt))
	if err != nil {
		return AuthResult{}, err
	}
	return AuthResult{AccessToken: access, RefreshToken: refresh, User: u}, nil
}

// openCheckedSession is openSession for a sign-in: the session is stored
// only if the user's credentials are still the checked ones
// (Store.OpenSession).
func (s *Service) openCheckedSession(ctx context.Context, u User, checked Checked, c Client) (AuthResult, SessionOpened, error) {
	refresh, hash, err := newRefreshToken()
	if err != nil {
		return AuthResult{}, SessionOpened{}, err
	}
	sess := s.newSession(u, c)
	opened, err := s.store.OpenSession(ctx, sess, hash, checked)
	if err != nil || !opened.Opened {
		return AuthResult{}, opened, err
	}
	res, err := s.issue(u, sess, refresh)
	return res, opened, err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Refresh exchanges the current refresh token of a live session for a new
// access token and the session's next refresh token, retiring the one given
// (rotation), and records the use. A retired refresh token presented again
// means that two parties hold the session's tokens — a thief and the
// player, or two racing requests — and nothing tells which is which, so the
// session is revoked with all its tokens (reuse detection, as the OAuth 2.0
// Security BCP recommends) and the caller must sign in again. There is no
// grace period for a concurrent double refresh: the web app sends one
// refresh at a time per tab and tabs do not share tokens, and a refresh
// whose answer was lost ends in a sign-in either way (SPEC.md: a failed
// refresh clears the tokens); a grace period would give a thief who races
// the player a live token. Sessions unused for the idle timeout or older
// than their lifetime are refused.
func (s *Service) Refresh(ctx context.Context, refreshToken string, c Client) (AuthResult, error) {
	if err := s.limit(ctx, "session:ip:"+NetworkOf(c.IP), s.cfg.SessionPerIP); err != nil {
		return AuthResult{}, err
	}
	if refreshToken == "" {
		return AuthResult{}, ErrRefreshRequired
	}
	next, nextHash, err := newRefreshToken()
	if err != nil {
		return AuthResult{}, err
	}
	old := hashRefreshToken(refreshToken)
	var (
		res   AuthResult
		spent bool
	)
	// One transaction: a refresh that fails after the rotation (the user was
	// deleted meanwhile, the database went away) leaves the token it was given
	// current, so a retry is not taken for a reuse.
	err = s.store.InTx(ctx, func(tx Store) error {
		sess, err := tx.RotateRefreshToken(ctx, old, nextHash, s.live(), Client{IP: c.IP, UserAgent: truncate(c.UserAgent, 512)}, s.now())
		if errors.Is(err, ErrSessionSpent) {
			spent = true
			return nil // the revocation commits
		}
		if err != nil {
			return err
		}
		cred, err := tx.CredentialsByID(ctx, sess.UserID)
		if err != nil {
			return err
		}
		token, err := s.tokens.Issue(sess.UserID, sess.ID, s.sessionEnd(sess.CreatedAt))
		if err != nil {
			return err
		}
		res = AuthResult{AccessToken: token, RefreshToken: next, User: cred.User}
		return nil
	})
	if isNotFound(err) {
		// Not a live session's current token: a retired one ends its session.
		if _, err := s.revokeReused(ctx, old); err != nil {
			return AuthResult{}, fmt.Errorf("refresh: %w", err)
		}
		return AuthResult{}, ErrSessionExpired
	}
	if err != nil {
		return AuthResult{}, fmt.Errorf("refresh: %w", err)
	}
	if spent {
		return AuthResult{}, ErrSessionExpired
	}
	return res, nil
}

// revokeReused revokes the session of a retired refresh token and reports
// whether the hash was one; any other unknown token is no one's and changes
// nothing.
func (s *Service) revokeReused(ctx context.Context, hash []byte) (bool, error) {
	sess, err := s.store.RevokeByRetiredRefreshHash(ctx, hash, s.now())
	if isNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	s.log.WarnContext(ctx, "retired refresh token presented again: session revoked", "user_id", sess.UserID, "session_id", sess.ID)
	return true, nil
}

// Logout revokes the session that owns refreshToken. An unknown or already
// revoked token is not an error: the session is over either way. A retired
// token of the session ends it too (see Refresh).
func (s *Service) Logout(ctx context.Context, refreshToken string, c Client) error {
	if err := s.limit(ctx, "session:ip:"+NetworkOf(c.IP), s.cfg.SessionPerIP); err != nil {
		return err
	}
	if refreshToken == "" {
		return ErrRefreshRequired
	}
	hash := hashRefreshToken(refreshToken)
	sess, err := s.store.SessionByRefreshHash(ctx, hash, s.live())
	if isNotFound(err) {
		if _, err := s.revokeReused(ctx, hash); err != nil {
			return fmt.Errorf("logout: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("logout: %w", err)
	}
	if err := s.store.RevokeSession(ctx, sess.UserID, sess.ID, s.now()); err != nil && !isNotFound(err) {
		return fmt.Errorf("logout: %w", err)
	}
	return nil
}

// Authenticate verifies an access token and that its session is still live.
// The session is looked up in Postgres on every call, so a revocation, a
// logout, a password change or a deleted account takes effect at once on
// every replica, and no cache outage can bring a revoked token back.
func (s *Service) Authenticate(ctx context.Context, accessToken string) (Principal, error) {
	if accessToken == "" {
		return Principal{}, ErrNoToken
	}
	_, sid, err := s.tokens.Verify(accessToken)
	if err != nil {
		return Principal{}, err
	}
	live := s.live()
	p, err := s.store.ActivePrincipal(ctx, sid, live)
	if isNotFound(err) {
		return Principal{}, ErrBadToken
	}
	if err != nil {
		return Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	p.LiveSince = live.UsedSince
	return p, nil
}

// Claims verifies an access token's signature, issuer and expiry but does
// not look its session up: it is for a use case that checks the session in
// its own transaction anyway (a bet does, in the statement that locks the
// player's row; the read of the signed-in user, SessionUser, in the
// statement that reads the account), saving a round trip to Postgres. That check covers
// revocation and the idle timeout; the session's lifetime needs none, as no
// access token outlives it (Tokens.Issue). The Principal has only UserID,
// SessionID and LiveSince; a caller that gets a refusal for any other reason
// should Authenticate before answering, so that a revoked session always
// hears 401 first (SessionUser's only refusal is that 401).
func (s *Service) Claims(accessToken string) (Principal, error) {
	if accessToken == "" {
		return Principal{}, ErrNoToken
	}
	uid, sid, err := s.tokens.Verify(accessToken)
	if err != nil {
		return Principal{}, err
	}
	return Principal{UserID: uid, SessionID: sid, LiveSince: s.live().UsedSince}, nil
}

// CurrentUser returns the caller's account.
func (s *Service) CurrentUser(ctx context.Context, p Principal) (User, error) {
	cred, err := s.store.CredentialsByID(ctx, p.UserID)
	if err != nil {
		return User{}, fmt.Errorf("current user: %w", err)
	}
	return cred.User, nil
}

// SessionUser returns the caller's account if the caller's session is
// live: the session's check and the account's read in one statement, for a
// procedure that AccessInterceptor lets through on the token alone
// (ACCESS_PLAYER: Claims). A session that is not live, or an account that is
// gone, is ErrBadToken (401), as Authenticate answers.
func (s *Service) SessionUser(ctx context.Context, p Principal) (User, error) {
	u, err := s.store.SessionUser(ctx, p.UserID, p.SessionID, s.live())
	if isNotFound(err) {
		return User{}, ErrBadToken
	}
	if err != nil {
		return User{}, fmt.Errorf("current user: %w", err)
	}
	return u, nil
}

// UpdatePreferences changes the caller's own preferences — never another
// player's: the account is the token's — and returns the account as it now
// is. The session is checked first, so a revoked one changes nothing.
func (s *Service) UpdatePreferences(ctx context.Context, p Principal, prefs Preferences) (User, error) {
	u, err := s.store.UpdatePreferences(ctx, p.UserID, prefs)
	if err != nil {
		if isNotFound(err) {
			return User{}, ErrBadToken
		}
		return User{}, fmt.Errorf("update preferences: %w", err)
	}
	return u, nil
}
