package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/money"
)

// AccountStore implements accounts.Store.
type AccountStore struct {
	pool *pgxpool.Pool
	db   DB
}

// NewAccountStore returns an accounts.Store on pool.
func NewAccountStore(pool *pgxpool.Pool) *AccountStore {
	return &AccountStore{pool: pool, db: pool}
}

var _ accounts.Store = (*AccountStore)(nil)

// InTx runs fn with a store bound to one transaction (or the current one).
func (s *AccountStore) InTx(ctx context.Context, fn func(accounts.Store) error) error {
	if _, inTx := s.db.(pgx.Tx); inTx {
		return fn(s)
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return fn(&AccountStore{pool: s.pool, db: tx})
	})
}

const userColumns = `id, username, email, balance, is_admin, created_at, hide_username, password_hash, totp_secret IS NOT NULL`

func scanCredentials(row pgx.Row) (accounts.Credentials, error) {
	var c accounts.Credentials
	var bal int64
	err := row.Scan(&c.ID, &c.Username, &c.Email, &bal, &c.IsAdmin, &c.CreatedAt, &c.HideUsername, &c.PasswordHash, &c.TwoFactor)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, accounts.ErrUserNotFound
	}
	c.Balance = money.Amount(bal)
	return c, err
}

// CreateUser inserts the user and its signup grant in the ledger. A break
// or self-exclusion of a deleted account with the same email carries over
// to the new one (the later end of each, by the database's clock): deleting
// an account does not lift them (migration 00032). The carry-over is its
// own statement after the insert: an insert whose email was still a live
// account's when it began waits on the unique index for that account's
// deletion to commit, and only a statement begun after it sees the
// deletion (one statement's snapshot, taken before the wait, did not:
// found by a review).
func (s *AccountStore) CreateUser(ctx context.Context, u accounts.NewUser) (accounts.User, error) {
	var out accounts.User
	err := s.InTx(ctx, func(st accounts.Store) error {
		db := st.(*AccountStore).db
		c, err := scanCredentials(db.QueryRow(ctx, `
			INSERT INTO users (id, username, email, password_hash, balance, is_admin, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			RETURNING `+userColumns,
			u.ID, u.Username, u.Email, u.PasswordHash, int64(u.Grant), u.IsAdmin, u.CreatedAt))
		switch constraintError(err, codeUniqueViolation) {
		case "users_username_key":
			return accounts.ErrUsernameTaken
		case "users_email_key":
			return accounts.ErrEmailTaken
		}
		if err != nil {
			return fmt.Errorf("insert user: %w", err)
		}
		if _, err := db.Exec(ctx, `
			UPDATE users u SET break_until = d.break_until, excluded_until = d.excluded_until
			FROM (SELECT max(break_until) FILTER (WHERE break_until > now()) AS break_until,
			             max(excluded_until) FILTER (WHERE excluded_until > now()) AS excluded_until
			      FROM users
			      WHERE lower(email) = lower($2::text) AND deleted_at IS NOT NULL
			        AND (break_until IS NOT NULL OR excluded_until IS NOT NULL)) d
			WHERE u.id = $1 AND (d.break_until IS NOT NULL OR d.excluded_until IS NOT NULL)`, u.ID, u.Email); err != nil {
			return fmt.Errorf("carry a deleted account's restrictions over: %w", err)
		}
		if u.Grant > 0 {
			if _, err := db.Exec(ctx, `
				INSERT INTO ledger_entries (user_id, kind, amount, balance_after, created_at)
				VALUES ($1, 'signup_grant', $2, $2, $3)`, u.ID, int64(u.Grant), u.CreatedAt); err != nil {
				return fmt.Errorf("insert signup grant: %w", err)
			}
		}
		out = c.User
		return nil
	})
	return out, err
}

// CredentialsByLogin finds a live user by username or email.
func (s *AccountStore) CredentialsByLogin(ctx context.Context, login string) (accounts.Credentials, error) {
	return scanCredentials(s.db.QueryRow(ctx, `
		SELECT `+userColumns+` FROM users
		WHERE deleted_at IS NULL AND (lower(username) = lower($1) OR lower(email) = lower($1))
		ORDER BY lower(username) = lower($1) DESC LIMIT 1`, login))
}

// CredentialsByID finds a live user by id.
func (s *AccountStore) CredentialsByID(ctx context.Context, id uuid.UUID) (accounts.Credentials, error) {
	return scanCredentials(s.db.QueryRow(ctx, `
		SELECT `+userColumns+` FROM users WHERE id = $1 AND deleted_at IS NULL`, id))
}

// SetAdmin sets the admin flag of a live user.
func (s *AccountStore) SetAdmin(ctx context.Context, id uuid.UUID, admin bool) (accounts.User, bool, error) {
	var c accounts.Credentials
	var bal int64
	var was bool
	err := s.db.QueryRow(ctx, `
		WITH old AS (SELECT id, is_admin FROM users WHERE id = $1 AND deleted_at IS NULL FOR NO KEY UPDATE)
		UPDATE users u SET is_admin = $2 FROM old WHERE u.id = old.id
		RETURNING u.id, u.username, u.email, u.balance, u.is_admin, u.created_at, u.hide_username,
		          u.totp_secret IS NOT NULL, old.is_admin`, id, admin).
		Scan(&c.ID, &c.Username, &c.Email, &bal, &c.IsAdmin, &c.CreatedAt, &c.HideUsername, &c.TwoFactor, &was)
	if errors.Is(err, pgx.ErrNoRows) {
		return accounts.User{}, false, accounts.ErrUserNotFound
	}
	if err != nil {
		return accounts.User{}, false, fmt.Errorf("set admin: %w", err)
	}
	c.Balance = money.Amount(bal)
	return c.User, was, nil
}

// InsertOperatorAudit records an operator's command in admin_audit, with
// no actor (migration 00030).
func (s *AccountStore) InsertOperatorAudit(ctx context.Context, e accounts.OperatorAudit) error {
	object := func(m map[string]any) ([]byte, error) {
		if m == nil {
			return []byte("{}"), nil
		}
		return json.Marshal(m)
	}
	before, err := object(e.Before)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	after, err := object(e.After)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if _, err := s.db.Exec(ctx, `
		INSERT INTO admin_audit (actor_id, action, target_user_id, before, after, created_at)
		VALUES (NULL, $1, $2, $3, $4, $5)`, e.Action, e.UserID, before, after, e.At); err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	return nil
}

// UpdatePreferences changes a live user's preferences; a nil field stays.
func (s *AccountStore) UpdatePreferences(ctx context.Context, userID uuid.UUID, p accounts.Preferences) (accounts.User, error) {
	c, err := scanCredentials(s.db.QueryRow(ctx, `
		UPDATE users SET hide_username = coalesce($2, hide_username) WHERE id = $1 AND deleted_at IS NULL
		RETURNING `+userColumns, userID, p.HideUsername))
	if err != nil && !errors.Is(err, accounts.ErrUserNotFound) {
		return accounts.User{}, fmt.Errorf("update preferences: %w", err)
	}
	return c.User, err
}

// UpdatePassword replaces the password hash.
func (s *AccountStore) UpdatePassword(ctx context.Context, userID uuid.UUID, hash string) error {
	tag, err := s.db.Exec(ctx, `UPDATE users SET password_hash = $2 WHERE id = $1 AND deleted_at IS NULL`, userID, hash)
	if err != nil {
		return fmt.Errorf("update password: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return accounts.ErrUserNotFound
	}
	return nil
}

// CreateSession stores a session.
func (s *AccountStore) CreateSession(ctx context.Context, ss accounts.Session, refreshHash []byte) error {
	_, err := s.db.Exec(ctx, `
		INSERT INTO sessions (id, user_id, refresh_hash, ip_address, user_agent, created_at, last_used_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		ss.ID, ss.UserID, refreshHash, ss.IPAddress, ss.UserAgent, ss.CreatedAt, ss.LastUsedAt)
	if err != nil {
		return fmt.Errorf("insert session: %w", err)
	}
	return nil
}

// OpenSession stores the session only if the user is live with the checked
// password hash and two-factor key. FOR SHARE waits for a change of the row
// under way (a new password, 2FA turned on or reset, the account deleted:
// each updates the row, then ends the sessions, in one transaction) and
// reads the row as that change left it; and a change that comes later waits
// for this session to be stored, so its revocation ends it too. Without it,
// a sign-in that read the old credentials before the change opened a session
// after the change had ended the others (found by a review).
func (s *AccountStore) OpenSession(ctx context.Context, ss accounts.Session, refreshHash []byte, checked accounts.Checked) (accounts.SessionOpened, error) {
	var o accounts.SessionOpened
	err := s.db.QueryRow(ctx, `
		WITH u AS (
			SELECT id, password_hash = $8 AS same_password, totp_secret IS NOT NULL AS two_factor,
			       totp_secret IS NOT DISTINCT FROM $9 AS same_key
			FROM users WHERE id = $2 AND deleted_at IS NULL FOR SHARE
		), s AS (
			INSERT INTO sessions (id, user_id, refresh_hash, ip_address, user_agent, created_at, last_used_at)
			SELECT $1, u.id, $3, $4, $5, $6, $7 FROM u WHERE u.same_password AND u.same_key
			RETURNING id
		)
		SELECT EXISTS (SELECT 1 FROM s), coalesce((SELECT same_password FROM u), false),
		       coalesce((SELECT two_factor FROM u), false)`,
		ss.ID, ss.UserID, refreshHash, ss.IPAddress, ss.UserAgent, ss.CreatedAt, ss.LastUsedAt,
		checked.PasswordHash, checked.TwoFactorKey).Scan(&o.Opened, &o.SamePassword, &o.TwoFactor)
	if err != nil {
		return o, fmt.Errorf("insert session: %w", err)
	}
	return o, nil
}

const sessionColumns = `id, user_id, ip_address, user_agent, created_at, last_used_at`

func scanSession(row pgx.Row) (accounts.Session, error) {
	var ss accounts.Session
	err := row.Scan(&ss.ID, &ss.UserID, &ss.IPAddress, &ss.UserAgent, &ss.CreatedAt, &ss.LastUsedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return ss, accounts.ErrSessionNotFound
	}
	return ss, err
}

// liveSession is the condition on a sessions row s that keeps it alive,
// with the Liveness's times as $a (UsedSince) and $b (CreatedSince).
func liveSession(a, b int) string {
	return fmt.Sprintf("s.revoked_at IS NULL AND s.last_used_at >= $%d AND s.created_at >= $%d", a, b)
}

// SessionByRefreshHash finds a live session by its current refresh token's hash.
func (s *AccountStore) SessionByRefreshHash(ctx context.Context, hash []byte, live accounts.Liveness) (accounts.Session, error) {
	return scanSession(s.db.QueryRow(ctx, `
		SELECT `+sessionColumns+` FROM sessions s
		WHERE s.refresh_hash = $1 AND `+liveSession(2, 3), hash, live.UsedSince, live.CreatedSince))
}

// RotateRefreshToken replaces a live session's refresh token and retires the
// old one, in one statement. Of two rotations racing with one token, the
// second waits for the first's row lock, then finds the token no longer
// current (Postgres re-checks the WHERE clause on the row as updated) and
// changes nothing. A session refreshed accounts.MaxRefreshes times is
// revoked instead (migration 00035), so that the retired tokens it keeps for
// reuse detection stay bounded: accounts.ErrSessionSpent, and the caller
// commits the revocation.
func (s *AccountStore) RotateRefreshToken(ctx context.Context, oldHash, newHash []byte, live accounts.Liveness, c accounts.Client, at time.Time) (accounts.Session, error) {
	var spent bool
	ss, err := scanSessionAnd(s.db.QueryRow(ctx, `
		WITH rotated AS (
			UPDATE sessions s SET refresh_hash = $2, last_used_at = $5, ip_address = $6, user_agent = $7,
			                      refreshes = s.refreshes + 1
			WHERE s.refresh_hash = $1 AND `+liveSession(3, 4)+` AND s.refreshes < $8
			  AND EXISTS (SELECT 1 FROM users u WHERE u.id = s.user_id AND u.deleted_at IS NULL)
			RETURNING `+sessionColumns+`
		), spent AS (
			UPDATE sessions s SET revoked_at = $5
			WHERE s.refresh_hash = $1 AND `+liveSession(3, 4)+` AND s.refreshes >= $8
			RETURNING `+sessionColumns+`
		), retired AS (
			INSERT INTO retired_refresh_tokens (hash, session_id, retired_at) SELECT $1, id, $5 FROM rotated
		)
		SELECT `+sessionColumns+`, false FROM rotated UNION ALL SELECT `+sessionColumns+`, true FROM spent`,
		oldHash, newHash, live.UsedSince, live.CreatedSince, at, c.IP, c.UserAgent, accounts.MaxRefreshes), &spent)
	if err == nil && spent {
		return ss, accounts.ErrSessionSpent
	}
	return ss, err
}

// scanSessionAnd is scanSession with more columns after the session's.
func scanSessionAnd(row pgx.Row, more ...any) (accounts.Session, error) {
	var ss accounts.Session
	err := row.Scan(append([]any{&ss.ID, &ss.UserID, &ss.IPAddress, &ss.UserAgent, &ss.CreatedAt, &ss.LastUsedAt},
		more...)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return ss, accounts.ErrSessionNotFound
	}
	return ss, err
}

// RevokeByRetiredRefreshHash revokes the session that retired the token,
// keeping an earlier revocation's time.
func (s *AccountStore) RevokeByRetiredRefreshHash(ctx context.Context, hash []byte, at time.Time) (accounts.Session, error) {
	return scanSession(s.db.QueryRow(ctx, `
		UPDATE sessions s SET revoked_at = coalesce(s.revoked_at, $2)
		FROM retired_refresh_tokens r
		WHERE r.hash = $1 AND s.id = r.session_id
		RETURNING s.id, s.user_id, s.ip_address, s.user_agent, s.created_at, s.last_used_at`, hash, at))
}

// ActivePrincipal returns the caller behind a live session of a live user.
func (s *AccountStore) ActivePrincipal(ctx context.Context, sessionID uuid.UUID, live accounts.Liveness) (accounts.Principal, error) {
	var p accounts.Principal
	err := s.db.QueryRow(ctx, `
		SELECT s.id, u.id, u.username, u.is_admin, u.totp_secret IS NOT NULL
		FROM sessions s JOIN users u ON u.id = s.user_id
		WHERE s.id = $1 AND `+liveSession(2, 3)+` AND u.deleted_at IS NULL`,
		sessionID, live.UsedSince, live.CreatedSince).Scan(&p.SessionID, &p.UserID, &p.Username, &p.IsAdmin, &p.TwoFactor)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, accounts.ErrSessionNotFound
	}
	return p, err
}

// sessionUserSQL is SessionUser's statement. The session is found by its id
// alone, then compared with the player: a generic plan of "id = $2 AND
// user_id = $1" may take the player's index of live sessions and filter
// every one of them (TestSignedInUserReadsOneSession).
var sessionUserSQL = `
	SELECT ` + userColumns + ` FROM users
	WHERE id = $1 AND deleted_at IS NULL
	  AND (SELECT s.user_id FROM sessions s WHERE s.id = $2 AND ` + liveSession(3, 4) + `) = $1`

// SessionUser returns a live user whose session is live, in one statement:
// the read of the signed-in user with its session's check, which
// ActivePrincipal would have made in a round trip of its own.
func (s *AccountStore) SessionUser(ctx context.Context, userID, sessionID uuid.UUID, live accounts.Liveness) (accounts.User, error) {
	c, err := scanCredentials(s.db.QueryRow(ctx, sessionUserSQL, userID, sessionID, live.UsedSince, live.CreatedSince))
	if errors.Is(err, accounts.ErrUserNotFound) {
		return accounts.User{}, accounts.ErrSessionNotFound
	}
	return c.User, err
}

// ListSessions lists a user's live sessions.
func (s *AccountStore) ListSessions(ctx context.Context, userID uuid.UUID, live accounts.Liveness) ([]accounts.Session, error) {
	rows, err := s.db.Query(ctx, `
		SELECT `+sessionColumns+` FROM sessions s
		WHERE s.user_id = $1 AND `+liveSession(2, 3)+`
		ORDER BY s.last_used_at DESC, s.id DESC LIMIT 100`, userID, live.UsedSince, live.CreatedSince)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (accounts.Session, error) { return scanSession(r) })
}

// RevokeSession revokes one session of the user.
func (s *AccountStore) RevokeSession(ctx context.Context, userID, sessionID uuid.UUID, at time.Time) error {
	tag, err := s.db.Exec(ctx, `
		UPDATE sessions SET revoked_at = $3 WHERE id = $2 AND user_id = $1 AND revoked_at IS NULL`,
		userID, sessionID, at)
	if err != nil {
		return fmt.Errorf("revoke session: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return accounts.ErrSessionNotFound
	}
	return nil
}

// RevokeOtherSessions revokes every live session of the user but keep.
func (s *AccountStore) RevokeOtherSessions(ctx context.Context, userID, keep uuid.UUID, at time.Time) (int, error) {
	tag, err := s.db.Exec(ctx, `
		UPDATE sessions SET revoked_at = $3 WHERE user_id = $1 AND id <> $2 AND revoked_at IS NULL`,
		userID, keep, at)
	if err != nil {
		return 0, fmt.Errorf("revoke other sessions: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// TwoFactorKeys returns a live user's confirmed and pending TOTP keys (nil
// when none) and the step of the last code accepted.
func (s *AccountStore) TwoFactorKeys(ctx context.Context, userID uuid.UUID) (accounts.TwoFactorKeys, error) {
	var k accounts.TwoFactorKeys
	err := s.db.QueryRow(ctx, `SELECT totp_secret, totp_pending, totp_last_step FROM users WHERE id = $1 AND deleted_at IS NULL`,
		userID).Scan(&k.Secret, &k.Pending, &k.LastStep)
	if errors.Is(err, pgx.ErrNoRows) {
		return k, accounts.ErrUserNotFound
	}
	return k, err
}

// SetTwoFactorPending stores the key being set up, unless 2FA is on
// (accounts.ErrTwoFactorOn).
func (s *AccountStore) SetTwoFactorPending(ctx context.Context, userID uuid.UUID, key []byte) error {
	tag, err := s.db.Exec(ctx, `UPDATE users SET totp_pending = $2 WHERE id = $1 AND deleted_at IS NULL AND totp_secret IS NULL`,
		userID, key)
	if err == nil && tag.RowsAffected() == 0 {
		return accounts.ErrTwoFactorOn
	}
	return err
}

// EnableTwoFactor confirms the pending key (if it is still pending) with the
// step of the code that confirmed it, and replaces the recovery codes, in
// one statement.
func (s *AccountStore) EnableTwoFactor(ctx context.Context, userID uuid.UUID, pending []byte, step int64, codeHashes [][]byte) error {
	var n int
	err := s.db.QueryRow(ctx, `
		WITH u AS (
			UPDATE users SET totp_secret = totp_pending, totp_pending = NULL, totp_last_step = $3
			WHERE id = $1 AND deleted_at IS NULL AND totp_secret IS NULL AND totp_pending = $2
			RETURNING id
		), old AS (
			DELETE FROM recovery_codes WHERE user_id IN (SELECT id FROM u)
		), codes AS (
			INSERT INTO recovery_codes (user_id, code_hash) SELECT u.id, h FROM u, unnest($4::bytea[]) AS h
		)
		SELECT count(*) FROM u`, userID, pending, step, codeHashes).Scan(&n)
	if err == nil && n == 0 {
		return accounts.ErrTwoFactorNoSetup
	}
	return err
}

// UseTwoFactorStep records that the code of step was accepted; false when a
// code of this step or a later one was accepted already (a replay).
func (s *AccountStore) UseTwoFactorStep(ctx context.Context, userID uuid.UUID, step int64) (bool, error) {
	tag, err := s.db.Exec(ctx, `
		UPDATE users SET totp_last_step = $2 WHERE id = $1 AND totp_secret IS NOT NULL AND totp_last_step < $2`, userID, step)
	return err == nil && tag.RowsAffected() == 1, err
}

// UseRecoveryCode spends an unused recovery code; false when there is none
// with this hash.
func (s *AccountStore) UseRecoveryCode(ctx context.Context, userID uuid.UUID, codeHash []byte, at time.Time) (bool, error) {
	tag, err := s.db.Exec(ctx, `
		UPDATE recovery_codes SET used_at = $3 WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL`, userID, codeHash, at)
	return err == nil && tag.RowsAffected() == 1, err
}

// RecoveryCodesLeft counts a user's unused recovery codes.
func (s *AccountStore) RecoveryCodesLeft(ctx context.Context, userID uuid.UUID) (int, error) {
	var n int
	err := s.db.QueryRow(ctx, `SELECT count(*) FROM recovery_codes WHERE user_id = $1 AND used_at IS NULL`, userID).Scan(&n)
	return n, err
}

// DisableTwoFactor turns 2FA off and drops the recovery codes, and returns
// whether it was on: read from the row as the update locks it, so an
// operator's audit row says what this change undid, not what a read just
// before it saw.
func (s *AccountStore) DisableTwoFactor(ctx context.Context, userID uuid.UUID) (bool, error) {
	var was bool
	err := s.db.QueryRow(ctx, `
		WITH o AS (
			SELECT id, totp_secret IS NOT NULL AS was FROM users WHERE id = $1 FOR NO KEY UPDATE
		), u AS (
			UPDATE users SET totp_secret = NULL, totp_pending = NULL, totp_last_step = 0
			FROM o WHERE users.id = o.id RETURNING users.id
		), d AS (
			DELETE FROM recovery_codes WHERE user_id IN (SELECT id FROM u)
		)
		SELECT coalesce((SELECT was FROM o), false)`, userID).Scan(&was)
	return was, err
}
