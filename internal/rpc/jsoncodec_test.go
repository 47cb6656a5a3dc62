package rpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
)

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMoneyIsExactTextBothWays(t *testing.T) {
	t.Parallel()
	u := &fairplayv1.User{}
	// 17 significant digits: float64 would round this.
	if err := decodeObject(u.ProtoReflect(), decodeJSON(t, `{"_id":"x","balance":123456789.12345678,"isAdmin":true}`)); err != nil {
		t.Fatal(err)
	}
	if u.GetBalance() != "123456789.12345678" || u.GetId() != "x" || !u.GetIsAdmin() {
		t.Fatalf("decoded %+v", u)
	}
	var buf bytes.Buffer
	encodeMessage(&buf, u.ProtoReflect())
	want := `{"_id":"x","username":"","email":"","balance":123456789.12345678,"isAdmin":true,"hideUsername":false,"twoFactorEnabled":false}`
	if buf.String() != want {
		t.Fatalf("encoded %s\nwant    %s", buf.String(), want)
	}
}

func TestDecodeTypeErrors(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"username": 5}`:          "username must be a string",
		`{"username": ["a"]}`:      "username must be a string",
		`{"turnstileToken": true}`: "turnstileToken must be a string",
	} {
		err := decodeObject((&fairplayv1.LoginRequest{}).ProtoReflect(), decodeJSON(t, body))
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %q", body, err, want)
		}
	}
	// Unknown fields and nulls are ignored; proto names are accepted too.
	m := &fairplayv1.RevokeOtherSessionsRequest{}
	if err := decodeObject(m.ProtoReflect(), decodeJSON(t, `{"confirm":1,"current_refresh_token":"r","x":null}`)); err != nil || m.GetCurrentRefreshToken() != "r" {
		t.Fatalf("lenient decode: %v %v", m, err)
	}
}

func TestEncodeListsAndNestedMessages(t *testing.T) {
	t.Parallel()
	res := &fairplayv1.ListSessionsResponse{Sessions: []*fairplayv1.Session{{Id: "s1", DeviceInfo: &fairplayv1.DeviceInfo{Mobile: "Mobile"}}}}
	var buf bytes.Buffer
	encodeMessage(&buf, res.ProtoReflect())
	var back map[string]any
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("invalid JSON %s: %v", buf.String(), err)
	}
	s := back["sessions"].([]any)[0].(map[string]any)
	if s["_id"] != "s1" || s["deviceInfo"].(map[string]any)["mobile"] != "Mobile" {
		t.Fatalf("encoded %s", buf.String())
	}
	buf.Reset()
	encodeMessage(&buf, (&fairplayv1.ListSessionsResponse{}).ProtoReflect())
	if buf.String() != `{"sessions":[]}` {
		t.Fatalf("empty list encoded as %s", buf.String())
	}
}

func TestJSONNameWinsOverProtoName(t *testing.T) {
	t.Parallel()
	for range 50 { // map iteration order varies; the result must not
		m := &fairplayv1.PlayDiceRequest{}
		if err := decodeObject(m.ProtoReflect(), decodeJSON(t, `{"betAmount":1,"bet_amount":true,"roll_target":2}`)); err != nil {
			t.Fatal(err)
		}
		if m.GetBetAmount() != "1" || m.GetRollTarget() != "2" {
			t.Fatalf("decoded %v", m)
		}
	}
}

// appendString must write what encoding/json writes, byte for byte: the
// /api bodies did not change when it replaced json.Marshal.
var appendStringCases = []string{
	"", "plain", `quote " and \ backslash`, "<script>&amp;</script>", "tab\tnew\nline\rcr\bbs\fff",
	"\x00\x01\x1f\x7f", "é ü 日本 🎲", "\u2028\u2029", "bad \xff\xfe utf8", "\xed\xa0\x80", "end\xc3",
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range appendStringCases {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); string(got) != string(want) {
			t.Errorf("appendString(%q) = %s, encoding/json writes %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range appendStringCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); string(got) != string(want) {
			t.Fatalf("appendString(%q) = %s, encoding/json writes %s", s, got, want)
		}
	})
}

// Every plain string field of the protos (no presence, no oneof) is found
// in its generated struct and set there directly, to what protoreflect's
// Set gives; other string fields go through Set. Decoding a dice bet's body
// allocates nothing for its two decimals beyond the message.
func TestStringFieldsSetDirectly(t *testing.T) {
	direct := 0
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		if mt.Descriptor().ParentFile().Package() != "fairplay.v1" {
			return true
		}
		fields := mt.Descriptor().Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			if fd.Kind() != protoreflect.StringKind || fd.IsList() || fd.IsMap() {
				continue
			}
			plain := !fd.HasPresence() && fd.ContainingOneof() == nil
			if found := infoOf(fd).goType != nil; found != plain {
				t.Errorf("%s: found in the struct %v, plain %v", fd.FullName(), found, plain)
				continue
			}
			a, b := mt.New(), mt.New()
			setString(a, fd, "1.25 ü")
			b.Set(fd, protoreflect.ValueOfString("1.25 ü"))
			if !proto.Equal(a.Interface(), b.Interface()) || a.Get(fd).String() != "1.25 ü" {
				t.Errorf("%s: set directly %v, by protoreflect %v", fd.FullName(), a.Interface(), b.Interface())
			}
			if plain {
				direct++
			}
		}
		return true
	})
	if direct == 0 {
		t.Fatal("no plain string field found")
	}

	obj := decodeJSON(t, `{"betAmount": 1.5, "rollTarget": 50.5}`)
	var req fairplayv1.PlayDiceRequest
	if err := decodeObject(req.ProtoReflect(), obj); err != nil || req.GetBetAmount() != "1.5" || req.GetRollTarget() != "50.5" {
		t.Fatalf("dice body: %v %v", &req, err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		req := &fairplayv1.PlayDiceRequest{}
		_ = decodeObject(req.ProtoReflect(), obj)
	})
	if allocs > 1 {
		t.Errorf("decoding a dice body allocates %v times, want the message alone", allocs)
	}
}
