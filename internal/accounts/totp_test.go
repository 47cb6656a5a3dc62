package accounts

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// RFC 4226 appendix D: HOTP of the ASCII key "12345678901234567890".
func TestHOTPVectors(t *testing.T) {
	key := []byte("12345678901234567890")
	want := []string{"755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"}
	for i, w := range want {
		if got := hotp(key, uint64(i)); got != w {
			t.Errorf("HOTP(%d) = %s, want %s", i, got, w)
		}
	}
}

// RFC 6238 appendix B (SHA-1; its codes have eight digits, an app's six are
// the same value mod 10^6, so the last six digits).
func TestTOTPVectors(t *testing.T) {
	secret := b32.EncodeToString([]byte("12345678901234567890"))
	for _, c := range []struct {
		unix int64
		want string
	}{
		{59, "94287082"}, {1111111109, "07081804"}, {1111111111, "14050471"},
		{1234567890, "89005924"}, {2000000000, "69279037"}, {20000000000, "65353130"},
	} {
		got, err := TOTPCode(secret, time.Unix(c.unix, 0))
		if err != nil || got != c.want[2:] {
			t.Errorf("TOTP at %d = %s (%v), want %s", c.unix, got, err, c.want[2:])
		}
	}
}

func TestMatchTOTPWindow(t *testing.T) {
	key := []byte("12345678901234567890")
	now := time.Unix(1111111111, 0)
	step := totpStep(now)
	for d := int64(-3); d <= 3; d++ {
		code := hotp(key, uint64(step+d))
		got, ok := matchTOTP(key, code[:3]+" "+code[3:], now) // typed with a space
		if want := d >= -totpSkew && d <= totpSkew; ok != want || (ok && got != step+d) {
			t.Errorf("code of step %+d: matched %v at %d", d, ok, got-step)
		}
	}
	for _, bad := range []string{"", "12345", "1234567", "abcdef"} {
		if _, ok := matchTOTP(key, bad, now); ok {
			t.Errorf("%q matched", bad)
		}
	}
}

func TestOtpauthURLAndRecoveryCodes(t *testing.T) {
	key := []byte("12345678901234567890")
	u, err := url.Parse(otpauthURL(key, "alice_1"))
	if err != nil || u.Scheme != "otpauth" || u.Host != "totp" || u.Path != "/Fairplay:alice_1" {
		t.Fatalf("otpauth URL %v (%v)", u, err)
	}
	q := u.Query()
	if q.Get("secret") != "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ" || q.Get("issuer") != "Fairplay" || q.Get("digits") != "6" || q.Get("period") != "30" {
		t.Errorf("query %v", q)
	}
	codes, hashes, err := newRecoveryCodes(recoveryCodes)
	if err != nil || len(codes) != recoveryCodes || len(hashes) != recoveryCodes {
		t.Fatalf("%d codes, %d hashes, %v", len(codes), len(hashes), err)
	}
	seen := map[string]bool{}
	for i, c := range codes {
		if len(c) != 11 || c[5] != '-' || strings.ToLower(c) != c || seen[c] {
			t.Errorf("code %q", c)
		}
		seen[c] = true
		if string(hashRecoveryCode(normalizeCode(strings.ToUpper(c)))) != string(hashes[i]) {
			t.Errorf("code %q does not hash to its stored hash when typed in capitals", c)
		}
	}
}

// The QR code's path: a square whose size is a QR version's (21 + 4k), with
// the finder patterns' top rows (seven dark modules) at its three corners.
func TestQRPath(t *testing.T) {
	size, path, err := qrPath(otpauthURL([]byte("12345678901234567890"), "alice_1"))
	if err != nil || size < 21 || (size-21)%4 != 0 {
		t.Fatalf("size %d, %v", size, err)
	}
	for _, finder := range []string{"M0 0h7v1h-7z", fmt.Sprintf("M%d 0h7v1h-7z", size-7), fmt.Sprintf("M0 %dh7v1h-7z", size-7)} {
		if !strings.Contains(path, finder) {
			t.Errorf("no finder pattern %q in the path", finder)
		}
	}
}
