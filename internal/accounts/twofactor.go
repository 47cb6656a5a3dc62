package accounts

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// TwoFactorKeys are a user's TOTP keys: the confirmed one (nil: two-factor
// sign-in is off), the one being set up, and the step of the last code
// accepted.
type TwoFactorKeys struct {
	Secret   []byte
	Pending  []byte
	LastStep int64
}

// TwoFactorSetup is what an authenticator app needs: the key as text and as
// the otpauth:// URI its QR code holds.
type TwoFactorSetup struct {
	Secret     string
	OtpauthURL string
	// QRSize is the QR code's width in modules and QRPath its dark modules
	// as SVG path data (one unit per module), so a page draws it inline
	// (no image URL for the Content-Security-Policy to allow).
	QRSize int
	QRPath string
}

// SetupTwoFactor starts turning two-factor sign-in on: a new key, kept as
// pending until EnableTwoFactor confirms it with a code (a new setup
// replaces an unconfirmed one).
func (s *Service) SetupTwoFactor(ctx context.Context, p Principal) (TwoFactorSetup, error) {
	key, err := newTOTPSecret()
	if err != nil {
		return TwoFactorSetup{}, err
	}
	if err := s.store.SetTwoFactorPending(ctx, p.UserID, key); err != nil {
		return TwoFactorSetup{}, err
	}
	u := otpauthURL(key, p.Username)
	size, path, err := qrPath(u)
	if err != nil {
		return TwoFactorSetup{}, err
	}
	return TwoFactorSetup{Secret: b32.EncodeToString(key), OtpauthURL: u, QRSize: size, QRPath: path}, nil
}

// EnableTwoFactor confirms the pending key with a code from the app and
// the account's current password, and returns the recovery codes, shown
// this once. The password is asked because a session alone must not turn
// it on: whoever holds one for a moment (an unlocked browser) could enrol
// their own app, revoke the owner's sessions and lock the owner out for
// good, since signing in and turning it off both need the app's codes. Its
// attempts count against the password-change limits (per address and per
// account), as ChangePassword's do, so it is no way to guess the password
// faster.
func (s *Service) EnableTwoFactor(ctx context.Context, p Principal, code, password string, c Client) ([]string, error) {
	if normalizeCode(code) == "" {
		return nil, ErrTwoFactorCodeRequired
	}
	if password == "" {
		return nil, ErrCurrentRequired
	}
	failures := twoFactorFailures(p.UserID)
	if err := s.checkLimit(ctx, failures, s.cfg.TwoFactorFailures); err != nil {
		return nil, err
	}
	if err := s.ConfirmPassword(ctx, p, password, c); err != nil {
		return nil, err
	}
	keys, err := s.store.TwoFactorKeys(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	if keys.Secret != nil {
		return nil, ErrTwoFactorOn
	}
	if keys.Pending == nil {
		return nil, ErrTwoFactorNoSetup
	}
	step, ok := matchTOTP(keys.Pending, code, s.now())
	if !ok {
		s.count(ctx, failures, s.cfg.TwoFactorFailures)
		return nil, ErrTwoFactorCode
	}
	codes, hashes, err := newRecoveryCodes(recoveryCodes)
	if err != nil {
		return nil, err
	}
	// Every other session ends, as with a new password: a player turns it on
	// because someone else may have the password, and an intruder's session
	// opened with the password alone must not outlive that (nor pass as a
	// two-factor session for FAIRPLAY_ADMIN_REQUIRE_2FA). Found by a review.
	err = s.store.InTx(ctx, func(tx Store) error {
		if err := tx.EnableTwoFactor(ctx, p.UserID, keys.Pending, step, hashes); err != nil {
			return err
		}
		_, err := tx.RevokeOtherSessions(ctx, p.UserID, p.SessionID, s.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	return codes, nil
}

// DisableTwoFactor turns two-factor sign-in off; it takes the current
// password and a current code or a recovery code, so a stolen session alone
// cannot. The password is checked first: the wrong codes of a session alone
// spent the account's budget (FAIRPLAY_RATE_2FA_FAILURES), which then
// refused the owner's right code and recovery codes at sign-in, for as long
// as the thief kept the session (found by a review playing a hostile
// player; TestStolenSessionCannotSpendTheCodeBudget).
func (s *Service) DisableTwoFactor(ctx context.Context, p Principal, code, password string, c Client) error {
	if normalizeCode(code) == "" {
		return ErrTwoFactorCodeRequired
	}
	if err := s.ConfirmPassword(ctx, p, password, c); err != nil {
		return err
	}
	if _, err := s.secondFactor(ctx, p.UserID, code, ErrTwoFactorCode); err != nil {
		return err
	}
	_, err := s.store.DisableTwoFactor(ctx, p.UserID)
	return err
}

// RecoveryCodesLeft counts the signed-in user's unused recovery codes.
func (s *Service) RecoveryCodesLeft(ctx context.Context, p Principal) (int, error) {
	return s.store.RecoveryCodesLeft(ctx, p.UserID)
}

func twoFactorFailures(userID uuid.UUID) string { return "2fa:failures:" + userID.String() }

// secondFactor accepts a TOTP code of the user's key (once: its step is
// recorded) or an unused recovery code (spent) and returns the key it read,
// else returns wrong. Wrong codes and replays count against
// FAIRPLAY_RATE_2FA_FAILURES, which refuses every code (right ones too) once
// spent.
//
// An account's codes are checked one at a time in this process (the
// password gate's line for the account's codes): the limit is checked
// before a code and counted after it, so parallel guesses would otherwise
// all pass the check before the first failure was counted. Found by a
// review: 5,000 wrong codes sent at once were all checked.
func (s *Service) secondFactor(ctx context.Context, userID uuid.UUID, code string, wrong error) (key []byte, err error) {
	leave, err := s.gate.enter(ctx, "2fa:"+userID.String())
	if err != nil {
		return nil, err
	}
	defer leave()
	failures := twoFactorFailures(userID)
	if err := s.checkLimit(ctx, failures, s.cfg.TwoFactorFailures); err != nil {
		return nil, err
	}
	defer func() {
		if err == wrong || err == ErrTwoFactorReplay { //nolint:errorlint // the sentinels themselves
			s.count(ctx, failures, s.cfg.TwoFactorFailures)
		}
	}()
	keys, err := s.store.TwoFactorKeys(ctx, userID)
	if err != nil {
		return nil, err
	}
	if keys.Secret == nil {
		return nil, ErrTwoFactorOff
	}
	if step, ok := matchTOTP(keys.Secret, code, s.now()); ok {
		fresh, err := s.store.UseTwoFactorStep(ctx, userID, step)
		if err != nil {
			return nil, fmt.Errorf("two-factor step: %w", err)
		}
		if !fresh {
			return nil, ErrTwoFactorReplay
		}
		return keys.Secret, nil
	}
	if c := normalizeCode(code); len(c) == 10 {
		spent, err := s.store.UseRecoveryCode(ctx, userID, hashRecoveryCode(c), s.now())
		if err != nil {
			return nil, fmt.Errorf("recovery code: %w", err)
		}
		if spent {
			return keys.Secret, nil
		}
	}
	return nil, wrong
}

// AdminAllowed applies FAIRPLAY_ADMIN_REQUIRE_2FA to an admin principal.
func (s *Service) AdminAllowed(p Principal) error {
	if s.cfg.AdminRequireTwoFactor && !p.TwoFactor {
		return ErrAdminTwoFactor
	}
	return nil
}
