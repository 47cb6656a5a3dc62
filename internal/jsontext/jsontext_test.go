package jsontext_test

import (
	"encoding/json"
	"testing"

	"github.com/fairplay/fairplay/internal/jsontext"
)

var texts = []string{"", "low", "50.5", "hhsdp", `a"b`, `a\b`, "<script>", "a&b", "x>y", "tab\there", "\x00", "\x1f",
	"\x7f", "é", "日本", "\u2028\u2029", "\xff", "a\xc3", "\U0001F600",
	"10♥", "A♠ 10♥ (21, soft)", "\ufffd", "a\u2028", "\ufeff", "\xed\xa0\x80", "\xf4\x90\x80\x80", "♥\x80"}

func TestAppendStringIsMarshal(t *testing.T) {
	t.Parallel()
	for _, s := range texts {
		want, _ := json.Marshal(s)
		if got := jsontext.AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("AppendString(%q) = %s, want x%s", s, got, want)
		}
	}
}

func TestAppendIntsIsMarshal(t *testing.T) {
	t.Parallel()
	for _, v := range [][]int{nil, {}, {0}, {1, -2, 40}, {9223372036854775807, -9223372036854775808}} {
		want, _ := json.Marshal(v)
		if got := jsontext.AppendInts(nil, v); string(got) != string(want) {
			t.Errorf("AppendInts(%v) = %s, want %s", v, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range texts {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := jsontext.AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %s, want %s", s, got, want)
		}
	})
}
