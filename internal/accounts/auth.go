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
	if err := s.limit(ctx, "register:ip:"+c.IP, s.cfg.RegisterPerIP); err != nil {
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
}

// Login checks the rate limits (per IP and per username), the form, the bot
// token and the password, then opens a session.
func (s *Service) Login(ctx context.Context, in LoginInput, c Client) (AuthResult, error) {
	if err := s.limit(ctx, "login:ip:"+c.IP, s.cfg.LoginPerIP); err != nil {
		return AuthResult{}, err
	}
	login := strings.TrimSpace(in.Login)
	if login == "" || in.Password == "" {
		return AuthResult{}, ErrLoginRequired
	}
	if err := s.limit(ctx, "login:user:"+strings.ToLower(login), s.cfg.LoginPerAccountIP); err != nil {
		return AuthResult{}, err
	}
	if err := s.checkBot(ctx, in.BotToken, c.IP); err != nil {
		return AuthResult{}, err
	}
	cred, err := s.store.CredentialsByLogin(ctx, login)
	if errors.Is(err, ErrUserNotFound) {
		// Spend the same time as a real check so timing does not reveal which usernames exist.
		_, _ = s.hasher.Verify(ctx, in.Password, dummyHash)
		return AuthResult{}, ErrBadCredentials
	}
	if err != nil {
		return AuthResult{}, fmt.Errorf("login: %w", err)
	}
	ok, err := s.hasher.Verify(ctx, in.Password, cred.PasswordHash)
	if err != nil {
		return AuthResult{}, fmt.Errorf("login: %w", err)
	}
	if !ok {
		return AuthResult{}, ErrBadCredentials
	}
	res, err := s.openSession(ctx, s.store, cred.User, c)
	if err != nil {
		return AuthResult{}, fmt.Errorf("login: %w", err)
	}
	return res, nil
}

// dummyHash is verified against when a login names no account.
const dummyHash = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$2H2n6zQXq0n1ZzM3m1Qm6dKQm3o5yq1bXb8Q0l1Yl2c"

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
	now := s.now()
	sess := Session{ID: uuid.Must(uuid.NewV7()), UserID: u.ID, IPAddress: c.IP, UserAgent: truncate(c.UserAgent, 512),
		CreatedAt: now, LastUsedAt: now}
	if err := st.CreateSession(ctx, sess, hash); err != nil {
		return AuthResult{}, err
	}
	access, err := s.tokens.Issue(u.ID, sess.ID)
	if err != nil {
		return AuthResult{}, err
	}
	return AuthResult{AccessToken: access, RefreshToken: refresh, User: u}, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Refresh exchanges a refresh token of a live session for a new access token
// and records the use. Sessions unused for the idle timeout are refused.
func (s *Service) Refresh(ctx context.Context, refreshToken string, c Client) (string, User, error) {
	if refreshToken == "" {
		return "", User{}, ErrRefreshRequired
	}
	sess, err := s.store.SessionByRefreshHash(ctx, hashRefreshToken(refreshToken), s.activeSince())
	if isNotFound(err) {
		return "", User{}, ErrSessionExpired
	}
	if err != nil {
		return "", User{}, fmt.Errorf("refresh: %w", err)
	}
	cred, err := s.store.CredentialsByID(ctx, sess.UserID)
	if isNotFound(err) {
		return "", User{}, ErrSessionExpired
	}
	if err != nil {
		return "", User{}, fmt.Errorf("refresh: %w", err)
	}
	if err := s.store.TouchSession(ctx, sess.ID, Client{IP: c.IP, UserAgent: truncate(c.UserAgent, 512)}, s.now()); err != nil {
		return "", User{}, fmt.Errorf("refresh: %w", err)
	}
	token, err := s.tokens.Issue(sess.UserID, sess.ID)
	if err != nil {
		return "", User{}, err
	}
	return token, cred.User, nil
}

// Logout revokes the session that owns refreshToken. An unknown or already
// revoked token is not an error: the session is over either way.
func (s *Service) Logout(ctx context.Context, refreshToken string) error {
	if refreshToken == "" {
		return ErrRefreshRequired
	}
	sess, err := s.store.SessionByRefreshHash(ctx, hashRefreshToken(refreshToken), s.activeSince())
	if isNotFound(err) {
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
	since := s.activeSince()
	p, err := s.store.ActivePrincipal(ctx, sid, since)
	if isNotFound(err) {
		return Principal{}, ErrBadToken
	}
	if err != nil {
		return Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	p.LiveSince = since
	return p, nil
}

// Claims verifies an access token's signature, issuer and expiry but does
// not look its session up: it is for a use case that checks the session in
// its own transaction anyway (a bet does, in the statement that locks the
// player's row), saving a round trip to Postgres. The Principal has only
// UserID, SessionID and LiveSince; a caller that gets a refusal for any
// other reason should Authenticate before answering, so that a revoked
// session always hears 401 first.
func (s *Service) Claims(accessToken string) (Principal, error) {
	if accessToken == "" {
		return Principal{}, ErrNoToken
	}
	uid, sid, err := s.tokens.Verify(accessToken)
	if err != nil {
		return Principal{}, err
	}
	return Principal{UserID: uid, SessionID: sid, LiveSince: s.activeSince()}, nil
}

// CurrentUser returns the caller's account.
func (s *Service) CurrentUser(ctx context.Context, p Principal) (User, error) {
	cred, err := s.store.CredentialsByID(ctx, p.UserID)
	if err != nil {
		return User{}, fmt.Errorf("current user: %w", err)
	}
	return cred.User, nil
}
