package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
)

// The /api JSON codec maps the SPEC.md JSON bodies onto the proto messages by
// their JSON names. It differs from protojson in two deliberate ways: fields
// marked (fairplay.v1.decimal) — money, multipliers, roll targets — are JSON
// numbers on the wire and exact decimal strings in the message (copied as text, never through float64), and 64-bit
// integers are plain numbers.

// fieldError is a JSON value of the wrong type for its field.
type fieldError struct {
	field string
	want  string
}

func (e *fieldError) Error() string { return fmt.Sprintf("%s must be %s", e.field, e.want) }

// fieldInfo is what the codec reads about a field on every message it
// encodes or decodes, looked up once per field: reading an extension from
// the options walks and allocates, and so does quoting the JSON name.
type fieldInfo struct {
	decimal  bool   // (fairplay.v1.decimal)
	nullable bool   // (fairplay.v1.nullable)
	key      []byte // the quoted JSON name and a colon: "name":
	// goType and goField are the generated struct of a plain string field
	// (no presence, no oneof) and its index there (goType nil otherwise):
	// decodeObject sets it directly, where protoreflect's Set converts the
	// string through two interfaces (three allocations a field).
	goType  reflect.Type
	goField []int
}

// fieldInfos caches fieldInfo by descriptor (descriptors live as long as the
// program: the set is bounded by the protos).
var fieldInfos sync.Map

func infoOf(fd protoreflect.FieldDescriptor) *fieldInfo {
	if v, ok := fieldInfos.Load(fd); ok {
		return v.(*fieldInfo)
	}
	fi := &fieldInfo{}
	if opts := fd.Options(); opts != nil {
		fi.decimal, _ = proto.GetExtension(opts, fairplayv1.E_Decimal).(bool)
		fi.nullable, _ = proto.GetExtension(opts, fairplayv1.E_Nullable).(bool)
	}
	fi.key = append(appendString(nil, fd.JSONName()), ':')
	fi.goType, fi.goField = plainStringField(fd)
	v, _ := fieldInfos.LoadOrStore(fd, fi)
	return v.(*fieldInfo)
}

func isDecimal(fd protoreflect.FieldDescriptor) bool { return infoOf(fd).decimal }

// plainStringField finds a plain string field (proto3, no presence, not in
// a oneof, not repeated) in its message's generated struct, by the field
// number in the struct tag protoc-gen-go writes
// (`protobuf:"bytes,1,opt,name=bet_amount,json=betAmount,proto3"`).
func plainStringField(fd protoreflect.FieldDescriptor) (reflect.Type, []int) {
	if fd.Kind() != protoreflect.StringKind || fd.HasPresence() || fd.IsList() || fd.IsMap() ||
		fd.ContainingOneof() != nil {
		return nil, nil
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(fd.ContainingMessage().FullName())
	if err != nil {
		return nil, nil
	}
	t := reflect.TypeOf(mt.Zero().Interface())
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, nil
	}
	t = t.Elem()
	number := strconv.Itoa(int(fd.Number()))
	for i := range t.NumField() {
		f := t.Field(i)
		kind, rest, _ := strings.Cut(f.Tag.Get("protobuf"), ",")
		n, _, _ := strings.Cut(rest, ",")
		if kind == "bytes" && n == number && f.Type.Kind() == reflect.String && f.IsExported() {
			return t, f.Index
		}
	}
	return nil, nil
}

// setString sets a string field of m, directly when it is a plain field of
// a generated message.
func setString(m protoreflect.Message, fd protoreflect.FieldDescriptor, s string) {
	if fi := infoOf(fd); fi.goType != nil {
		if rv := reflect.ValueOf(m.Interface()); rv.Kind() == reflect.Pointer && rv.Type().Elem() == fi.goType {
			rv.Elem().FieldByIndex(fi.goField).SetString(s)
			return
		}
	}
	m.Set(fd, protoreflect.ValueOfString(s))
}

// decodeObject sets m's fields from obj (as decoded with UseNumber). Unknown
// keys are ignored, so clients may send extra fields such as confirmPassword.
func decodeObject(m protoreflect.Message, obj map[string]any) error {
	fields := m.Descriptor().Fields()
	for key, val := range obj {
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByTextName(key)
			if fd != nil {
				if _, both := obj[fd.JSONName()]; both {
					continue // the JSON name wins, whatever the map's order
				}
			}
		}
		if fd == nil || val == nil {
			continue
		}
		switch {
		case fd.IsMap():
			return &fieldError{field: key, want: "supported"}
		case fd.IsList():
			arr, ok := val.([]any)
			if !ok {
				return &fieldError{field: key, want: "an array"}
			}
			list := m.Mutable(fd).List()
			for _, el := range arr {
				if fd.Kind() == protoreflect.MessageKind {
					o, ok := el.(map[string]any)
					if !ok {
						return &fieldError{field: key, want: "an array of objects"}
					}
					item := list.NewElement()
					if err := decodeObject(item.Message(), o); err != nil {
						return err
					}
					list.Append(item)
					continue
				}
				v, err := scalar(fd, key, el)
				if err != nil {
					return err
				}
				list.Append(v)
			}
		case fd.Kind() == protoreflect.MessageKind:
			o, ok := val.(map[string]any)
			if !ok {
				return &fieldError{field: key, want: "an object"}
			}
			if err := decodeObject(m.Mutable(fd).Message(), o); err != nil {
				return err
			}
		default:
			v, err := scalar(fd, key, val)
			if err != nil {
				return err
			}
			if fd.Kind() == protoreflect.StringKind {
				setString(m, fd, v.String())
				continue
			}
			m.Set(fd, v)
		}
	}
	return nil
}

// scalar converts one JSON value. Strings are accepted for numbers and
// booleans too, because query parameters and path values arrive as text.
func scalar(fd protoreflect.FieldDescriptor, key string, val any) (protoreflect.Value, error) {
	text := func() (string, bool) {
		switch v := val.(type) {
		case json.Number:
			return v.String(), true
		case string:
			return v, true
		}
		return "", false
	}
	switch fd.Kind() {
	case protoreflect.StringKind:
		if isDecimal(fd) {
			if s, ok := text(); ok {
				return protoreflect.ValueOfString(s), nil
			}
			return protoreflect.Value{}, &fieldError{field: key, want: "a number"}
		}
		if s, ok := val.(string); ok {
			return protoreflect.ValueOfString(s), nil
		}
		return protoreflect.Value{}, &fieldError{field: key, want: "a string"}
	case protoreflect.BoolKind:
		switch v := val.(type) {
		case bool:
			return protoreflect.ValueOfBool(v), nil
		case string:
			if b, err := strconv.ParseBool(v); err == nil {
				return protoreflect.ValueOfBool(b), nil
			}
		}
		return protoreflect.Value{}, &fieldError{field: key, want: "true or false"}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if s, ok := text(); ok {
			if n, err := strconv.ParseInt(s, 10, 32); err == nil {
				return protoreflect.ValueOfInt32(int32(n)), nil
			}
		}
		return protoreflect.Value{}, &fieldError{field: key, want: "a whole number"}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		if s, ok := text(); ok {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return protoreflect.ValueOfInt64(n), nil
			}
		}
		return protoreflect.Value{}, &fieldError{field: key, want: "a whole number"}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		if s, ok := text(); ok {
			if n, err := strconv.ParseUint(s, 10, 32); err == nil {
				return protoreflect.ValueOfUint32(uint32(n)), nil
			}
		}
		return protoreflect.Value{}, &fieldError{field: key, want: "a whole number"}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		if s, ok := text(); ok {
			if n, err := strconv.ParseUint(s, 10, 64); err == nil {
				return protoreflect.ValueOfUint64(n), nil
			}
		}
		return protoreflect.Value{}, &fieldError{field: key, want: "a whole number"}
	case protoreflect.DoubleKind, protoreflect.FloatKind:
		if s, ok := text(); ok {
			if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				if fd.Kind() == protoreflect.FloatKind {
					return protoreflect.ValueOfFloat32(float32(f)), nil
				}
				return protoreflect.ValueOfFloat64(f), nil
			}
		}
		return protoreflect.Value{}, &fieldError{field: key, want: "a number"}
	case protoreflect.EnumKind:
		if s, ok := val.(string); ok {
			if ev := fd.Enum().Values().ByName(protoreflect.Name(s)); ev != nil {
				return protoreflect.ValueOfEnum(ev.Number()), nil
			}
		}
		return protoreflect.Value{}, &fieldError{field: key, want: "one of the allowed values"}
	}
	return protoreflect.Value{}, &fieldError{field: key, want: "supported"}
}

// encodeMessage writes m as a JSON object: every scalar field (zero values
// included, as clients expect every documented field), set message fields
// (unset ones marked (fairplay.v1.nullable) as null), and lists (empty
// lists as []).
func encodeMessage(buf *bytes.Buffer, m protoreflect.Message) {
	buf.WriteByte('{')
	fields := m.Descriptor().Fields()
	first := true
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		null := false
		fi := infoOf(fd)
		if fd.Kind() == protoreflect.MessageKind && !fd.IsList() && !fd.IsMap() && !m.Has(fd) {
			if !fi.nullable {
				continue
			}
			null = true
		}
		if fd.ContainingOneof() != nil && !fd.HasPresence() {
			continue
		}
		if fd.HasPresence() && fd.Kind() != protoreflect.MessageKind && !m.Has(fd) {
			continue
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		buf.Write(fi.key)
		if null {
			buf.WriteString("null")
			continue
		}
		v := m.Get(fd)
		switch {
		case fd.IsMap():
			buf.WriteString("{}")
		case fd.IsList():
			list := v.List()
			buf.WriteByte('[')
			for j := 0; j < list.Len(); j++ {
				if j > 0 {
					buf.WriteByte(',')
				}
				encodeValue(buf, fd, list.Get(j))
			}
			buf.WriteByte(']')
		default:
			encodeValue(buf, fd, v)
		}
	}
	buf.WriteByte('}')
}

func encodeValue(buf *bytes.Buffer, fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		encodeMessage(buf, v.Message())
	case protoreflect.StringKind:
		s := v.String()
		if isDecimal(fd) {
			if s == "" {
				buf.WriteByte('0')
				return
			}
			if isJSONNumber(s) {
				buf.WriteString(s)
				return
			}
		}
		writeString(buf, s)
	case protoreflect.BoolKind:
		buf.WriteString(strconv.FormatBool(v.Bool()))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		buf.WriteString(strconv.FormatInt(v.Int(), 10))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		buf.WriteString(strconv.FormatUint(v.Uint(), 10))
	case protoreflect.DoubleKind, protoreflect.FloatKind:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			buf.WriteString("null")
			return
		}
		buf.WriteString(strconv.FormatFloat(f, 'f', -1, 64))
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			writeString(buf, string(ev.Name()))
			return
		}
		buf.WriteString(strconv.FormatInt(int64(v.Enum()), 10))
	default:
		buf.WriteString("null")
	}
}

func writeString(buf *bytes.Buffer, s string) {
	var scratch [64]byte
	buf.Write(appendString(scratch[:0], s))
}

// appendString appends s as a JSON string exactly as encoding/json writes it
// (HTML-safe: <, > and & escaped, as are U+2028 and U+2029; invalid UTF-8
// becomes U+FFFD), without its reflection and allocations.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// isJSONNumber reports whether s is a number in JSON's grammar.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
