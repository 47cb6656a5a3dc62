// Package jsontext appends JSON values to byte slices exactly as
// encoding/json's Marshal writes them, for the few types written on every
// bet (a bet's parameters and an instant game's outcome), where Marshal's
// reflection and its check of each MarshalJSON's output cost more than the
// bet's own draw. The types' AppendJSON methods use it; their tests hold
// them to Marshal's bytes.
package jsontext

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// AppendString appends s as a JSON string, escaped as json.Marshal escapes
// it (HTML characters included): printable ASCII and valid UTF-8 other than
// U+2028 and U+2029 are copied (a card's suit, "10♥", a hand's text), and a
// string with anything else goes through Marshal.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return appendMarshalled(b, s)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
			return appendMarshalled(b, s)
		}
		i += size
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendMarshalled(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

// AppendInts appends v as a JSON array of numbers; nil is null, as Marshal
// writes a nil slice.
func AppendInts(b []byte, v []int) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, n := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, ']')
}
