package accounts

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // RFC 6238's default, the only one authenticator apps all support
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"net/url"
	"strings"
	"time"

	"rsc.io/qr"
)

// TOTP (RFC 6238) as every authenticator app speaks it: HMAC-SHA1, six
// digits, 30-second steps, a 160-bit secret. Written out (it is HOTP, RFC
// 4226, of the step number: a dozen lines, checked against both RFCs'
// vectors) rather than taken from a library, because the server must know
// which step a code matched, to refuse it a second time.
const (
	totpPeriod  = 30
	totpDigits  = 6
	totpSkew    = 1 // steps either side accepted: a phone's clock a little off
	totpIssuer  = "Fairplay"
	secretBytes = 20
	// recoveryCodes is how many single-use codes enabling 2FA hands out.
	recoveryCodes = 10
)

var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// hotp is RFC 4226's HOTP value of counter under key, as totpDigits digits.
func hotp(key []byte, counter uint64) string {
	mac := hmac.New(sha1.New, key)
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], counter)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%0*d", totpDigits, v%1_000_000)
}

// totpStep is the step number of t.
func totpStep(t time.Time) int64 { return t.Unix() / totpPeriod }

// matchTOTP returns the step (within totpSkew of now) whose code is code,
// or false. The comparison is constant-time per step.
func matchTOTP(key []byte, code string, now time.Time) (int64, bool) {
	code = normalizeCode(code)
	if len(code) != totpDigits {
		return 0, false
	}
	step := totpStep(now)
	found, at := false, int64(0)
	for d := int64(-totpSkew); d <= totpSkew; d++ {
		if hmac.Equal([]byte(hotp(key, uint64(step+d))), []byte(code)) && !found {
			found, at = true, step+d
		}
	}
	return at, found
}

// normalizeCode drops the spaces and dashes people type or paste in codes,
// and lowercases recovery codes.
func normalizeCode(s string) string {
	return strings.ToLower(strings.NewReplacer(" ", "", "-", "", "\t", "").Replace(strings.TrimSpace(s)))
}

func newTOTPSecret() ([]byte, error) {
	key := make([]byte, secretBytes)
	_, err := rand.Read(key)
	return key, err
}

// otpauthURL is the key-uri an authenticator app reads from the QR code.
func otpauthURL(key []byte, account string) string {
	label := url.PathEscape(totpIssuer + ":" + account)
	q := url.Values{}
	q.Set("secret", b32.EncodeToString(key))
	q.Set("issuer", totpIssuer)
	q.Set("algorithm", "SHA1")
	q.Set("digits", fmt.Sprint(totpDigits))
	q.Set("period", fmt.Sprint(totpPeriod))
	return "otpauth://totp/" + label + "?" + q.Encode()
}

// newRecoveryCodes returns n codes to show once (xxxxx-xxxxx, base32
// lowercase: 50 bits each) and the hashes to store.
func newRecoveryCodes(n int) (codes []string, hashes [][]byte, err error) {
	for range n {
		raw := make([]byte, 7)
		if _, err := rand.Read(raw); err != nil {
			return nil, nil, err
		}
		s := strings.ToLower(b32.EncodeToString(raw))[:10]
		codes = append(codes, s[:5]+"-"+s[5:])
		hashes = append(hashes, hashRecoveryCode(s))
	}
	return codes, hashes, nil
}

// hashRecoveryCode hashes a normalized recovery code. The codes are random
// (50 bits), so a plain SHA-256 is enough: there is nothing to guess from.
func hashRecoveryCode(normalized string) []byte {
	h := sha256.Sum256([]byte("fairplay-recovery:" + normalized))
	return h[:]
}

// TOTPCode is the code an authenticator app shows at t for a key given in
// base32 (as SetupTwoFactor returns it); for tests and tools.
func TOTPCode(secret string, t time.Time) (string, error) {
	key, err := b32.DecodeString(strings.ToUpper(strings.TrimRight(secret, "=")))
	if err != nil {
		return "", fmt.Errorf("two-factor secret: %w", err)
	}
	return hotp(key, uint64(totpStep(t))), nil //nolint:gosec // a time after 1970
}

// qrPath encodes text as a QR code (rsc.io/qr, error correction M) and
// returns its width in modules and its dark modules as SVG path data: one
// "M x y h n v1 h-n z" per horizontal run.
func qrPath(text string) (int, string, error) {
	code, err := qr.Encode(text, qr.M)
	if err != nil {
		return 0, "", fmt.Errorf("qr code: %w", err)
	}
	var b strings.Builder
	for y := range code.Size {
		for x := 0; x < code.Size; {
			if !code.Black(x, y) {
				x++
				continue
			}
			run := 1
			for x+run < code.Size && code.Black(x+run, y) {
				run++
			}
			fmt.Fprintf(&b, "M%d %dh%dv1h-%dz", x, y, run, run)
			x += run
		}
	}
	return code.Size, b.String(), nil
}
