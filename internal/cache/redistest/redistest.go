// Package redistest gives tests a Redis client and a key prefix of their
// own on the server named by REDIS_URL; a test that cannot reach it fails.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/fairplay/fairplay/internal/cache"
)

// New returns a client and a unique key prefix; keys under it are deleted
// when the test ends.
func New(t testing.TB) (*redis.Client, string) {
	t.Helper()
	u := os.Getenv("REDIS_URL")
	if u == "" {
		t.Fatal("REDIS_URL is not set: run the tests with `make test`, which starts a local Redis")
	}
	c, err := cache.Open(u)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("redis at %s: %v", u, err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	prefix := "test:" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		_ = c.Close()
	})
	return c, prefix
}
