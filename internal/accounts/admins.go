package accounts

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// CreateAdmin creates an administrator account without a bot check, for
// `fairplay admin create` and the development admin of `make run`. With
// ifMissing set, an existing live account of that username and email is
// made an administrator instead (its password is left alone); one with
// another email is refused.
func (s *Service) CreateAdmin(ctx context.Context, username, email, password string, ifMissing bool) (User, bool, error) {
	if err := ValidateUsername(username); err != nil {
		return User{}, false, err
	}
	if err := ValidateEmail(email); err != nil {
		return User{}, false, err
	}
	if err := validateRegisterPassword(password); err != nil {
		return User{}, false, err
	}
	hash, err := s.hasher.Hash(ctx, password)
	if err != nil {
		return User{}, false, err
	}
	u, err := s.store.CreateUser(ctx, NewUser{ID: uuid.Must(uuid.NewV7()), Username: username, Email: email,
		PasswordHash: hash, Grant: s.cfg.StartingBalance, IsAdmin: true, CreatedAt: s.now()})
	if errors.Is(err, ErrUsernameTaken) && ifMissing {
		// Only the account this command made before: anyone may register
		// a username first (the default "admin", or a deleted admin's freed
		// name), and promoting that account would hand its owner's session
		// the dashboard. Found by a review.
		cred, err := s.store.CredentialsByLogin(ctx, username)
		if err != nil {
			return User{}, false, fmt.Errorf("create admin: %w", err)
		}
		if !strings.EqualFold(cred.Email, email) {
			return User{}, false, fmt.Errorf("create admin: username %q belongs to an account with another email; "+
				"not made an administrator (if it is yours, use `fairplay admin promote`)", username)
		}
		u, err := s.store.SetAdmin(ctx, username, true)
		return u, false, err
	}
	if err != nil {
		return User{}, false, fmt.Errorf("create admin: %w", err)
	}
	return u, true, nil
}

// Promote makes an existing user an administrator.
func (s *Service) Promote(ctx context.Context, username string) (User, error) {
	u, err := s.store.SetAdmin(ctx, username, true)
	if err != nil {
		return User{}, fmt.Errorf("promote: %w", err)
	}
	return u, nil
}

// SetPassword replaces a user's password without the change-password rules
// (an operator's tool: `fairplay admin create --reset-password`) and ends
// every session of theirs.
func (s *Service) SetPassword(ctx context.Context, username, password string) error {
	if err := validateRegisterPassword(password); err != nil {
		return err
	}
	cred, err := s.store.CredentialsByLogin(ctx, username)
	if err != nil {
		return fmt.Errorf("set password: %w", err)
	}
	hash, err := s.hasher.Hash(ctx, password)
	if err != nil {
		return err
	}
	// Every session ends with the old password, as with a player's own
	// change: whoever signed in with it is out.
	return s.store.InTx(ctx, func(tx Store) error {
		if err := tx.UpdatePassword(ctx, cred.ID, hash); err != nil {
			return err
		}
		_, err := tx.RevokeOtherSessions(ctx, cred.ID, uuid.Nil, s.now())
		return err
	})
}

// ResetTwoFactor turns two-factor sign-in off for the live user named by
// login (username or email, any case) and ends every session of theirs, and
// returns the user and how many sessions ended: an operator's tool
// (`fairplay user reset-2fa`) for a player who lost both the app and the
// recovery codes, or whose account someone else enrolled. The sessions end
// with it, so whoever turned it on loses their way in too; the player signs
// in again with the password alone.
func (s *Service) ResetTwoFactor(ctx context.Context, login string) (User, int, error) {
	cred, err := s.store.CredentialsByLogin(ctx, login)
	if err != nil {
		return User{}, 0, fmt.Errorf("reset two-factor: %w", err)
	}
	ended := 0
	err = s.store.InTx(ctx, func(tx Store) error {
		if err := tx.DisableTwoFactor(ctx, cred.ID); err != nil {
			return err
		}
		ended, err = tx.RevokeOtherSessions(ctx, cred.ID, uuid.Nil, s.now())
		return err
	})
	if err != nil {
		return User{}, 0, fmt.Errorf("reset two-factor: %w", err)
	}
	s.log.InfoContext(ctx, "two-factor sign-in reset by an operator", "user_id", cred.ID, "sessions_ended", ended)
	return cred.User, ended, nil
}
