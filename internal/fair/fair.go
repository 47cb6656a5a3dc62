// Package fair is Fairplay's provably-fair engine, compatible with Stake's published scheme
// (reference/games.md §1), so that any public Stake verifier reproduces our outcomes.
//
// The casino commits to a secret server seed by showing its SHA-256 hash before play. Every
// bet on a seed pair has a nonce, increasing by one per bet. The outcome of a bet is read
// from a byte stream: round r = 0, 1, 2, … contributes the 32 bytes of
// HMAC-SHA256(key = server seed as text, message = "clientSeed:nonce:r"), consumed in
// order; each group of 4 bytes is a float b0/256 + b1/256² + b2/256³ + b3/256⁴ in [0, 1).
// Once the player rotates the pair, the server seed is revealed and anyone can recompute
// the stream and check the hash.
//
// The games (internal/games/...) consume floats through their own small Source interface,
// which *Stream satisfies; this package knows nothing about games.
package fair

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"strconv"
)

// serverSeedBytes is the entropy of a server seed: 32 bytes, shown as 64 hex characters.
const serverSeedBytes = 32

// clientSeedBytes is the entropy of a generated client seed: 8 bytes, 16 hex characters.
// Players may replace it with any text they like.
const clientSeedBytes = 8

// NewServerSeed returns a fresh secret server seed: 64 lowercase hex characters from
// crypto/rand. The seed is used as text (its ASCII bytes are the HMAC key), never hex-decoded.
func NewServerSeed() (string, error) {
	return randomHex(serverSeedBytes)
}

// NewClientSeed returns a default client seed for a new seed pair: 16 lowercase hex
// characters from crypto/rand.
func NewClientSeed() (string, error) {
	return randomHex(clientSeedBytes)
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("read random seed: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// HashServerSeed returns the commitment shown to the player before play: the lowercase hex
// SHA-256 of the seed string's bytes.
func HashServerSeed(seed string) string {
	sum := sha256.Sum256([]byte(seed))
	return hex.EncodeToString(sum[:])
}

// VerifyServerSeed reports whether a revealed seed matches a commitment made with
// HashServerSeed. The hex comparison ignores letter case.
func VerifyServerSeed(seed, hashHex string) bool {
	want, err := hex.DecodeString(hashHex)
	if err != nil {
		return false
	}
	sum := sha256.Sum256([]byte(seed))
	return subtle.ConstantTimeCompare(sum[:], want) == 1
}

// Stream is the byte and float stream of one bet: HMAC-SHA256 rounds keyed with the server
// seed over "clientSeed:nonce:round", read in order.
//
// A Stream allocates once, in NewStream; reading and SetNonce reuse its buffers and its
// keyed HMAC. It is not safe for concurrent use.
type Stream struct {
	mac    hash.Hash
	msg    []byte   // "clientSeed:nonce:" followed by the round while hashing
	prefix int      // length of "clientSeed:"
	base   int      // length of "clientSeed:nonce:"
	round  uint64   // round of the bytes in buf
	buf    [32]byte // current round's HMAC output
	pos    int      // next unread byte of buf; len(buf) means the round is used up
}

// NewStream returns the stream of the bet with the given seeds and nonce, positioned at
// round 0, byte 0.
func NewStream(serverSeed, clientSeed string, nonce uint64) *Stream {
	s := &Stream{mac: hmac.New(sha256.New, []byte(serverSeed))}
	s.msg = make([]byte, 0, len(clientSeed)+1+2*20+2)
	s.msg = append(s.msg, clientSeed...)
	s.msg = append(s.msg, ':')
	s.prefix = len(s.msg)
	s.SetNonce(nonce)
	return s
}

// SetNonce rewinds the stream to round 0, byte 0 of another nonce of the same seed pair,
// reusing the keyed HMAC. It lets a verifier or a simulation walk many bets cheaply.
func (s *Stream) SetNonce(nonce uint64) {
	s.msg = strconv.AppendUint(s.msg[:s.prefix], nonce, 10)
	s.msg = append(s.msg, ':')
	s.base = len(s.msg)
	s.round = 0
	s.fill()
}

// fill computes the HMAC of the current round into buf and rewinds pos.
func (s *Stream) fill() {
	s.msg = strconv.AppendUint(s.msg[:s.base], s.round, 10)
	s.mac.Reset()
	s.mac.Write(s.msg)
	s.mac.Sum(s.buf[:0])
	s.pos = 0
}

// Byte returns the next byte of the stream, moving on to the next round (the "cursor")
// once the current round's 32 bytes are used up.
func (s *Stream) Byte() byte {
	if s.pos == len(s.buf) {
		s.round++
		s.fill()
	}
	b := s.buf[s.pos]
	s.pos++
	return b
}

// Float returns the next float of the stream, built from the next 4 bytes as
// b0/256 + b1/256² + b2/256³ + b3/256⁴, a value in [0, 1).
//
// It is computed as float64(uint32 big-endian)/2³², which is bit-for-bit the same number:
// every partial sum of the four terms is a multiple of 2⁻³² below 1 and so exact in a
// float64, and so is the quotient.
func (s *Stream) Float() float64 {
	var u uint32
	if s.pos+4 <= len(s.buf) {
		u = binary.BigEndian.Uint32(s.buf[s.pos:])
		s.pos += 4
	} else { // only reachable after an odd number of Byte calls
		u = uint32(s.Byte())<<24 | uint32(s.Byte())<<16 | uint32(s.Byte())<<8 | uint32(s.Byte())
	}
	return float64(u) / (1 << 32)
}

// Floats returns the next n floats of the stream.
func (s *Stream) Floats(n int) []float64 {
	fs := make([]float64, n)
	for i := range fs {
		fs[i] = s.Float()
	}
	return fs
}
