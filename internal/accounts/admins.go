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
	var u User
	err = s.store.InTx(ctx, func(tx Store) error {
		var err error
		at := s.now()
		if u, err = tx.CreateUser(ctx, NewUser{ID: uuid.Must(uuid.NewV7()), Username: username, Email: email,
			PasswordHash: hash, Grant: s.cfg.StartingBalance, IsAdmin: true, CreatedAt: at}); err != nil {
			return err
		}
		return tx.InsertOperatorAudit(ctx, OperatorAudit{Action: AuditCreateAdmin, UserID: u.ID, At: at,
			After: map[string]any{"username": u.Username, "email": u.Email, "isAdmin": true}})
	})
	if errors.Is(err, ErrUsernameTaken) && ifMissing {
		// Only the account this command made before: anyone may register
		// a username first (the default "admin", or a deleted admin's freed
		// name), and promoting that account would hand its owner's session
		// the dashboard. Found by a review.
		cred, err := s.store.CredentialsByLogin(ctx, username)
		if err != nil {
			return User{}, false, fmt.Errorf("create admin: %w", err)
		}
		u, err := s.promote(ctx, cred.ID, email)
		if errors.Is(err, errAnotherEmail) {
			return User{}, false, fmt.Errorf("create admin: username %q belongs to an account with another email; "+
				"not made an administrator (if it is yours, use `fairplay admin promote`)", username)
		}
		if err != nil {
			return User{}, false, fmt.Errorf("create admin: %w", err)
		}
		return u, false, nil
	}
	if err != nil {
		return User{}, false, fmt.Errorf("create admin: %w", err)
	}
	return u, true, nil
}

// Promote makes an existing user an administrator.
func (s *Service) Promote(ctx context.Context, username string) (User, error) {
	cred, err := s.store.CredentialsByLogin(ctx, username)
	if err == nil && !strings.EqualFold(cred.Username, username) {
		// By username only, as the command's flag says: an email names an
		// account just as well, but a typo of one user's name must not be
		// another's email.
		err = ErrUserNotFound
	}
	if err == nil {
		var u User
		if u, err = s.promote(ctx, cred.ID, ""); err == nil {
			return u, nil
		}
	}
	return User{}, fmt.Errorf("promote: %w", err)
}

// errAnotherEmail is promote's refusal of an account whose email is not
// the one given.
var errAnotherEmail = errors.New("another email")

// promote sets the administrator flag of the live user id and, when that
// changes it, writes the audit row, in one transaction holding the user's
// row: when email is set, the row must have it, so an account deleted and
// its name registered again since the caller read it is refused.
func (s *Service) promote(ctx context.Context, id uuid.UUID, email string) (User, error) {
	var u User
	err := s.store.InTx(ctx, func(tx Store) error {
		var was bool
		var err error
		if u, was, err = tx.SetAdmin(ctx, id, true); err != nil {
			return err
		}
		if email != "" && !strings.EqualFold(u.Email, email) {
			return errAnotherEmail
		}
		if was {
			return nil
		}
		return tx.InsertOperatorAudit(ctx, OperatorAudit{Action: AuditPromote, UserID: u.ID, At: s.now(),
			Before: map[string]any{"isAdmin": false}, After: map[string]any{"isAdmin": true}})
	})
	return u, err
}

// SetPassword replaces a user's password without the change-password rules
// (an operator's tool: `fairplay admin create --reset-password`) and ends
// every session of theirs, and tells whether it changed it: a password the
// account has already is left, with its sessions (make run sets the
// development admin's at every start).
func (s *Service) SetPassword(ctx context.Context, username, password string) (bool, error) {
	if err := validateRegisterPassword(password); err != nil {
		return false, err
	}
	cred, err := s.store.CredentialsByLogin(ctx, username)
	if err != nil {
		return false, fmt.Errorf("set password: %w", err)
	}
	if same, err := s.hasher.Verify(ctx, password, cred.PasswordHash); err != nil || same {
		return false, err
	}
	hash, err := s.hasher.Hash(ctx, password)
	if err != nil {
		return false, err
	}
	// Every session ends with the old password, as with a player's own
	// change: whoever signed in with it is out.
	return true, s.store.InTx(ctx, func(tx Store) error {
		if err := tx.UpdatePassword(ctx, cred.ID, hash); err != nil {
			return err
		}
		at := s.now()
		ended, err := tx.RevokeOtherSessions(ctx, cred.ID, uuid.Nil, at)
		if err != nil {
			return err
		}
		return tx.InsertOperatorAudit(ctx, OperatorAudit{Action: AuditSetPassword, UserID: cred.ID, At: at,
			After: map[string]any{"sessionsRevoked": ended}})
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
		was, err := tx.DisableTwoFactor(ctx, cred.ID)
		if err != nil {
			return err
		}
		at := s.now()
		if ended, err = tx.RevokeOtherSessions(ctx, cred.ID, uuid.Nil, at); err != nil {
			return err
		}
		return tx.InsertOperatorAudit(ctx, OperatorAudit{Action: AuditResetTwoFA, UserID: cred.ID, At: at,
			Before: map[string]any{"twoFactor": was},
			After:  map[string]any{"twoFactor": false, "sessionsRevoked": ended}})
	})
	if err != nil {
		return User{}, 0, fmt.Errorf("reset two-factor: %w", err)
	}
	s.log.InfoContext(ctx, "two-factor sign-in reset by an operator", "user_id", cred.ID, "sessions_ended", ended)
	return cred.User, ended, nil
}
