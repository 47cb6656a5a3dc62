package rpc

import (
	"errors"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// connectCodecs are the codecs of the Connect handlers: connect-go's own
// protobuf and JSON codecs in all but one thing. A request body that does
// not decode is refused, as before, with 400 invalid_argument and the
// decoder's reason ("unmarshal message: proto: cannot parse invalid
// wire-format data"), but without the Go type it was decoded into:
// connect-go's codecs answer "unmarshal into *fairplayv1.PlayDiceRequest:
// ...", which tells any caller, signed in or not, the server's language,
// its generated package and its type names. Found by a review playing a
// hostile outsider; test/security's TestUndecodableConnectBodiesNameNoGoType
// sends every procedure a body of each kind that does not decode.
//
// Everything else is connect-go's: unknown JSON fields are discarded (a
// client of a newer schema still works) but in strictRequests, an empty JSON body is refused,
// and "json; charset=utf-8" is the JSON codec under its other name. Stable
// marshalling (connect-go's clients' GET requests) is not a handler's: it
// is left out.
var connectCodecs = []connect.HandlerOption{
	connect.WithCodec(protoCodec{}),
	connect.WithCodec(jsonCodec{name: "json"}),
	connect.WithCodec(jsonCodec{name: "json; charset=utf-8"}),
}

// errNotMessage is what a codec answers for a value that is not a proto
// message: a bug of the server's, never the caller's.
var errNotMessage = errors.New("not a protobuf message")

type protoCodec struct{}

func (protoCodec) Name() string { return "proto" }

func (protoCodec) Marshal(v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, errNotMessage
	}
	return proto.Marshal(m)
}

func (protoCodec) MarshalAppend(dst []byte, v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, errNotMessage
	}
	return proto.MarshalOptions{}.MarshalAppend(dst, m)
}

func (protoCodec) Unmarshal(data []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return errNotMessage
	}
	return proto.Unmarshal(data, m)
}

type jsonCodec struct{ name string }

func (c jsonCodec) Name() string { return c.name }

func (jsonCodec) Marshal(v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, errNotMessage
	}
	return protojson.MarshalOptions{}.Marshal(m)
}

func (jsonCodec) MarshalAppend(dst []byte, v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, errNotMessage
	}
	return protojson.MarshalOptions{}.MarshalAppend(dst, m)
}

func (jsonCodec) Unmarshal(data []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return errNotMessage
	}
	if len(data) == 0 {
		return errors.New("zero-length payload is not a valid JSON object")
	}
	return protojson.UnmarshalOptions{DiscardUnknown: !strictRequests[m.ProtoReflect().Descriptor().FullName()]}.Unmarshal(data, m)
}
