package rpc

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/fairplay/fairplay/internal/routes"
)

// apiRequests is the request message of every /api route, by pattern, as
// the protos declare them.
var apiRequests = func() map[string]func() proto.Message {
	out := map[string]func() proto.Message{}
	for _, rt := range routes.MustAll() {
		mt, err := protoregistry.GlobalTypes.FindMessageByName(rt.Procedure.Input().FullName())
		if err != nil {
			panic(err)
		}
		out[rt.Pattern()] = func() proto.Message { return mt.New().Interface() }
	}
	return out
}()

// requestSeeds are the documented example bodies of the /api routes, valid
// and invalid, plus JSON edge cases.
var requestSeeds = []string{
	`{"username":"player1","email":"player1@example.com","password":"secret123","turnstileToken":"tok"}`,
	`{"username":"player1","password":"secret123","turnstileToken":"tok"}`,
	`{"refreshToken":"r"}`,
	`{"sessionId":"0b7e2b6c-3b1f-4b9a-9d1e-2d4f6a8c0e11"}`,
	`{"currentRefreshToken":"r"}`,
	`{"currentPassword":"secret123","newPassword":"secret456"}`,
	`{"currentPassword":"secret123","newPassword":5}`,
	`{"betAmount":2.5,"rollTarget":49.5}`,
	`{"betAmount":"2.5","rollTarget":"49.5"}`,
	`{"betAmount":123456789.12345678,"rollTarget":1e2}`,
	`{"betAmount":-0,"rollTarget":-1.5E-3}`,
	`{"betAmount":1,"rows":16,"risk":"high"}`,
	`{"betAmount":1,"rows":"8","risk":"low"}`,
	`{"betAmount":1,"selectedNumbers":[1,2,3,40],"riskLevel":"classic"}`,
	`{"betAmount":1,"selectedNumbers":[1.5]}`,
	`{"betAmount":1,"mineCount":3}`,
	`{"gameId":"g","row":0,"col":4}`,
	`{"betAmount":1,"difficulty":"expert"}`,
	`{"clientSeed":"my seed"}`,
	`{"amount":100,"note":"bonus"}`,
	`{"bet_amount":1,"roll_target":50}`,
	`{"betAmount":true}`,
	`{"betAmount":[1]}`,
	`{"betAmount":{"x":1}}`,
	`{"rows":99999999999}`,
	`{"page":1,"limit":"20"}`,
	`{"page":1,"limit":20,"game":"dice"}`,
	`{"hideUsername":true}`,
	`{"hideUsername":"yes"}`,
	`{"minAmount":100}`,
	`{"minAmount":"-1"}`,
	`{"x":null,"betAmount":null}`,
	`{}`,
	``,
	`   `,
	`[]`,
	`"text"`,
	`{"a":1}{"b":2}`,
	`{"betAmount":1`,
	"{\"clientSeed\":\"\xff\xfe\"}",
	`{"clientSeed":"a\u0000b"}`,
	`{"username":"\u0000","email":"x@example.com","password":"p\u0000"}`,
	`{"clientSeed":"\ud800"}`,
}

// FuzzDecodeRequest runs arbitrary bodies through the /api decoding path —
// readObject, the change-password check, decodeObject into every request
// type — and re-encodes what decodes.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/api/x", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		obj, err := readObject(r)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("readObject: empty error message")
			}
			return
		}
		if obj == nil {
			t.Fatal("readObject: nil object without an error")
		}
		_ = checkChangePassword(obj)
		for pattern, newMsg := range apiRequests {
			msg := newMsg()
			if err := decodeObject(msg.ProtoReflect(), obj); err != nil {
				if err.Error() == "" {
					t.Fatalf("%s: empty decode error", pattern)
				}
				continue
			}
			var buf bytes.Buffer
			encodeMessage(&buf, msg.ProtoReflect())
			if !json.Valid(buf.Bytes()) {
				t.Fatalf("%s: body %q re-encodes to invalid JSON %s", pattern, body, buf.Bytes())
			}
			// What passes the NUL check holds no NUL anywhere (the encoder
			// writes every string field, nested and listed ones included).
			if err := checkText(msg.ProtoReflect()); err == nil && holdsNUL(t, buf.Bytes()) {
				t.Fatalf("%s: body %q passed the NUL check but re-encodes to %s", pattern, body, buf.Bytes())
			} else if err != nil && !strings.Contains(err.Error(), "NUL") {
				t.Fatalf("%s: NUL check error %q", pattern, err)
			}
			checkDecimals(t, pattern, msg.ProtoReflect(), obj, buf.Bytes())
		}
	})
}

// holdsNUL reports whether any string of a JSON document, keys included,
// holds a NUL once decoded. The escape's text alone is not one: "\\u0000"
// is a backslash followed by u0000.
func holdsNUL(t *testing.T, doc []byte) bool {
	t.Helper()
	// Numbers stay text: a decimal such as 1e700 is valid JSON that no
	// float64 holds (found by this fuzzer).
	var v any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("re-decode %s: %v", doc, err)
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			return strings.ContainsRune(v, 0)
		case []any:
			for _, e := range v {
				if walk(e) {
					return true
				}
			}
		case map[string]any:
			for k, e := range v {
				if strings.ContainsRune(k, 0) || walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// checkDecimals asserts that each decimal field holds exactly the text of
// the JSON value it was decoded from, and that a JSON number goes back out
// as the same number text.
func checkDecimals(t *testing.T, pattern string, m protoreflect.Message, obj map[string]any, encoded []byte) {
	t.Helper()
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(encoded))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		t.Fatalf("%s: re-decode %s: %v", pattern, encoded, err)
	}
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Kind() != protoreflect.StringKind || fd.IsList() || !isDecimal(fd) {
			continue
		}
		// The texts the field may have come from: its JSON name and its
		// proto name (either is accepted).
		var sources []string
		for _, key := range []string{fd.JSONName(), fd.TextName()} {
			switch v := obj[key].(type) {
			case json.Number:
				sources = append(sources, v.String())
			case string:
				sources = append(sources, v)
			}
		}
		got := m.Get(fd).String()
		if len(sources) == 0 {
			if got != "" {
				t.Fatalf("%s: %s = %q from no input", pattern, fd.JSONName(), got)
			}
			continue
		}
		if !contains(sources, got) {
			t.Fatalf("%s: %s = %q, want one of %q", pattern, fd.JSONName(), got, sources)
		}
		if n, ok := out[fd.JSONName()].(json.Number); ok {
			if n.String() != got && got != "" {
				t.Fatalf("%s: %s encoded as %s, decoded text %q", pattern, fd.JSONName(), n, got)
			}
		} else if isJSONNumber(got) {
			t.Fatalf("%s: %s = %q encoded as %T, want the number", pattern, fd.JSONName(), got, out[fd.JSONName()])
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// FuzzIsJSONNumber checks isJSONNumber against encoding/json's grammar.
func FuzzIsJSONNumber(f *testing.F) {
	for _, s := range []string{"0", "-0", "1", "-1", "12.5", "1e5", "1E+5", "1e-05", "0.0", "123456789.12345678",
		"", "-", "01", "1.", ".5", "1e", "1e+", "+1", "--1", "1.5.5", "0x10", "1_000", "NaN", "Infinity", " 1", "1 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := isJSONNumber(s)
		if got && !json.Valid([]byte(s)) {
			t.Fatalf("isJSONNumber(%q) = true, but it is not valid JSON", s)
		}
		// Made only of number characters, s is valid JSON exactly when it
		// is a JSON number.
		if strings.Trim(s, "0123456789+-.eE") == "" {
			if want := json.Valid([]byte(s)); got != want {
				t.Fatalf("isJSONNumber(%q) = %v, json.Valid = %v", s, got, want)
			}
		}
	})
}
