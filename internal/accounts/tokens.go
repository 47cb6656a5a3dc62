package accounts

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

// KeyIDFormat names signing keys by their creation time, so that the
// lexically greatest key id is the newest key.
const KeyIDFormat = "20060102T150405Z"

// DefaultActivationDelay is how long after its creation a key starts
// signing (FAIRPLAY_SIGNING_KEY_ACTIVATION_DELAY). It must exceed the time a
// new key takes to reach every replica: the kubelet updates a mounted Secret
// within about two minutes of its change.
//
// Whoever retires keys must keep the previous key for longer than the
// activation delay + the access-token TTL (at most 15 minutes) + that
// propagation time, since the previous key signs until its successor
// activates and its last tokens live a TTL more. The operator's
// KeyRetirementGrace (30 minutes, internal/controller) covers 3 + 15 + 2
// minutes with margin; raise it before raising the delay much.
const DefaultActivationDelay = 3 * time.Minute

// KeySet is the set of Ed25519 access-token keys read from a directory, one
// PEM (PKCS #8) file per key named <key id>.pem. Every key in the directory
// verifies as soon as it is read; the directory is re-read periodically
// (Watch) and whenever a token names an unknown key id, so keys added or
// removed (for example by the operator rotating its Secret) take effect
// without a restart.
//
// Which key signs is a rule every replica computes alike from the keys
// themselves, whenever each one read them: a key's creation time is the time
// in its id, and it becomes the signing key once that time plus the
// activation delay has passed (wall clock). The newest such key signs. So a
// rotated-in key is used by no replica before every replica can verify it —
// also a replica that starts right after the rotation — provided the delay
// exceeds the time the key takes to reach them all. When no key has reached
// its activation time yet (a fresh installation with its first key, or a
// rotation soon after it), the oldest key signs: the one every replica has
// had longest. A key whose id is not a time counts as created at the zero
// time (older than any dated key, active at once); generate keys with
// `fairplay keys generate` (or the operator) to rotate safely.
type KeySet struct {
	dir             string
	activationDelay time.Duration
	now             func() time.Time
	log             *slog.Logger

	mu         sync.RWMutex
	keys       map[string]ed25519.PrivateKey
	lastReload time.Time
}

// KeySetOptions configures LoadKeySet.
type KeySetOptions struct {
	// ActivationDelay defaults to DefaultActivationDelay.
	ActivationDelay time.Duration
	Now             func() time.Time
	Logger          *slog.Logger
}

// LoadKeySet reads the keys in dir. With dir == "" it makes one in-memory key,
// which suits a single development process only (tokens die with it).
func LoadKeySet(dir string, o KeySetOptions) (*KeySet, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ActivationDelay <= 0 {
		o.ActivationDelay = DefaultActivationDelay
	}
	k := &KeySet{dir: dir, activationDelay: o.ActivationDelay, now: o.Now, log: o.Logger,
		keys: map[string]ed25519.PrivateKey{}}
	if dir == "" {
		kid, pemBytes, err := GenerateKey(o.Now())
		if err != nil {
			return nil, err
		}
		key, err := parseKey(pemBytes)
		if err != nil {
			return nil, err
		}
		k.keys[kid] = key
		o.Logger.Warn("FAIRPLAY_SIGNING_KEYS_DIR is not set: using an in-memory signing key; tokens will not survive a restart or work across replicas")
		return k, nil
	}
	if err := k.reload(true); err != nil {
		return nil, err
	}
	return k, nil
}

// GenerateKey makes a new Ed25519 key named for time now and returns its id
// and PEM encoding.
func GenerateKey(now time.Time) (kid string, pemBytes []byte, err error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", nil, fmt.Errorf("generate signing key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return "", nil, fmt.Errorf("encode signing key: %w", err)
	}
	return now.UTC().Format(KeyIDFormat), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// WriteNewKey generates a key and writes it into dir as <kid>.pem.
func WriteNewKey(dir string, now time.Time) (string, error) {
	kid, pemBytes, err := GenerateKey(now)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create key directory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, kid+".pem"), pemBytes, 0o600); err != nil {
		return "", fmt.Errorf("write signing key: %w", err)
	}
	return kid, nil
}

func parseKey(pemBytes []byte) (ed25519.PrivateKey, error) {
	block, _ := pem.Decode(bytes.TrimSpace(pemBytes))
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, errors.New("not a PEM PRIVATE KEY")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	ed, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, errors.New("not an Ed25519 key")
	}
	return ed, nil
}

// keyCreated is a key's creation time: the time in its id, or the zero time
// for an id that is not one.
func keyCreated(kid string) time.Time {
	created, err := time.Parse(KeyIDFormat, kid)
	if err != nil {
		return time.Time{}
	}
	return created
}

// compareKeys orders key ids oldest first: by creation time, then by id.
func compareKeys(a, b string) int {
	if c := keyCreated(a).Compare(keyCreated(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// Reload re-reads the key directory.
func (k *KeySet) Reload() error {
	if k.dir == "" {
		return nil
	}
	return k.reload(false)
}

func (k *KeySet) reload(initial bool) error {
	entries, err := os.ReadDir(k.dir)
	if err != nil {
		return fmt.Errorf("read signing keys: %w", err)
	}
	keys := map[string]ed25519.PrivateKey{}
	for _, e := range entries {
		name := e.Name()
		// Kubernetes Secret volumes hold ..data links and dated directories.
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".pem") {
			continue
		}
		path := filepath.Join(k.dir, name)
		if st, err := os.Stat(path); err != nil || st.IsDir() {
			continue
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read signing key %s: %w", name, err)
		}
		key, err := parseKey(raw)
		if err != nil {
			return fmt.Errorf("signing key %s: %w", name, err)
		}
		keys[strings.TrimSuffix(name, ".pem")] = key
	}
	if len(keys) == 0 {
		return fmt.Errorf("no signing keys (*.pem) in %s; create one with `fairplay keys generate --dir %s`", k.dir, k.dir)
	}
	now := k.now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if !initial {
		for kid := range keys {
			if _, ok := k.keys[kid]; !ok {
				k.log.Info("signing key added", "kid", kid, "signs_from", k.activatesAt(kid))
			}
		}
		for kid := range k.keys {
			if _, ok := keys[kid]; !ok {
				k.log.Info("signing key removed", "kid", kid)
			}
		}
	}
	k.keys = keys
	k.lastReload = now
	return nil
}

// Watch re-reads the directory every interval until ctx ends.
func (k *KeySet) Watch(ctx context.Context, interval time.Duration) {
	if k.dir == "" {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := k.Reload(); err != nil {
				k.log.Error("reload signing keys", "err", err)
			}
		}
	}
}

// SigningKey returns the key to sign with: the newest key whose activation
// time has passed, or the oldest key when none has (see KeySet).
func (k *KeySet) SigningKey() (string, ed25519.PrivateKey) {
	now := k.now()
	k.mu.RLock()
	defer k.mu.RUnlock()
	kids := k.sortedIDs()
	kid := kids[0]
	for i := len(kids) - 1; i >= 0; i-- {
		if !now.Before(k.activatesAt(kids[i])) {
			kid = kids[i]
			break
		}
	}
	return kid, k.keys[kid]
}

// activatesAt is when kid may start signing: the activation delay after the
// creation time in its id, the same moment on every replica.
func (k *KeySet) activatesAt(kid string) time.Time {
	return keyCreated(kid).Add(k.activationDelay)
}

// KeyIDs lists the loaded key ids, oldest first.
func (k *KeySet) KeyIDs() []string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.sortedIDs()
}

// sortedIDs lists the key ids oldest first; k.mu must be held.
func (k *KeySet) sortedIDs() []string {
	kids := make([]string, 0, len(k.keys))
	for kid := range k.keys {
		kids = append(kids, kid)
	}
	slices.SortFunc(kids, compareKeys)
	return kids
}

// verificationKey finds a key by id, re-reading the directory once a second
// at most when the id is unknown.
func (k *KeySet) verificationKey(kid string) (ed25519.PublicKey, bool) {
	k.mu.RLock()
	key, ok := k.keys[kid]
	stale := k.now().Sub(k.lastReload) > time.Second
	k.mu.RUnlock()
	if !ok && stale && k.dir != "" {
		if err := k.Reload(); err != nil {
			k.log.Error("reload signing keys", "err", err)
		}
		k.mu.RLock()
		key, ok = k.keys[kid]
		k.mu.RUnlock()
	}
	if !ok {
		return nil, false
	}
	// The public half of the key, without Public's copy (an allocation on
	// every request that carries a token): a private key is its seed then
	// its public key, as crypto/ed25519 lays it out; Verify only reads it.
	return ed25519.PublicKey(key[ed25519.SeedSize:ed25519.PrivateKeySize:ed25519.PrivateKeySize]), true
}

// Tokens issues and verifies access tokens: EdDSA JWTs carrying the user id
// (sub) and the session id (sid), valid for TTL.
type Tokens struct {
	keys *KeySet
	ttl  time.Duration
	now  func() time.Time

	// verified remembers tokens whose signature checked out, so a player's
	// stream of requests pays for one Ed25519 verification a minute rather
	// than one per request (see Verify).
	mu       sync.Mutex
	verified map[[sha256.Size]byte]verifiedToken
}

// verifiedToken is a remembered verification: the token's ids, its signing
// key, and its expiry.
type verifiedToken struct {
	userID, sessionID uuid.UUID
	kid               string
	key               ed25519.PublicKey
	until             time.Time
}

// maxVerified bounds the remembered verifications' memory (about 150 bytes
// each).
const maxVerified = 50_000

const tokenIssuer = "fairplay"

// NewTokens returns a Tokens signing with keys.
func NewTokens(keys *KeySet, ttl time.Duration, now func() time.Time) *Tokens {
	if now == nil {
		now = time.Now
	}
	return &Tokens{keys: keys, ttl: ttl, now: now}
}

type accessClaims struct {
	jwt.RegisteredClaims
	SessionID string `json:"sid"`
}

// Issue signs an access token for the session, valid for the TTL but not
// past notAfter (the session's end; the zero time sets no bound), so that no
// token outlives its session even where the session row is not read.
func (t *Tokens) Issue(userID, sessionID uuid.UUID, notAfter time.Time) (string, error) {
	kid, key := t.keys.SigningKey()
	now := t.now()
	exp := now.Add(t.ttl)
	if !notAfter.IsZero() && notAfter.Before(exp) {
		exp = notAfter
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, accessClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    tokenIssuer,
			Subject:   userID.String(),
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(exp),
		},
		SessionID: sessionID.String(),
	})
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		return "", fmt.Errorf("sign access token: %w", err)
	}
	return s, nil
}

// Verify checks an access token's signature, issuer and expiry and returns
// its user and session ids.
func (t *Tokens) Verify(token string) (userID, sessionID uuid.UUID, err error) {
	key := sha256.Sum256([]byte(token))
	now := t.now()
	t.mu.Lock()
	v, ok := t.verified[key]
	t.mu.Unlock()
	if ok && now.Before(v.until) {
		// Still signed by a key we honour (a pruned key's tokens stop at once).
		if k, ok := t.keys.verificationKey(v.kid); ok && k.Equal(v.key) {
			return v.userID, v.sessionID, nil
		}
	}
	v, err = t.verify(token)
	if err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	t.remember(key, v, now)
	return v.userID, v.sessionID, nil
}

// remember stores a verification; when the map is full it first drops the
// expired ones, and everything if that is not enough.
func (t *Tokens) remember(key [sha256.Size]byte, v verifiedToken, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.verified) >= maxVerified {
		for k, e := range t.verified {
			if !now.Before(e.until) {
				delete(t.verified, k)
			}
		}
		if len(t.verified) >= maxVerified {
			clear(t.verified)
		}
	}
	if t.verified == nil {
		t.verified = make(map[[sha256.Size]byte]verifiedToken)
	}
	t.verified[key] = v
}

// verify checks the token's signature, issuer and expiry.
func (t *Tokens) verify(token string) (verifiedToken, error) {
	var c accessClaims
	var v verifiedToken
	_, err := jwt.ParseWithClaims(token, &c, func(tok *jwt.Token) (any, error) {
		kid, _ := tok.Header["kid"].(string)
		key, ok := t.keys.verificationKey(kid)
		if !ok {
			return nil, fmt.Errorf("unknown key id %q", kid)
		}
		v.kid, v.key = kid, key
		return key, nil
	}, jwt.WithValidMethods([]string{"EdDSA"}), jwt.WithIssuer(tokenIssuer), jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(t.now))
	if err != nil || c.ExpiresAt == nil {
		return verifiedToken{}, ErrBadToken
	}
	var err1, err2 error
	v.userID, err1 = uuid.Parse(c.Subject)
	v.sessionID, err2 = uuid.Parse(c.SessionID)
	if err1 != nil || err2 != nil {
		return verifiedToken{}, ErrBadToken
	}
	v.until = c.ExpiresAt.Time
	return v, nil
}

// newRefreshToken returns a random refresh token and the hash stored for it.
func newRefreshToken() (token string, hash []byte, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("refresh token: %w", err)
	}
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, hashRefreshToken(token), nil
}

func hashRefreshToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}
