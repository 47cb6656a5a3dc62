package accounts

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"

	"golang.org/x/crypto/argon2"
)

// Hasher hashes passwords with argon2id into the PHC string format
// ($argon2id$v=19$m=...,t=...,p=...$salt$hash). A semaphore bounds how many
// hashes run at once, because each one holds Memory KiB of RAM.
type Hasher struct {
	Memory  uint32 // KiB
	Time    uint32
	Threads uint8
	sem     chan struct{}

	inFlight atomic.Int64
	computed atomic.Uint64
}

// InFlight is how many argon2 computations are running now.
func (h *Hasher) InFlight() int { return int(h.inFlight.Load()) }

// Computed is how many argon2 computations have finished since the start.
func (h *Hasher) Computed() uint64 { return h.computed.Load() }

// key runs one argon2id computation inside the semaphore, counted.
func (h *Hasher) key(ctx context.Context, password string, salt []byte, t, m uint32, p uint8, n uint32) ([]byte, error) {
	if err := h.acquire(ctx); err != nil {
		return nil, err
	}
	h.inFlight.Add(1)
	key := argon2.IDKey([]byte(password), salt, t, m, p, n)
	h.inFlight.Add(-1)
	h.computed.Add(1)
	<-h.sem
	return key, nil
}

// DefaultHasher uses OWASP's argon2id baseline (19 MiB, 2 passes, 1 lane)
// with at most GOMAXPROCS hashes at once.
func DefaultHasher() *Hasher {
	return NewHasher(19*1024, 2, 1, runtime.GOMAXPROCS(0))
}

// NewHasher returns a Hasher with the given cost and concurrency.
func NewHasher(memoryKiB, passes uint32, threads uint8, concurrency int) *Hasher {
	return &Hasher{Memory: memoryKiB, Time: passes, Threads: threads, sem: make(chan struct{}, max(concurrency, 1))}
}

func (h *Hasher) acquire(ctx context.Context) error {
	select {
	case h.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Hash returns the PHC-encoded argon2id hash of password with a random salt.
func (h *Hasher) Hash(ctx context.Context, password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	key, err := h.key(ctx, password, salt, h.Time, h.Memory, h.Threads, 32)
	if err != nil {
		return "", err
	}
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, h.Memory, h.Time, h.Threads,
		enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

var errBadHash = errors.New("malformed password hash")

// Verify reports whether password matches the PHC-encoded hash, using the
// cost parameters stored in the hash.
func (h *Hasher) Verify(ctx context.Context, password, encoded string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || t == 0 || p == 0 {
		return false, errBadHash
	}
	enc := base64.RawStdEncoding
	salt, err := enc.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := enc.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, errBadHash
	}
	got, err := h.key(ctx, password, salt, t, m, p, uint32(len(want)))
	if err != nil {
		return false, err
	}
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
