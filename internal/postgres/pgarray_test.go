package postgres

import (
	"bytes"
	"encoding/hex"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// arrayCase is one array parameter: the batch type's value and the plain Go
// slice pgx encodes through its generic array codec.
type arrayCase struct {
	name  string
	oid   uint32 // the parameter's array type
	fast  binaryArray
	plain any
}

func arrayCases() []arrayCase {
	at := time.Date(2026, 11, 26, 17, 30, 1, 123456789, time.UTC)
	old := time.Date(1969, 7, 20, 20, 17, 40, 999999999, time.FixedZone("x", -5*3600))
	far := time.Date(294000, 12, 31, 23, 59, 59, 999999999, time.UTC)
	u1 := [16]byte{0x01, 0x9d, 0x7f, 0, 0xff, 0x10, 0x70, 0x00, 0x80, 0x01, 2, 3, 4, 5, 6, 7}
	s := func(v string) *string { return &v }
	return []arrayCase{
		{"uuid", pgtype.UUIDArrayOID, uuidArray{u1, {}, u1}, [][16]byte{u1, {}, u1}},
		{"uuid empty", pgtype.UUIDArrayOID, uuidArray{}, [][16]byte{}},
		{"int8", pgtype.Int8ArrayOID, int8Array{0, 1, -1, 255, 256, 1 << 62, -1 << 63}, []int64{0, 1, -1, 255, 256, 1 << 62, -1 << 63}},
		{"text", pgtype.TextArrayOID, textArray{"dice", "", "ünïcødé ✓", "a,b{\"c\"}"}, []string{"dice", "", "ünïcødé ✓", "a,b{\"c\"}"}},
		{"json", pgtype.TextArrayOID, jsonArray{[]byte(`{"target":50.5}`), nil, []byte(`[]`), nil},
			[]*string{s(`{"target":50.5}`), nil, s(`[]`), nil}},
		{"json no null", pgtype.TextArrayOID, jsonArray{[]byte(`{}`)}, []*string{s(`{}`)}},
		{"json empty, not null", pgtype.TextArrayOID, jsonArray{[]byte{}, nil}, []*string{s(""), nil}},
		{"timestamptz", pgtype.TimestamptzArrayOID, timeArray{at, old, {}}, []time.Time{at, old, {}}},
		{"timestamptz far", pgtype.TimestamptzArrayOID, timeArray{far, far.Add(-1)}, []time.Time{far, far.Add(-1)}},
		{"timestamptz null", pgtype.TimestamptzArrayOID, nullTimeArray{&at, nil, &old}, []*time.Time{&at, nil, &old}},
		{"bool", pgtype.BoolArrayOID, boolArray{true, false, true}, []bool{true, false, true}},
		{"bool empty", pgtype.BoolArrayOID, boolArray{}, []bool{}},
	}
}

// The batch arrays write the bytes pgx writes for the same slices, both
// when the type map knows them (registerBinaryArrays: their own encoder)
// and when it does not (pgx's array codec, through pgtype.ArrayGetter).
func TestBinaryArraysAsPgxWritesThem(t *testing.T) {
	for _, c := range arrayCases() {
		t.Run(c.name, func(t *testing.T) {
			want, err := pgtype.NewMap().Encode(c.oid, pgtype.BinaryFormatCode, c.plain, nil)
			if err != nil {
				t.Fatalf("pgx encodes the plain slice: %v", err)
			}
			fast := pgtype.NewMap()
			registerBinaryArrays(fast)
			if _, ok := fast.PlanEncode(c.oid, pgtype.BinaryFormatCode, c.fast).(encodeBinaryArray); !ok {
				t.Fatalf("a registered map does not write %T itself", c.fast)
			}
			for name, m := range map[string]*pgtype.Map{"registered": fast, "plain pgx": pgtype.NewMap()} {
				got, err := m.Encode(c.oid, pgtype.BinaryFormatCode, c.fast, []byte("prefix"))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !bytes.HasPrefix(got, []byte("prefix")) || !bytes.Equal(got[len("prefix"):], want) {
					t.Errorf("%s: %T wrote\n%s\npgx writes\n%s", name, c.fast, hex.Dump(got), hex.Dump(want))
				}
			}
		})
	}
}

// An array is written by itself only for its own element type: passed
// where another array type is expected it goes through pgx's conversion
// (or its error), never as an array of the wrong type.
func TestBinaryArrayOnlyForItsType(t *testing.T) {
	m := pgtype.NewMap()
	registerBinaryArrays(m)
	for _, oid := range []uint32{pgtype.TextArrayOID, pgtype.Int8ArrayOID, pgtype.UUIDArrayOID} {
		if _, ok := m.PlanEncode(oid, pgtype.BinaryFormatCode, boolArray{true}).(encodeBinaryArray); ok {
			t.Errorf("a bool array is written as itself for type %d", oid)
		}
	}
	if _, ok := m.PlanEncode(pgtype.TextArrayOID, pgtype.TextFormatCode, textArray{"a"}).(encodeBinaryArray); ok {
		t.Error("a text array is written in binary where text format was asked")
	}
}

// BenchmarkBatchArrays encodes the sixteen arrays of a batch of 32 bets
// (fairplay_place_bets' parameters), as the batch's own types on a
// registered type map ("itself") and as plain Go slices through pgx's array
// codec ("pgx"): the server's CPU and allocations per batch.
//
//	go test ./internal/postgres -run '^$' -bench BatchArrays -benchmem
func BenchmarkBatchArrays(b *testing.B) {
	const n = 32
	at := time.Now()
	params := []byte(`{"target":50.5,"condition":"over"}`)
	state := []byte(`{"roll":73.12}`)
	fast := []any{make(uuidArray, n), make(uuidArray, n), make(timeArray, n), make(uuidArray, n), make(textArray, n),
		make(int8Array, n), make(uuidArray, n), make(textArray, n), make(textArray, n), make(int8Array, n),
		make(int8Array, n), make(int8Array, n), make(jsonArray, n), make(jsonArray, n), make(timeArray, n),
		make(boolArray, n)}
	for i := range n {
		fast[2].(timeArray)[i], fast[14].(timeArray)[i] = at, at
		fast[4].(textArray)[i], fast[7].(textArray)[i], fast[8].(textArray)[i] = "a1b2c3d4e5f6", "dice", "settled"
		fast[5].(int8Array)[i], fast[9].(int8Array)[i], fast[10].(int8Array)[i] = int64(1000+i), 100000000, 19800
		fast[12].(jsonArray)[i], fast[13].(jsonArray)[i] = params, state
	}
	plain := make([]any, len(fast))
	for i, a := range fast {
		switch a := a.(type) {
		case uuidArray:
			plain[i] = [][16]byte(a)
		case timeArray:
			plain[i] = []time.Time(a)
		case textArray:
			plain[i] = []string(a)
		case int8Array:
			plain[i] = []int64(a)
		case boolArray:
			plain[i] = []bool(a)
		case jsonArray:
			s := make([]*string, n)
			for j, raw := range a {
				v := string(raw)
				s[j] = &v
			}
			plain[i] = s
		}
	}
	oids := []uint32{pgtype.UUIDArrayOID, pgtype.UUIDArrayOID, pgtype.TimestamptzArrayOID, pgtype.UUIDArrayOID,
		pgtype.TextArrayOID, pgtype.Int8ArrayOID, pgtype.UUIDArrayOID, pgtype.TextArrayOID, pgtype.TextArrayOID,
		pgtype.Int8ArrayOID, pgtype.Int8ArrayOID, pgtype.Int8ArrayOID, pgtype.TextArrayOID, pgtype.TextArrayOID,
		pgtype.TimestamptzArrayOID, pgtype.BoolArrayOID}
	registered := pgtype.NewMap()
	registerBinaryArrays(registered)
	for _, run := range []struct {
		name string
		m    *pgtype.Map
		args []any
	}{{"itself", registered, fast}, {"pgx", pgtype.NewMap(), plain}} {
		b.Run(run.name, func(b *testing.B) {
			buf := make([]byte, 0, 16<<10)
			b.ReportAllocs()
			for b.Loop() {
				buf = buf[:0]
				for i, a := range run.args {
					var err error
					if buf, err = run.m.Encode(oids[i], pgtype.BinaryFormatCode, a, buf); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
