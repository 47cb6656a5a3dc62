package cache

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/fairplay/fairplay/internal/live"
	"github.com/fairplay/fairplay/internal/money"
)

func wireBets() []live.Bet {
	at := time.Date(2026, 11, 24, 20, 0, 0, 123456789, time.UTC)
	return []live.Bet{
		{ID: uuid.New(), Game: "dice", Username: "alice", Amount: 150_000_000, Multiplier: 198_000_000, Payout: 297_000_000, SettledAt: at},
		{ID: uuid.New(), Game: "blackjack", Username: "bob", Hidden: true, Amount: 1, Multiplier: 0, Payout: 0, SettledAt: at.Add(time.Second)},
		{ID: uuid.New(), Game: "keno", Username: strings.Repeat("é", 32), Amount: money.Amount(1) << 62, Multiplier: -1, Payout: money.Amount(1) << 62, SettledAt: time.Unix(0, -5).UTC()},
	}
}

func TestLiveWireRoundTrip(t *testing.T) {
	in := wireBets()
	payload := []byte{wireVersion}
	for _, b := range in {
		payload = appendWire(payload, b)
	}
	out, err := decodeLive(string(payload))
	if err != nil {
		t.Fatal(err)
	}
	want := append([]live.Bet(nil), in...)
	want[1].Username = "" // a hidden player's name never leaves the replica
	if len(out) != len(want) {
		t.Fatalf("decoded %d bets, want %d", len(out), len(want))
	}
	for i := range want {
		if out[i] != want[i] {
			t.Errorf("bet %d: got %+v, want %+v", i, out[i], want[i])
		}
	}
	if strings.Contains(string(payload), "bob") {
		t.Error("the hidden player's name is in the message")
	}
}

// olderJSON is bets as an older release published them.
func olderJSON(bets []live.Bet) []wireBet {
	ws := make([]wireBet, len(bets))
	for i, b := range bets {
		ws[i] = wireBet{ID: b.ID, Game: b.Game, Username: b.Username, Hidden: b.Hidden, Amount: int64(b.Amount),
			Multiplier: int64(b.Multiplier), Payout: int64(b.Payout), SettledAt: b.SettledAt.UnixNano()}
	}
	return ws
}

// An older release's replica publishes JSON; a rolling upgrade must not
// lose its bets.
func TestLiveWireReadsTheOlderJSON(t *testing.T) {
	in := wireBets()
	raw, err := json.Marshal(olderJSON(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeLive(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || out[0] != in[0] || out[1].Username != "" || !out[1].Hidden || out[2] != in[2] {
		t.Fatalf("got %+v", out)
	}
}

func TestLiveWireRefusesCorruptMessages(t *testing.T) {
	payload := appendWire([]byte{wireVersion}, wireBets()[0])
	for n := 2; n < len(payload); n++ {
		if _, err := decodeLive(string(payload[:n])); err == nil {
			t.Errorf("a message cut to %d of %d bytes decoded", n, len(payload))
		}
	}
	for _, bad := range []string{"", "\x01" + strings.Repeat("\x00", 17) + "\xff\xff\xff\xff\x0f", "\x02", "{"} {
		if _, err := decodeLive(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

func FuzzDecodeLive(f *testing.F) {
	f.Add(string(appendWire([]byte{wireVersion}, wireBets()[0])))
	f.Add(`[{"i":"00000000-0000-0000-0000-000000000000","g":"dice"}]`)
	f.Fuzz(func(t *testing.T, s string) {
		bets, err := decodeLive(s)
		if err != nil || len(s) == 0 || s[0] != wireVersion {
			return
		}
		// What decodes re-encodes to the same message (hidden names are
		// empty either way).
		again := []byte{wireVersion}
		for _, b := range bets {
			again = appendWire(again, b)
		}
		back, err := decodeLive(string(again))
		if err != nil || len(back) != len(bets) {
			t.Fatalf("re-encoded %d bets, decoded %d (%v)", len(bets), len(back), err)
		}
		for i := range bets {
			if back[i] != bets[i] {
				t.Fatalf("bet %d: %+v then %+v", i, bets[i], back[i])
			}
		}
	})
}

// BenchmarkLiveWire encodes and decodes one message of three bets in the
// binary format and in the JSON an older release published.
func BenchmarkLiveWire(b *testing.B) {
	bets := wireBets()
	b.Run("binary", func(b *testing.B) {
		var payload []byte
		for b.Loop() {
			payload = append(payload[:0], wireVersion)
			for _, x := range bets {
				payload = appendWire(payload, x)
			}
			if _, err := decodeLive(string(payload)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		for b.Loop() {
			payload, err := json.Marshal(olderJSON(bets))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := decodeLive(string(payload)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
