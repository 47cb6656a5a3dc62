package accounts_test

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/accounts"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestKeyRotation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clk := &clock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	oldKID, err := accounts.WriteNewKey(dir, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	keys, err := accounts.LoadKeySet(dir, accounts.KeySetOptions{Now: clk.Now, ActivationDelay: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	tokens := accounts.NewTokens(keys, 15*time.Minute, clk.Now)
	user, sess := uuid.New(), uuid.New()
	oldTok, err := tokens.Issue(user, sess, time.Time{})
	if err != nil {
		t.Fatal(err)
	}

	// A new key appears (the operator rotated the Secret); no restart.
	clk.Advance(time.Minute)
	newKID, err := accounts.WriteNewKey(dir, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := keys.Reload(); err != nil {
		t.Fatal(err)
	}
	if kid, _ := keys.SigningKey(); kid != oldKID {
		t.Fatalf("a brand-new key signed before its activation delay: %s", kid)
	}
	clk.Advance(61 * time.Second)
	if kid, _ := keys.SigningKey(); kid != newKID {
		t.Fatalf("signing key %s, want the new %s", kid, newKID)
	}
	newTok, err := tokens.Issue(user, sess, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]string{"old": oldTok, "new": newTok} {
		if u, s, err := tokens.Verify(tok); err != nil || u != user || s != sess {
			t.Fatalf("%s token: %v", name, err)
		}
	}

	// The old key is pruned: its tokens stop verifying; the new key's still work.
	if err := os.Remove(filepath.Join(dir, oldKID+".pem")); err != nil {
		t.Fatal(err)
	}
	if err := keys.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tokens.Verify(oldTok); err == nil {
		t.Fatal("a token of a removed key still verifies")
	}
	if _, _, err := tokens.Verify(newTok); err != nil {
		t.Fatalf("new token after pruning: %v", err)
	}
}

func TestUnknownKeyTriggersReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clk := &clock{t: time.Now()}
	if _, err := accounts.WriteNewKey(dir, clk.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	verifier, err := accounts.LoadKeySet(dir, accounts.KeySetOptions{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	// Another replica signs with a key this one has not read yet.
	otherDir := t.TempDir()
	kid, err := accounts.WriteNewKey(otherDir, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	signer, err := accounts.LoadKeySet(otherDir, accounts.KeySetOptions{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := accounts.NewTokens(signer, time.Minute, clk.Now).Issue(uuid.New(), uuid.New(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	v := accounts.NewTokens(verifier, time.Minute, clk.Now)
	raw, _ := os.ReadFile(filepath.Join(otherDir, kid+".pem"))
	if err := os.WriteFile(filepath.Join(dir, kid+".pem"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	clk.Advance(2 * time.Second)
	if _, _, err := v.Verify(tok); err != nil {
		t.Fatalf("unknown kid did not trigger a reload: %v", err)
	}
}

func TestTokenRejections(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Now()}
	keys, err := accounts.LoadKeySet("", accounts.KeySetOptions{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	tokens := accounts.NewTokens(keys, 15*time.Minute, clk.Now)
	tok, _ := tokens.Issue(uuid.New(), uuid.New(), time.Time{})
	for name, bad := range map[string]string{
		"empty":     "",
		"garbage":   "a.b.c",
		"tampered":  tamper(tok),
		"alg none":  "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJ4In0.",
		"truncated": tok[:len(tok)/2],
	} {
		if _, _, err := tokens.Verify(bad); err == nil {
			t.Fatalf("%s token verified", name)
		}
	}
	clk.Advance(15*time.Minute + time.Second)
	if _, _, err := tokens.Verify(tok); err == nil {
		t.Fatal("expired token verified")
	}
}

// tamper changes one signature character in the middle of the token's last
// part. (Replacing the last characters is not always a change: the final
// base64url character carries unused bits, and the token may already end in
// the replacement.)
func tamper(tok string) string {
	i := strings.LastIndexByte(tok, '.') + 10
	c := byte('A')
	if tok[i] == 'A' {
		c = 'B'
	}
	return tok[:i] + string(c) + tok[i+1:]
}

func TestEmptyKeyDirIsAnError(t *testing.T) {
	t.Parallel()
	if _, err := accounts.LoadKeySet(t.TempDir(), accounts.KeySetOptions{}); err == nil {
		t.Fatal("an empty key directory loaded")
	}
}

// A verified token is remembered, but never beyond its expiry, and a
// tampered copy of it is checked (and refused) on its own.
func TestVerifiedTokensExpire(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	if _, err := accounts.WriteNewKey(dir, clk.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	keys, err := accounts.LoadKeySet(dir, accounts.KeySetOptions{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	tokens := accounts.NewTokens(keys, 15*time.Minute, clk.Now)
	user, sess := uuid.New(), uuid.New()
	tok, err := tokens.Issue(user, sess, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		u, s, err := tokens.Verify(tok)
		if err != nil || u != user || s != sess {
			t.Fatalf("verify #%d: %v %v %v", i, u, s, err)
		}
	}
	tampered := tamper(tok)
	if _, _, err := tokens.Verify(tampered); err == nil {
		t.Fatal("a tampered token verified")
	}
	clk.Advance(15*time.Minute + time.Second)
	if _, _, err := tokens.Verify(tok); err == nil {
		t.Fatal("an expired token verified from memory")
	}
}

// No access token outlives its session: Issue caps the expiry at the
// session's end when that comes before the TTL.
func TestTokenExpiryCappedAtSessionEnd(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Now()}
	keys, err := accounts.LoadKeySet("", accounts.KeySetOptions{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	tokens := accounts.NewTokens(keys, 15*time.Minute, clk.Now)
	capped, err := tokens.Issue(uuid.New(), uuid.New(), clk.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	full, err := tokens.Issue(uuid.New(), uuid.New(), clk.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(59 * time.Second)
	for _, tok := range []string{capped, full} {
		if _, _, err := tokens.Verify(tok); err != nil {
			t.Fatalf("before the end: %v", err)
		}
	}
	clk.Advance(2 * time.Second)
	if _, _, err := tokens.Verify(capped); !errors.Is(err, accounts.ErrBadToken) {
		t.Fatalf("token past its session's end: %v, want ErrBadToken", err)
	}
	if _, _, err := tokens.Verify(full); err != nil {
		t.Fatalf("token within the TTL and its session: %v", err)
	}
}

var quiet = slog.New(slog.DiscardHandler)

// copyKey puts the key kid of dir into another directory, as the kubelet
// puts a rotated Secret into each pod's volume, each at its own time.
func copyKey(t *testing.T, from, to, kid string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(from, kid+".pem"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(to, kid+".pem"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Replicas that read the keys at different times agree on the signing key,
// because the rule depends on the keys and the clock only: a new key signs
// nowhere before its activation time (the default, 3 minutes after its
// creation), and until some key is active the oldest signs.
func TestReplicasAgreeOnTheSigningKey(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		// first is the age of the first key when the second appears.
		first time.Duration
	}{
		{name: "a fresh install rotated at once", first: 10 * time.Second},
		{name: "a scheduled rotation", first: 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := &clock{t: t0}
			source, dirA, dirB := t.TempDir(), t.TempDir(), t.TempDir()
			k1, err := accounts.WriteNewKey(source, t0.Add(-tc.first))
			if err != nil {
				t.Fatal(err)
			}
			copyKey(t, source, dirA, k1)
			a, err := accounts.LoadKeySet(dirA, accounts.KeySetOptions{Now: clk.Now, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			// The operator adds k2; replica B starts (or its kubelet syncs)
			// 40 seconds later and reads both keys, replica A still has k1 only.
			k2, err := accounts.WriteNewKey(source, clk.Now())
			if err != nil {
				t.Fatal(err)
			}
			clk.Advance(40 * time.Second)
			copyKey(t, source, dirB, k1)
			copyKey(t, source, dirB, k2)
			b, err := accounts.LoadKeySet(dirB, accounts.KeySetOptions{Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			agree := func(want string) {
				t.Helper()
				ka, _ := a.SigningKey()
				kb, _ := b.SigningKey()
				if ka != want || kb != want {
					t.Fatalf("at %s: replica A signs with %s, replica B with %s; want both %s",
						clk.Now().Sub(t0), ka, kb, want)
				}
			}
			agree(k1)
			// Two minutes after the rotation: the kubelet has given A the key
			// too, and it is still not used.
			clk.Advance(80 * time.Second)
			copyKey(t, source, dirA, k2)
			if err := a.Reload(); err != nil {
				t.Fatal(err)
			}
			agree(k1)
			clk.Advance(accounts.DefaultActivationDelay - 2*time.Minute - time.Second)
			agree(k1)
			clk.Advance(time.Second)
			agree(k2)
		})
	}
}

// A key younger than the activation delay never signs, yet tokens another
// replica signed with it verify at once (a replica whose only key it is, or
// whose clock runs ahead, may use it).
func TestNewKeyVerifiesBeforeItSigns(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	oldKID, err := accounts.WriteNewKey(dir, clk.Now().Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	newKID, err := accounts.WriteNewKey(dir, clk.Now().Add(-accounts.DefaultActivationDelay+time.Second))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := accounts.LoadKeySet(dir, accounts.KeySetOptions{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if kid, _ := keys.SigningKey(); kid != oldKID {
		t.Fatalf("signing with %s, %s before the new key's activation; want the old %s", kid, time.Second, oldKID)
	}
	tokens := accounts.NewTokens(keys, 15*time.Minute, clk.Now)
	mine, err := tokens.Issue(uuid.New(), uuid.New(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}

	otherDir := t.TempDir()
	copyKey(t, dir, otherDir, newKID)
	other, err := accounts.LoadKeySet(otherDir, accounts.KeySetOptions{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if kid, _ := other.SigningKey(); kid != newKID {
		t.Fatalf("a replica with one fresh key signs with %s, want that key %s", kid, newKID)
	}
	theirs, err := accounts.NewTokens(other, 15*time.Minute, clk.Now).Issue(uuid.New(), uuid.New(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]string{"own": mine, "the new key's": theirs} {
		if _, _, err := tokens.Verify(tok); err != nil {
			t.Errorf("%s token: %v", name, err)
		}
	}

	clk.Advance(time.Second)
	if kid, _ := keys.SigningKey(); kid != newKID {
		t.Fatalf("signing with %s at the new key's activation, want %s", kid, newKID)
	}
}

// A key named otherwise than by its creation time counts as created at the
// zero time: older than any dated key, and active at once.
func TestUndatedKeyOrdersFirst(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	dated, err := accounts.WriteNewKey(dir, clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, pemBytes, err := accounts.GenerateKey(clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "zz-legacy.pem"), pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := accounts.LoadKeySet(dir, accounts.KeySetOptions{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if ids := keys.KeyIDs(); len(ids) != 2 || ids[0] != "zz-legacy" || ids[1] != dated {
		t.Fatalf("key order %v, want the undated key first", ids)
	}
	if kid, _ := keys.SigningKey(); kid != "zz-legacy" {
		t.Fatalf("signing with %s before the dated key's activation, want the undated key", kid)
	}
	clk.Advance(accounts.DefaultActivationDelay)
	if kid, _ := keys.SigningKey(); kid != dated {
		t.Fatalf("signing with %s after the dated key's activation, want %s", kid, dated)
	}
}
