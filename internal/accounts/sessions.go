package accounts

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// Sessions lists the caller's live sessions, most recently used first.
func (s *Service) Sessions(ctx context.Context, p Principal) ([]Session, error) {
	list, err := s.store.ListSessions(ctx, p.UserID, s.live())
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return list, nil
}

// RevokeSession ends one of the caller's sessions (possibly the current one).
func (s *Service) RevokeSession(ctx context.Context, p Principal, sessionID string) error {
	id, err := uuid.Parse(sessionID)
	if err != nil {
		return ErrSessionIDInvalid
	}
	if err := s.store.RevokeSession(ctx, p.UserID, id, s.now()); err != nil {
		return fmt.Errorf("revoke session: %w", err)
	}
	return nil
}

// RevokeOtherSessions ends every session of the caller except the one owning
// currentRefreshToken (or, when that is empty or not the caller's, the
// session of the access token in use) and returns how many it ended. A
// retired refresh token is a reuse (see Refresh): it ends its own session,
// and nothing else, with ErrSessionExpired.
func (s *Service) RevokeOtherSessions(ctx context.Context, p Principal, currentRefreshToken string) (int, error) {
	keep := p.SessionID
	if currentRefreshToken != "" {
		hash := hashRefreshToken(currentRefreshToken)
		sess, err := s.store.SessionByRefreshHash(ctx, hash, s.live())
		switch {
		case err == nil && sess.UserID == p.UserID:
			keep = sess.ID
		case isNotFound(err):
			reused, err := s.revokeReused(ctx, hash)
			if err != nil {
				return 0, fmt.Errorf("revoke other sessions: %w", err)
			}
			if reused {
				return 0, ErrSessionExpired
			}
		case err != nil:
			return 0, fmt.Errorf("revoke other sessions: %w", err)
		}
	}
	n, err := s.store.RevokeOtherSessions(ctx, p.UserID, keep, s.now())
	if err != nil {
		return 0, fmt.Errorf("revoke other sessions: %w", err)
	}
	return n, nil
}

// ChangePassword checks every rule of SPEC.md §5 in its order, then the
// rate limits per client IP and per account (before any hashing, so a
// refused attempt costs no argon2 work), waits for the account's turn in
// the password gate (one computation per account at a time, even with the
// limits off), verifies the current password, and stores the new hash and
// ends every other session of the caller in one transaction.
func (s *Service) ChangePassword(ctx context.Context, p Principal, current, next string, c Client) error {
	if current == "" {
		return ErrCurrentRequired
	}
	if next == "" {
		return ErrNewRequired
	}
	if err := ValidateNewPassword(next); err != nil {
		return err
	}
	if err := s.limit(ctx, "password:ip:"+NetworkOf(c.IP), s.cfg.PasswordChangePerIP); err != nil {
		return err
	}
	account := userKey(p.UserID.String())
	if err := s.limit(ctx, "password:user:"+account, s.cfg.PasswordChangePerUser); err != nil {
		return err
	}
	leave, err := s.gate.enter(ctx, account)
	if err != nil {
		return err
	}
	defer leave()
	if err := s.verifyPassword(ctx, p, current); err != nil {
		return err
	}
	hash, err := s.hasher.Hash(ctx, next)
	if err != nil {
		return fmt.Errorf("change password: %w", err)
	}
	err = s.store.InTx(ctx, func(tx Store) error {
		if err := tx.UpdatePassword(ctx, p.UserID, hash); err != nil {
			return err
		}
		_, err := tx.RevokeOtherSessions(ctx, p.UserID, p.SessionID, s.now())
		return err
	})
	if err != nil {
		return fmt.Errorf("change password: %w", err)
	}
	s.log.InfoContext(ctx, "password changed", "user_id", p.UserID)
	return nil
}

// ConfirmPassword checks the signed-in player's current password before
// an act a session alone must not do: turning two-factor sign-in on or off,
// a self-exclusion. Its attempts count against the password-change limits
// (per address and per account), as ChangePassword's do, so it is no way to
// guess the password faster.
func (s *Service) ConfirmPassword(ctx context.Context, p Principal, password string, c Client) error {
	if password == "" {
		return ErrCurrentRequired
	}
	if err := s.limit(ctx, "password:ip:"+NetworkOf(c.IP), s.cfg.PasswordChangePerIP); err != nil {
		return err
	}
	account := userKey(p.UserID.String())
	if err := s.limit(ctx, "password:user:"+account, s.cfg.PasswordChangePerUser); err != nil {
		return err
	}
	return s.checkPassword(ctx, p, account, password)
}

// checkPassword is verifyPassword through the account's gate (one hash at a
// time per account), for a step that asks for the current password.
func (s *Service) checkPassword(ctx context.Context, p Principal, account, password string) error {
	leave, err := s.gate.enter(ctx, account)
	if err != nil {
		return err
	}
	defer leave()
	return s.verifyPassword(ctx, p, password)
}

// verifyPassword answers ErrCurrentWrong unless password is the account's.
func (s *Service) verifyPassword(ctx context.Context, p Principal, password string) error {
	cred, err := s.store.CredentialsByID(ctx, p.UserID)
	if err != nil {
		return fmt.Errorf("check password: %w", err)
	}
	ok, err := s.hasher.Verify(ctx, password, cred.PasswordHash)
	if err != nil {
		return fmt.Errorf("check password: %w", err)
	}
	if !ok {
		return ErrCurrentWrong
	}
	return nil
}
