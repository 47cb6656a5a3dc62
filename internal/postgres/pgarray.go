package postgres

import (
	"encoding/binary"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// The batch statements (fairplay_place_bets, fairplay_play_actions) take
// their rows as 16 to 18 one-dimensional arrays. pgx encodes a Go slice
// through its generic array codec: every element boxed in an interface,
// its type looked up and its encoder called through another, a few
// allocations each. make bench's profile (dice, 64 players) put that at
// over a quarter of the batcher's CPU on the server: ~58 µs of
// ExtendedQueryBuilder.Build per batch, 2 to 4 µs per bet in batches of 31
// and 16 (BenchmarkBatchArrays: 22 µs and 672 allocations per batch of 32
// on an idle core, against 2.4 µs and none). The array types below write
// Postgres' binary array format straight from their slices when the
// connection's type map knows them (registerBinaryArrays, which Open's
// pool runs on every new connection); on a connection that does not, they
// are ordinary pgtype.ArrayGetters and pgx encodes them as before, to the
// same bytes.
//
// Postgres checks the element type an array names against the parameter's
// (array_recv: "wrong element type"), and binaryArrayCodec writes an
// array only for the parameter type it was made for, so a slice passed
// where another type is expected still goes through pgx's own conversion.

// binaryArray is a one-dimensional array that writes itself in Postgres'
// binary format.
type binaryArray interface {
	elementOID() uint32
	// appendBinary appends the whole array: header, dimension, elements.
	appendBinary(buf []byte) []byte
}

// appendArray appends a as Postgres' binary array of element type oid: the
// header (one dimension, of length 0 for an empty array, as pgx writes it;
// lower bound 1), then each element, its length first. null (nil when no
// element can be NULL) says which elements are NULL, written as length -1;
// elem appends an element's bytes.
func appendArray[T any](buf []byte, oid uint32, a []T, null func(T) bool, elem func([]byte, T) []byte) []byte {
	hasNull := uint32(0)
	for i := 0; null != nil && i < len(a); i++ {
		if null(a[i]) {
			hasNull = 1
			break
		}
	}
	buf = binary.BigEndian.AppendUint32(buf, 1)
	buf = binary.BigEndian.AppendUint32(buf, hasNull)
	buf = binary.BigEndian.AppendUint32(buf, oid)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(a)))
	buf = binary.BigEndian.AppendUint32(buf, 1)
	for _, v := range a {
		if null != nil && null(v) {
			buf = binary.BigEndian.AppendUint32(buf, 0xFFFFFFFF)
			continue
		}
		at := len(buf)
		buf = elem(append(buf, 0, 0, 0, 0), v)
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	}
	return buf
}

func appendUUID(buf []byte, v [16]byte) []byte { return append(buf, v[:]...) }
func appendInt8(buf []byte, v int64) []byte    { return binary.BigEndian.AppendUint64(buf, uint64(v)) }
func appendText(buf []byte, v string) []byte   { return append(buf, v...) }
func appendRaw(buf, v []byte) []byte           { return append(buf, v...) }
func isNilBytes(v []byte) bool                 { return v == nil }
func isNilTime(v *time.Time) bool              { return v == nil }

func appendBool(buf []byte, v bool) []byte {
	if v {
		return append(buf, 1)
	}
	return append(buf, 0)
}

// y2k is Postgres' timestamp epoch, 2000-01-01 UTC, in microseconds since
// the Unix epoch.
const y2k = 946684800 * 1000000

// appendTimestamptz appends t as Postgres' binary timestamptz (microseconds
// since 2000, truncated as pgx truncates).
func appendTimestamptz(buf []byte, t time.Time) []byte {
	return binary.BigEndian.AppendUint64(buf, uint64(t.Unix()*1000000+int64(t.Nanosecond())/1000-y2k))
}

func appendTimestamptzPtr(buf []byte, t *time.Time) []byte { return appendTimestamptz(buf, *t) }

// dims is the one dimension of an n-element array (pgtype.ArrayGetter).
func dims(n int) []pgtype.ArrayDimension {
	return []pgtype.ArrayDimension{{Length: int32(n), LowerBound: 1}}
}

// uuidArray is a uuid[] parameter.
type uuidArray [][16]byte

func (a uuidArray) elementOID() uint32 { return pgtype.UUIDOID }
func (a uuidArray) appendBinary(buf []byte) []byte {
	return appendArray(buf, pgtype.UUIDOID, a, nil, appendUUID)
}
func (a uuidArray) Dimensions() []pgtype.ArrayDimension { return dims(len(a)) }
func (a uuidArray) Index(i int) any                     { return a[i] }
func (a uuidArray) IndexType() any                      { return [16]byte{} }

// int8Array is a bigint[] parameter.
type int8Array []int64

func (a int8Array) elementOID() uint32 { return pgtype.Int8OID }
func (a int8Array) appendBinary(buf []byte) []byte {
	return appendArray(buf, pgtype.Int8OID, a, nil, appendInt8)
}
func (a int8Array) Dimensions() []pgtype.ArrayDimension { return dims(len(a)) }
func (a int8Array) Index(i int) any                     { return a[i] }
func (a int8Array) IndexType() any                      { return int64(0) }

// textArray is a text[] parameter.
type textArray []string

func (a textArray) elementOID() uint32 { return pgtype.TextOID }
func (a textArray) appendBinary(buf []byte) []byte {
	return appendArray(buf, pgtype.TextOID, a, nil, appendText)
}
func (a textArray) Dimensions() []pgtype.ArrayDimension { return dims(len(a)) }
func (a textArray) Index(i int) any                     { return a[i] }
func (a textArray) IndexType() any                      { return "" }

// jsonArray is a text[] parameter of JSON documents, nil for NULL (the
// statements cast them to jsonb), sent without copying them to strings.
type jsonArray [][]byte

func (a jsonArray) elementOID() uint32 { return pgtype.TextOID }
func (a jsonArray) appendBinary(buf []byte) []byte {
	return appendArray(buf, pgtype.TextOID, a, isNilBytes, appendRaw)
}
func (a jsonArray) Dimensions() []pgtype.ArrayDimension { return dims(len(a)) }
func (a jsonArray) Index(i int) any {
	if a[i] == nil {
		return nil
	}
	return string(a[i])
}
func (a jsonArray) IndexType() any { return "" }

// timeArray is a timestamptz[] parameter.
type timeArray []time.Time

func (a timeArray) elementOID() uint32 { return pgtype.TimestamptzOID }
func (a timeArray) appendBinary(buf []byte) []byte {
	return appendArray(buf, pgtype.TimestamptzOID, a, nil, appendTimestamptz)
}
func (a timeArray) Dimensions() []pgtype.ArrayDimension { return dims(len(a)) }
func (a timeArray) Index(i int) any                     { return a[i] }
func (a timeArray) IndexType() any                      { return time.Time{} }

// nullTimeArray is a timestamptz[] parameter, nil for NULL.
type nullTimeArray []*time.Time

func (a nullTimeArray) elementOID() uint32 { return pgtype.TimestamptzOID }
func (a nullTimeArray) appendBinary(buf []byte) []byte {
	return appendArray(buf, pgtype.TimestamptzOID, a, isNilTime, appendTimestamptzPtr)
}
func (a nullTimeArray) Dimensions() []pgtype.ArrayDimension { return dims(len(a)) }
func (a nullTimeArray) Index(i int) any {
	if a[i] == nil {
		return nil
	}
	return *a[i]
}
func (a nullTimeArray) IndexType() any { return time.Time{} }

// boolArray is a boolean[] parameter.
type boolArray []bool

func (a boolArray) elementOID() uint32 { return pgtype.BoolOID }
func (a boolArray) appendBinary(buf []byte) []byte {
	return appendArray(buf, pgtype.BoolOID, a, nil, appendBool)
}
func (a boolArray) Dimensions() []pgtype.ArrayDimension { return dims(len(a)) }
func (a boolArray) Index(i int) any                     { return a[i] }
func (a boolArray) IndexType() any                      { return false }

// binaryArrayCodec is pgx's codec of one array type, which writes a
// binaryArray of that array's element type itself.
type binaryArrayCodec struct {
	pgtype.Codec
	element uint32
}

func (c binaryArrayCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if a, ok := value.(binaryArray); ok && format == pgtype.BinaryFormatCode && a.elementOID() == c.element {
		return encodeBinaryArray{}
	}
	return c.Codec.PlanEncode(m, oid, format, value)
}

type encodeBinaryArray struct{}

func (encodeBinaryArray) Encode(value any, buf []byte) ([]byte, error) {
	return value.(binaryArray).appendBinary(buf), nil
}

// registerBinaryArrays makes m write the binaryArrays itself: the array
// types of the batch statements' parameters get binaryArrayCodec around
// their own codec. It also names each binaryArray's Postgres type, for the
// query modes that choose a parameter's type from its Go value
// (default_query_exec_mode=exec or simple_protocol in DATABASE_URL, which
// send it in text through the array codec).
func registerBinaryArrays(m *pgtype.Map) {
	for _, a := range []struct {
		oid    uint32
		name   string
		values []binaryArray
	}{
		{pgtype.UUIDArrayOID, "_uuid", []binaryArray{uuidArray(nil)}},
		{pgtype.Int8ArrayOID, "_int8", []binaryArray{int8Array(nil)}},
		{pgtype.TextArrayOID, "_text", []binaryArray{textArray(nil), jsonArray(nil)}},
		{pgtype.TimestamptzArrayOID, "_timestamptz", []binaryArray{timeArray(nil), nullTimeArray(nil)}},
		{pgtype.BoolArrayOID, "_bool", []binaryArray{boolArray(nil)}},
	} {
		t, ok := m.TypeForOID(a.oid)
		if !ok {
			continue
		}
		ac, ok := t.Codec.(*pgtype.ArrayCodec)
		if !ok {
			continue
		}
		m.RegisterType(&pgtype.Type{Name: t.Name, OID: t.OID, Codec: binaryArrayCodec{Codec: ac, element: ac.ElementType.OID}})
		for _, v := range a.values {
			m.RegisterDefaultPgType(v, a.name)
		}
	}
}
