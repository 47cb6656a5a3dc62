package rpc

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// parseJSON reads one JSON document into what encoding/json's Decoder with
// UseNumber would: map[string]any, []any, string, json.Number, bool or nil
// (a repeated key keeps its last value, invalid UTF-8 in a string becomes
// U+FFFD). Text after the document other than white space is an error.
//
// It exists for speed: decoding each /api body with encoding/json (its
// Decoder's buffer, the reflection into an interface) was ~5% of the
// server's CPU per dice bet and a tenth of the bytes it allocated (make
// bench's profile). FuzzParseJSON holds it to encoding/json's answers.
func parseJSON(data []byte) (any, error) {
	p := jsonParser{data: data}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.data) {
		return nil, p.fail()
	}
	return v, nil
}

// maxJSONDepth is encoding/json's bound on nesting.
const maxJSONDepth = 10000

var errJSONSyntax = errors.New("invalid JSON")

type jsonParser struct {
	data []byte
	i    int
	buf  []byte // a string's bytes while its escapes are undone
}

func (p *jsonParser) fail() error { return errJSONSyntax }

func (p *jsonParser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (any, error) {
	if p.i >= len(p.data) {
		return nil, p.fail()
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, p.fail()
}

func (p *jsonParser) literal(word string) error {
	if len(p.data)-p.i < len(word) || string(p.data[p.i:p.i+len(word)]) != word {
		return p.fail()
	}
	p.i += len(word)
	return nil
}

func (p *jsonParser) object(depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, p.fail()
	}
	p.i++ // {
	obj := make(map[string]any, 4)
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return obj, nil
	}
	for {
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, p.fail()
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, p.fail()
		}
		p.i++
		p.space()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		obj[key] = v
		if end, err := p.after('}'); err != nil || end {
			return obj, err
		}
	}
}

func (p *jsonParser) array(depth int) (any, error) {
	if depth > maxJSONDepth {
		return nil, p.fail()
	}
	p.i++ // [
	arr := []any{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return arr, nil
	}
	for {
		p.space()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		if end, err := p.after(']'); err != nil || end {
			return arr, err
		}
	}
}

// after reads what follows a member of an object or an element of an
// array: a comma (more follow) or the closing bracket (end).
func (p *jsonParser) after(closing byte) (end bool, err error) {
	p.space()
	if p.i < len(p.data) {
		switch p.data[p.i] {
		case ',':
			p.i++
			return false, nil
		case closing:
			p.i++
			return true, nil
		}
	}
	return false, p.fail()
}

// number reads a number in JSON's grammar, kept as its text.
func (p *jsonParser) number() (any, error) {
	start := p.i
	if p.data[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.data) && p.data[p.i] == '0':
		p.i++
	case p.i < len(p.data) && p.data[p.i] >= '1' && p.data[p.i] <= '9':
		p.digits()
	default:
		return nil, p.fail()
	}
	if p.i < len(p.data) && p.data[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return nil, p.fail()
		}
	}
	if p.i < len(p.data) && (p.data[p.i] == 'e' || p.data[p.i] == 'E') {
		p.i++
		if p.i < len(p.data) && (p.data[p.i] == '+' || p.data[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return nil, p.fail()
		}
	}
	return json.Number(p.data[start:p.i]), nil
}

func (p *jsonParser) digits() int {
	n := 0
	for p.i < len(p.data) && p.data[p.i] >= '0' && p.data[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

// str reads a string (p.i at its opening quote).
func (p *jsonParser) str() (string, error) {
	p.i++ // "
	start := p.i
	// The common case: no escape, no control character, valid UTF-8.
	for p.i < len(p.data) {
		c := p.data[p.i]
		if c == '"' {
			s := p.data[start:p.i]
			p.i++
			return string(s), nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		p.i++
	}
	p.buf = append(p.buf[:0], p.data[start:p.i]...)
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == '"':
			p.i++
			return string(p.buf), nil
		case c < 0x20:
			return "", p.fail()
		case c == '\\':
			if err := p.escape(); err != nil {
				return "", err
			}
		case c < utf8.RuneSelf:
			p.buf = append(p.buf, c)
			p.i++
		default:
			r, size := utf8.DecodeRune(p.data[p.i:])
			if r == utf8.RuneError && size == 1 {
				p.buf = utf8.AppendRune(p.buf, utf8.RuneError)
			} else {
				p.buf = append(p.buf, p.data[p.i:p.i+size]...)
			}
			p.i += size
		}
	}
	return "", p.fail()
}

// escape undoes one backslash escape into p.buf.
func (p *jsonParser) escape() error {
	if p.i+1 >= len(p.data) {
		return p.fail()
	}
	c := p.data[p.i+1]
	p.i += 2
	switch c {
	case '"', '\\', '/':
		p.buf = append(p.buf, c)
	case 'b':
		p.buf = append(p.buf, '\b')
	case 'f':
		p.buf = append(p.buf, '\f')
	case 'n':
		p.buf = append(p.buf, '\n')
	case 'r':
		p.buf = append(p.buf, '\r')
	case 't':
		p.buf = append(p.buf, '\t')
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return p.fail()
		}
		if utf16.IsSurrogate(r) {
			// A pair makes one rune; anything else leaves U+FFFD (and
			// what follows is read on its own), as encoding/json does.
			if p.i+1 < len(p.data) && p.data[p.i] == '\\' && p.data[p.i+1] == 'u' {
				save := p.i
				p.i += 2
				r2, ok := p.hex4()
				if !ok {
					return p.fail()
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					p.buf = utf8.AppendRune(p.buf, dec)
					return nil
				}
				p.i = save
			}
			r = utf8.RuneError
		}
		p.buf = utf8.AppendRune(p.buf, r)
	default:
		return p.fail()
	}
	return nil
}

func (p *jsonParser) hex4() (rune, bool) {
	if len(p.data)-p.i < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.data[p.i:p.i+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}
