package accounts_test

import (
	"errors"
	"os"
	"path/filepath"
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
		"tampered":  tok[:len(tok)-2] + "AA",
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
	tampered := tok[:len(tok)-2] + map[bool]string{true: "AA", false: "BB"}[tok[len(tok)-2:] != "AA"]
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
