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
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
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
// A Stream allocates twice, in NewStream (itself and one SHA-256 digest); reading and
// SetNonce reuse its buffers and its keyed state. It is not safe for concurrent use, and
// not to be copied (its slices point into its own arrays).
//
// The HMAC is computed here rather than by crypto/hmac, whose New allocated ten objects
// (a twelfth of a dice bet's): the digest's state after the key's inner and outer pads
// is saved once (as crypto/hmac saves it) and restored for every round, so a round costs
// the same two SHA-256 blocks. TestStreamIsHMAC holds it to crypto/hmac.
type Stream struct {
	d      digest
	inner  []byte   // the digest's state after the inner pad (in innerB)
	outer  []byte   // its state after the outer pad (in outerB)
	msg    []byte   // "clientSeed:nonce:" followed by the round while hashing (in msgB when it fits)
	prefix int      // length of "clientSeed:"
	base   int      // length of "clientSeed:nonce:"
	round  uint64   // round of the bytes in buf
	buf    [32]byte // current round's HMAC output
	pos    int      // next unread byte of buf; len(buf) means the round is used up
	sum    [32]byte // the inner hash of the round
	innerB [128]byte
	outerB [128]byte
	msgB   [96]byte
	pad    [64]byte
}

// digest is a SHA-256 digest whose state can be saved and restored without allocating.
type digest interface {
	hash.Hash
	AppendBinary(b []byte) ([]byte, error)
	UnmarshalBinary(b []byte) error
}

// NewStream returns the stream of the bet with the given seeds and nonce, positioned at
// round 0, byte 0.
func NewStream(serverSeed, clientSeed string, nonce uint64) *Stream {
	s := &Stream{d: sha256.New().(digest)}
	s.key(serverSeed)
	s.msg = append(s.msgB[:0], clientSeed...)
	s.msg = append(s.msg, ':')
	s.prefix = len(s.msg)
	s.SetNonce(nonce)
	return s
}

// key saves the digest's states after HMAC's inner and outer pads of key (RFC 2104: a
// key longer than SHA-256's 64-byte block is hashed first).
func (s *Stream) key(key string) {
	pad := &s.pad // in the stream: a local would escape to the heap through the digest
	if len(key) > len(pad) {
		s.d.Reset()
		_, _ = io.WriteString(s.d, key)
		s.d.Sum(pad[:0])
	} else {
		copy(pad[:], key)
	}
	save := func(x byte, into []byte) []byte {
		for i := range pad {
			pad[i] ^= x
		}
		s.d.Reset()
		_, _ = s.d.Write(pad[:])
		st, err := s.d.AppendBinary(into[:0])
		if err != nil {
			panic("fair: saving a SHA-256 state: " + err.Error())
		}
		return st
	}
	s.inner = save(0x36, s.innerB[:])
	s.outer = save(0x36^0x5c, s.outerB[:]) // the inner pad undone, the outer applied
}

// SetNonce rewinds the stream to round 0, byte 0 of another nonce of the same seed pair,
// reusing the keyed state. It lets a verifier or a simulation walk many bets cheaply.
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
	s.restore(s.inner)
	_, _ = s.d.Write(s.msg)
	s.d.Sum(s.sum[:0])
	s.restore(s.outer)
	_, _ = s.d.Write(s.sum[:])
	s.d.Sum(s.buf[:0])
	s.pos = 0
}

func (s *Stream) restore(state []byte) {
	if err := s.d.UnmarshalBinary(state); err != nil {
		panic("fair: restoring a SHA-256 state: " + err.Error())
	}
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
