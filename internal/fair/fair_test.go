package fair

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"testing"
)

// reference is a deliberately naive implementation of games.md §1, written straight from
// the text: a fresh HMAC per round and the float as the sum of four fractions.
type reference struct {
	server, client string
	nonce          uint64
	round          int
	bytes          []byte
}

func (r *reference) next() byte {
	if len(r.bytes) == 0 {
		mac := hmac.New(sha256.New, []byte(r.server))
		fmt.Fprintf(mac, "%s:%d:%d", r.client, r.nonce, r.round)
		r.bytes = mac.Sum(nil)
		r.round++
	}
	b := r.bytes[0]
	r.bytes = r.bytes[1:]
	return b
}

func (r *reference) float() float64 {
	f := 0.0
	div := 1.0
	for range 4 {
		div *= 256
		f += float64(r.next()) / div
	}
	return f
}

func TestStreamVectors(t *testing.T) {
	t.Parallel()
	// games.json fairness.test_vectors.bytes_some_server_seed (lucasholder/fair).
	s := NewStream("some server seed", "some client seed", 1)
	wantBytes := []byte{151, 136, 121, 135, 209, 159, 189, 233, 43, 248, 146, 253}
	for i, want := range wantBytes {
		if got := s.Byte(); got != want {
			t.Fatalf("byte %d = %d, want %d", i, got, want)
		}
	}
	s = NewStream("some server seed", "some client seed", 1)
	got := s.Floats(4)
	for i, want := range []float64{0.5919261889066547, 0.81884371698834, 0.17176169087179005, 0.277875404804945} {
		if got[i] != want {
			t.Errorf("float %d = %v, want %v", i, got[i], want)
		}
	}
}

func TestHashServerSeed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		seed, want string
	}{
		{"server seed", "a4e53dc2f480b8fce6fe688b1317658b446299df23ad533394406427c8c19557"},
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	}
	for _, tt := range tests {
		t.Run(tt.seed, func(t *testing.T) {
			t.Parallel()
			if got := HashServerSeed(tt.seed); got != tt.want {
				t.Fatalf("HashServerSeed(%q) = %s, want %s", tt.seed, got, tt.want)
			}
			if !VerifyServerSeed(tt.seed, tt.want) {
				t.Fatalf("VerifyServerSeed(%q, own hash) = false", tt.seed)
			}
		})
	}
}

func TestVerifyServerSeed(t *testing.T) {
	t.Parallel()
	const h = "a4e53dc2f480b8fce6fe688b1317658b446299df23ad533394406427c8c19557"
	tests := []struct {
		name, seed, hash string
		want             bool
	}{
		{"match", "server seed", h, true},
		{"upper-case hex", "server seed", "A4E53DC2F480B8FCE6FE688B1317658B446299DF23AD533394406427C8C19557", true},
		{"other seed", "server seed!", h, false},
		{"truncated hash", "server seed", h[:62], false},
		{"not hex", "server seed", "zz" + h[2:], false},
		{"empty hash", "server seed", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := VerifyServerSeed(tt.seed, tt.hash); got != tt.want {
				t.Fatalf("VerifyServerSeed = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNewSeeds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		gen  func() (string, error)
		re   *regexp.Regexp
	}{
		{"server", NewServerSeed, regexp.MustCompile(`^[0-9a-f]{64}$`)},
		{"client", NewClientSeed, regexp.MustCompile(`^[0-9a-f]{16}$`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			seen := map[string]bool{}
			for range 100 {
				s, err := tt.gen()
				if err != nil {
					t.Fatal(err)
				}
				if !tt.re.MatchString(s) {
					t.Fatalf("seed %q does not match %s", s, tt.re)
				}
				if seen[s] {
					t.Fatalf("seed %q generated twice", s)
				}
				seen[s] = true
			}
		})
	}
}

// TestStreamMatchesReference reads across several rounds, mixing Byte and Float so that
// floats straddle a round boundary, and compares with the naive reference.
func TestStreamMatchesReference(t *testing.T) {
	t.Parallel()
	tests := []struct {
		server, client string
		nonce          uint64
		pattern        string // b = Byte, f = Float
	}{
		{"server seed", "client seed", 1, "ffffffffffffffffffffffffffffffff"},
		{"server seed", "client seed", 0, "bffffffffffffffffffff"},
		{"564e967b90f03d0153fdcb2d2d1cc5a5057e0df78163611fe3801d6498e681ca", "zXv1upuFns", 5663, "fbbbfbfbfbbbbbbbbbbbbbbbbbbbbbffff"},
		{"", "", 18446744073709551615, "fffffffffbfffffffffffff"},
		{"ключ", "клиент:с:двоеточиями", 42, "ffbffbffbffbffbffbffb"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", tt.client, tt.nonce), func(t *testing.T) {
			t.Parallel()
			s := NewStream(tt.server, tt.client, tt.nonce)
			ref := &reference{server: tt.server, client: tt.client, nonce: tt.nonce}
			for i, op := range tt.pattern {
				if op == 'b' {
					if got, want := s.Byte(), ref.next(); got != want {
						t.Fatalf("op %d: Byte = %d, want %d", i, got, want)
					}
					continue
				}
				if got, want := s.Float(), ref.float(); got != want {
					t.Fatalf("op %d: Float = %v, want %v", i, got, want)
				}
			}
		})
	}
}

func TestSetNonce(t *testing.T) {
	t.Parallel()
	s := NewStream("server seed", "client seed", 1)
	s.Floats(20) // move into round 2
	for _, nonce := range []uint64{7, 1, 123456789} {
		s.SetNonce(nonce)
		fresh := NewStream("server seed", "client seed", nonce)
		got, want := s.Floats(17), fresh.Floats(17)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("nonce %d float %d = %v after SetNonce, want %v", nonce, i, got[i], want[i])
			}
		}
	}
}

func TestStreamAllocations(t *testing.T) {
	s := NewStream("server seed", "client seed", 1)
	nonce := uint64(0)
	allocs := testing.AllocsPerRun(100, func() {
		nonce++
		s.SetNonce(nonce)
		for range 24 {
			s.Float()
		}
	})
	if allocs != 0 {
		t.Fatalf("SetNonce + 24 floats allocate %v times, want 0", allocs)
	}
}

func TestHexSeedIsNotDecoded(t *testing.T) {
	t.Parallel()
	// The key is the seed's text: a hex seed and its decoded bytes give different streams.
	seed := "18e93f4a7b5b58d2569765766d1b6c3296bbd8430d6f20249044d72f14720159"
	raw, _ := hex.DecodeString(seed)
	if NewStream(seed, "bb62964774", 1).Float() == NewStream(string(raw), "bb62964774", 1).Float() {
		t.Fatal("hex-decoded key gave the same stream")
	}
}

// sink keeps benchmark results alive so the compiler cannot drop the work or its allocation.
var sink []float64

func BenchmarkStream(b *testing.B) {
	b.Run("NewStream+Float", func(b *testing.B) {
		b.ReportAllocs()
		for i := range b.N {
			NewStream("564e967b90f03d0153fdcb2d2d1cc5a5057e0df78163611fe3801d6498e681ca", "zXv1upuFns", uint64(i)).Float()
		}
	})
	b.Run("SetNonce+Float", func(b *testing.B) {
		// One bet of a one-float game (Dice): one HMAC round.
		s := NewStream("564e967b90f03d0153fdcb2d2d1cc5a5057e0df78163611fe3801d6498e681ca", "zXv1upuFns", 0)
		b.ReportAllocs()
		for i := range b.N {
			s.SetNonce(uint64(i))
			s.Float()
		}
	})
	b.Run("Float", func(b *testing.B) {
		// Steady-state cost per float: one HMAC round per 8 floats.
		s := NewStream("564e967b90f03d0153fdcb2d2d1cc5a5057e0df78163611fe3801d6498e681ca", "zXv1upuFns", 0)
		b.ReportAllocs()
		for range b.N {
			s.Float()
		}
	})
	b.Run("Floats52", func(b *testing.B) {
		// A blackjack deck: 52 floats, 7 rounds.
		s := NewStream("564e967b90f03d0153fdcb2d2d1cc5a5057e0df78163611fe3801d6498e681ca", "zXv1upuFns", 0)
		b.ReportAllocs()
		for i := range b.N {
			s.SetNonce(uint64(i))
			sink = s.Floats(52)
		}
	})
}

func FuzzStream(f *testing.F) {
	f.Add("server seed", "client seed", uint64(1), uint16(30), uint64(0))
	f.Add("some server seed", "some client seed", uint64(1), uint16(3), uint64(5))
	f.Add("", "", uint64(0), uint16(0), uint64(1))
	f.Fuzz(func(t *testing.T, server, client string, nonce uint64, n uint16, bytePattern uint64) {
		n %= 200
		a := NewStream(server, client, nonce)
		b := NewStream(server, client, nonce)
		ref := &reference{server: server, client: client, nonce: nonce}
		for i := range int(n) {
			if i < 64 && bytePattern&(1<<i) != 0 {
				x, y, z := a.Byte(), b.Byte(), ref.next()
				if x != y || x != z {
					t.Fatalf("byte %d: %d, %d, reference %d", i, x, y, z)
				}
				continue
			}
			x, y, z := a.Float(), b.Float(), ref.float()
			if !(x >= 0 && x < 1) {
				t.Fatalf("float %d = %v, outside [0, 1)", i, x)
			}
			if x != y || x != z {
				t.Fatalf("float %d: %v, %v, reference %v", i, x, y, z)
			}
		}
	})
}

// TestStreamIsHMAC: the stream's own HMAC (saved pad states restored every round) gives
// crypto/hmac's bytes for keys shorter than, as long as and longer than SHA-256's block
// (hashed first), client seeds that fit the stream's buffer and longer ones, several
// rounds, and nonces walked with SetNonce.
func TestStreamIsHMAC(t *testing.T) {
	t.Parallel()
	for _, keyLen := range []int{0, 1, 16, 55, 63, 64, 65, 100, 128, 200} {
		for _, clientLen := range []int{0, 1, 10, 64, 90, 200} {
			key := make([]byte, keyLen)
			for i := range key {
				key[i] = byte('a' + (i*7+keyLen)%26)
			}
			client := make([]byte, clientLen)
			for i := range client {
				client[i] = byte('0' + (i*3+clientLen)%75)
			}
			s := NewStream(string(key), string(client), 0)
			for _, nonce := range []uint64{1, 2, 999999999999} {
				s.SetNonce(nonce)
				ref := &reference{server: string(key), client: string(client), nonce: nonce}
				for i := range 32 * 3 {
					if got, want := s.Byte(), ref.next(); got != want {
						t.Fatalf("key %d bytes, client seed %d, nonce %d, byte %d: %d, want %d",
							keyLen, clientLen, nonce, i, got, want)
					}
				}
			}
		}
	}
}
