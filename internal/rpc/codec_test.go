package rpc

import (
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
)

// The Connect handlers' codecs round-trip a message in every form, as
// connect-go's do: JSON discards unknown fields and refuses an empty body.
func TestConnectCodecsRoundTrip(t *testing.T) {
	want := &fairplayv1.PlayDiceRequest{BetAmount: "1.5", RollTarget: "50.5"}
	for _, c := range []interface {
		connect.Codec
		MarshalAppend([]byte, any) ([]byte, error)
	}{protoCodec{}, jsonCodec{name: "json"}, jsonCodec{name: "json; charset=utf-8"}} {
		for name, marshal := range map[string]func() ([]byte, error){
			"Marshal":       func() ([]byte, error) { return c.Marshal(want) },
			"MarshalAppend": func() ([]byte, error) { return c.MarshalAppend([]byte("x"), want) },
		} {
			raw, err := marshal()
			if err != nil {
				t.Fatalf("%s %s: %v", c.Name(), name, err)
			}
			if name == "MarshalAppend" {
				if raw[0] != 'x' {
					t.Fatalf("%s MarshalAppend did not append: %q", c.Name(), raw)
				}
				raw = raw[1:]
			}
			got := new(fairplayv1.PlayDiceRequest)
			if err := c.Unmarshal(raw, got); err != nil || !proto.Equal(got, want) {
				t.Fatalf("%s %s then Unmarshal: %v, %v", c.Name(), name, got, err)
			}
		}
		if _, err := c.Marshal("not a message"); err == nil {
			t.Fatalf("%s marshalled a string", c.Name())
		}
		if err := c.Unmarshal(nil, new(int)); err == nil {
			t.Fatalf("%s unmarshalled into an int", c.Name())
		}
	}
	got := new(fairplayv1.PlayDiceRequest)
	if err := (jsonCodec{}).Unmarshal([]byte(`{"betAmount":"2","fromANewerSchema":1}`), got); err != nil || got.GetBetAmount() != "2" {
		t.Fatalf("an unknown JSON field: %v, %v", got, err)
	}
	if err := (jsonCodec{}).Unmarshal(nil, got); err == nil {
		t.Fatal("an empty JSON body was accepted")
	}
}
