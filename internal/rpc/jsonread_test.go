package rpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// stdJSON is what encoding/json reads, the way readObject used to.
func stdJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errJSONSyntax // more after the document
	}
	return v, nil
}

var jsonSeeds = []string{
	`{}`, `[]`, `{"amount": 1.50, "target": "50.5", "condition": "over"}`, ` {"a" : [1, -0, 0.5e-3, 2E+10, true, false, null]} `,
	`{"a":{"b":{"c":[{}]}}}`, `"\u00e9\ud83d\ude00\ud800x\udc00\"\\\/\b\f\n\r\t"`, "\"\xff\xfeok\"", `{"a":1,"a":2}`,
	`01`, `-`, `1.`, `1e`, `.5`, `+1`, `{"a"}`, `{"a":}`, `[1,]`, `{,}`, `tru`, `nul`, `"\x"`, "\"a\x01\"", `"\u12"`,
	`{} }`, `{}x`, `[1 2]`, `"\ud800\u12zz"`, `{"a":1}{"b":2}`, `1 `, "\t\n\r 7", `"` + strings.Repeat("é", 20) + `"`,
	`"\u0000"`, `{"key\u0000":"v"}`, `[[[[[[[[[[]]]]]]]]]]`, `9007199254740993123456789`,
}

func TestParseJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range jsonSeeds {
		checkAgainstStd(t, []byte(s))
	}
	deep := strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1)
	if _, err := parseJSON([]byte(deep)); err == nil {
		t.Error("a document nested deeper than encoding/json allows was read")
	}
	if _, err := parseJSON([]byte(strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth))); err != nil {
		t.Errorf("nesting encoding/json allows was refused: %v", err)
	}
}

func checkAgainstStd(t *testing.T, data []byte) {
	t.Helper()
	got, err := parseJSON(data)
	want, wantErr := stdJSON(data)
	// A valid document with something after it: encoding/json's Decoder
	// stops after the document; parseJSON refuses the whole body.
	if wantErr == nil && err != nil && !json.Valid(data) {
		return
	}
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: parseJSON err %v, encoding/json err %v", data, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: parseJSON %#v, encoding/json %#v", data, got, want)
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkAgainstStd)
}

func BenchmarkReadDiceBody(b *testing.B) {
	body := []byte(`{"amount":1.5,"target":50.5,"condition":"over"}`)
	b.Run("parseJSON", func(b *testing.B) {
		for b.Loop() {
			if _, err := parseJSON(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			if _, err := stdJSON(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}
