package schemas

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// encodeCanonical writes the canonical JSON of a Go value directly, without building a
// generic tree: struct fields in sorted key order (cached per type), map keys sorted.
// It produces exactly the bytes CanonicalizeJSON produces from json.Marshal's output.
func encodeCanonical(buf *bytes.Buffer, v reflect.Value) error {
	if !v.IsValid() {
		buf.WriteString("null")
		return nil
	}
	t := v.Type()
	if t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType) {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		return encodeViaJSON(buf, v.Interface())
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		return encodeCanonical(buf, v.Elem())
	case reflect.Struct:
		buf.WriteByte('{')
		first := true
		for _, f := range structFields(t) {
			fv, ok := fieldByIndex(v, f.index)
			if !ok {
				continue
			}
			if (f.omitEmpty && isEmptyValue(fv)) || (f.omitZero && isZeroValue(fv)) {
				continue
			}
			if !first {
				buf.WriteByte(',')
			}
			first = false
			buf.Write(f.quoted)
			buf.WriteByte(':')
			if err := encodeCanonical(buf, fv); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case reflect.Map:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		if t.Key().Kind() != reflect.String {
			return encodeViaJSON(buf, v.Interface())
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSONString(buf, k.String()); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := encodeCanonical(buf, v.MapIndex(k)); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case reflect.Slice:
		if v.IsNil() {
			buf.WriteString("null")
			return nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return encodeViaJSON(buf, v.Interface())
		}
		fallthrough
	case reflect.Array:
		buf.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encodeCanonical(buf, v.Index(i)); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case reflect.String:
		return writeJSONString(buf, v.String())
	case reflect.Bool:
		buf.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		buf.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		buf.WriteString(strconv.FormatUint(v.Uint(), 10))
	default:
		return encodeViaJSON(buf, v.Interface())
	}
	return nil
}

func encodeViaJSON(buf *bytes.Buffer, v any) error {
	raw, err := marshalNoEscape(v)
	if err != nil {
		return err
	}
	c, err := CanonicalizeJSON(raw)
	if err != nil {
		return err
	}
	buf.Write(c)
	return nil
}

var (
	jsonMarshalerType = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	textMarshalerType = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
	fieldCache        sync.Map // reflect.Type -> []canonField
)

type canonField struct {
	name      string
	quoted    []byte
	index     []int
	omitEmpty bool
	omitZero  bool
}

// structFields lists a struct type's JSON fields sorted by name, with the fields of
// untagged embedded structs promoted as encoding/json promotes them (a shallower field, or
// a tagged one at the same depth, hides the others of its name; an ambiguous name is
// dropped).
func structFields(t reflect.Type) []canonField {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]canonField)
	}
	type cand struct {
		canonField
		depth  int
		tagged bool
	}
	var all []cand
	var walk func(t reflect.Type, index []int, depth int)
	walk = func(t reflect.Type, index []int, depth int) {
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			idx := append(append([]int(nil), index...), i)
			if sf.Anonymous && name == "" {
				ft := sf.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft, idx, depth+1)
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			tagged := name != ""
			if name == "" {
				name = sf.Name
			}
			var q bytes.Buffer
			_ = writeJSONString(&q, name)
			all = append(all, cand{canonField{name: name, quoted: q.Bytes(), index: idx,
				omitEmpty: strings.Contains(","+opts+",", ",omitempty,"),
				omitZero:  strings.Contains(","+opts+",", ",omitzero,")}, depth, tagged})
		}
	}
	walk(t, nil, 0)
	byName := map[string][]cand{}
	for _, c := range all {
		byName[c.name] = append(byName[c.name], c)
	}
	var fields []canonField
	for _, cs := range byName {
		sort.SliceStable(cs, func(i, j int) bool {
			if cs[i].depth != cs[j].depth {
				return cs[i].depth < cs[j].depth
			}
			return cs[i].tagged && !cs[j].tagged
		})
		if len(cs) > 1 && cs[0].depth == cs[1].depth && cs[0].tagged == cs[1].tagged {
			continue // ambiguous: encoding/json drops it
		}
		fields = append(fields, cs[0].canonField)
	}
	sort.Slice(fields, func(i, j int) bool { return fields[i].name < fields[j].name })
	fieldCache.Store(t, fields)
	return fields
}

// fieldByIndex is v.FieldByIndex that reports a nil embedded pointer instead of panicking.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array:
		return v.Len() == 0
	case reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// isZeroValue follows encoding/json's omitzero: an IsZero method when there is one,
// else the zero value of the type.
func isZeroValue(v reflect.Value) bool {
	if z, ok := v.Interface().(interface{ IsZero() bool }); ok {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return true
		}
		return z.IsZero()
	}
	return v.IsZero()
}

const hexDigits = "0123456789abcdef"

// writeJSONString writes s as encoding/json does with HTML escaping off.
func writeJSONString(buf *bytes.Buffer, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("canonical json: invalid UTF-8 in string")
	}
	buf.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			buf.WriteString(s[start:i])
			switch c {
			case '"', '\\':
				buf.WriteByte('\\')
				buf.WriteByte(c)
			case '\n':
				buf.WriteString(`\n`)
			case '\r':
				buf.WriteString(`\r`)
			case '\t':
				buf.WriteString(`\t`)
			case '\b':
				buf.WriteString(`\b`)
			case '\f':
				buf.WriteString(`\f`)
			default:
				buf.WriteString(`\u00`)
				buf.WriteByte(hexDigits[c>>4])
				buf.WriteByte(hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == '\u2028' || r == '\u2029' {
			buf.WriteString(s[start:i])
			buf.WriteString(`\u202`)
			buf.WriteByte(hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
	return nil
}
