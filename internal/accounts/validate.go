package accounts

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// ValidateUsername checks a username as SPEC.md §5 says: 3 to 20 characters
// of lowercase letters, digits and underscores, in that order of messages.
func ValidateUsername(u string) error {
	if n := utf8.RuneCountInString(u); n < 3 || n > 20 {
		return ErrUsernameLength
	}
	for _, r := range u {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
			return ErrUsernameChars
		}
	}
	return nil
}

// ValidateEmail checks the local part (at most 64), the domain (at most 255)
// and the overall shape of an address. Every character must be visible:
// an invisible one (a zero-width space, a right-to-left override, a
// control character, a space of any kind) let one account's address look
// exactly like another's in the admin dashboard's list and search, where
// an administrator picks whom to credit or delete (found by a review).
func ValidateEmail(e string) error {
	at := strings.LastIndexByte(e, '@')
	if at < 0 {
		return ErrEmailInvalid
	}
	local, domain := e[:at], e[at+1:]
	if len(local) > 64 {
		return ErrEmailLocal
	}
	if len(domain) > 255 {
		return ErrEmailDomain
	}
	if local == "" || domain == "" || strings.ContainsAny(e, " \t\r\n<>()[],;:\\\"") ||
		strings.Contains(local, "@") || !strings.Contains(domain, ".") ||
		strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") || strings.Contains(domain, "..") {
		return ErrEmailInvalid
	}
	for _, r := range e {
		if r < ' ' || r == 0x7f || r >= utf8.RuneSelf && invisible(r) {
			return ErrEmailInvalid
		}
	}
	// One spelling per look: "é" composed, not "e" and a combining accent,
	// which lower() and the unique index would take for another address.
	if !norm.NFC.IsNormalString(e) {
		return ErrEmailInvalid
	}
	return nil
}

// invisible reports a character that shows as nothing, or as a blank: a
// format character (zero-width space and joiners, bidi controls), a
// variation selector, another default-ignorable code point (the combining
// grapheme joiner, Hangul fillers), a space of any kind, the braille blank,
// an unassigned or private-use one, and a bad byte.
func invisible(r rune) bool {
	return !unicode.IsGraphic(r) || unicode.IsSpace(r) || r == utf8.RuneError || r == '\u2800' ||
		unicode.In(r, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point, unicode.Co)
}

// passwordSpecials are the special characters SPEC.md §5 accepts.
const passwordSpecials = `!@#$%^&*(),.?":{}|<>`

// ValidateNewPassword checks a new password against every rule of SPEC.md §5
// for password changes: 6 to 128 characters with an uppercase letter, a
// lowercase letter, a digit and a special character.
func ValidateNewPassword(p string) error {
	n := utf8.RuneCountInString(p)
	if n < 6 {
		return ErrPasswordTooShort
	}
	if n > 128 {
		return ErrPasswordTooLong
	}
	var upper, lower, digit, special bool
	for _, r := range p {
		switch {
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= '0' && r <= '9':
			digit = true
		case strings.ContainsRune(passwordSpecials, r):
			special = true
		}
	}
	if !upper || !lower || !digit || !special {
		return ErrPasswordWeak
	}
	return nil
}

// validateRegisterPassword checks a sign-up password: 6 to 128 characters.
func validateRegisterPassword(p string) error {
	n := utf8.RuneCountInString(p)
	if n < 6 {
		return ErrPasswordTooShort
	}
	if n > 128 {
		return ErrPasswordTooLong
	}
	return nil
}
