package signal

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// NonFiniteKey is the key of the note that the JSON of [FeaturesJSON] and
// [FeaturesReport] gains when a value is not finite. JSON has no infinity
// or NaN, so such a value (the SNR of a noise-free record is +Inf, the
// centroid of a spectrum with no power NaN) is written as null, and the
// note maps the value's key to what it was: "+Inf", "-Inf" or "NaN" for a
// number, a count and the first few for an array ("psd": "2 of 129
// values: [0] -Inf, [5] NaN"). The key is absent when every value is
// finite.
const NonFiniteKey = "non_finite"

// MarshalJSON encodes j as encoding/json would, with each non-finite
// number written as null and described under [NonFiniteKey].
func (j FeaturesJSON) MarshalJSON() ([]byte, error) {
	return marshalFinite(reflect.ValueOf(j))
}

// MarshalJSON encodes r as encoding/json would, with each non-finite
// number written as null and described under [NonFiniteKey].
func (r FeaturesReport) MarshalJSON() ([]byte, error) {
	return marshalFinite(reflect.ValueOf(r))
}

// maxNoted bounds the non-finite elements an array's note lists.
const maxNoted = 3

// finiteEncoder writes JSON with non-finite numbers as null and records
// them, grouped by the top-level key they are under.
type finiteEncoder struct {
	buf   bytes.Buffer
	keys  []string            // top-level keys with a non-finite value, in order
	notes map[string][]string // per key: "[i] -Inf" for array elements, "+Inf" for a number
	count map[string]int      // per key: how many values
	total map[string]int      // per key: how many numbers (arrays)
}

// marshalFinite encodes the struct v as an object.
func marshalFinite(v reflect.Value) ([]byte, error) {
	e := &finiteEncoder{notes: map[string][]string{}, count: map[string]int{}, total: map[string]int{}}
	if err := e.object(v, "", "", true); err != nil {
		return nil, err
	}
	return e.buf.Bytes(), nil
}

// object writes the fields of struct v, found at path under the top-level
// key; top (the outermost object) adds the note.
func (e *finiteEncoder) object(v reflect.Value, key, path string, top bool) error {
	e.buf.WriteByte('{')
	n := 0
	for _, f := range jsonFields(v.Type()) {
		fv, ok := fieldByIndex(v, f.index)
		if !ok || f.omitEmpty && emptyValue(fv) || f.omitZero && fv.IsZero() {
			continue
		}
		if n > 0 {
			e.buf.WriteByte(',')
		}
		n++
		name, _ := json.Marshal(f.name)
		e.buf.Write(name)
		e.buf.WriteByte(':')
		k, p := f.name, ""
		if !top {
			k, p = key, path+"."+f.name
		}
		if err := e.value(fv, k, p); err != nil {
			return err
		}
	}
	if top && len(e.keys) > 0 {
		if n > 0 {
			e.buf.WriteByte(',')
		}
		name, _ := json.Marshal(NonFiniteKey)
		e.buf.Write(name)
		e.buf.WriteString(":{")
		for i, k := range e.keys {
			if i > 0 {
				e.buf.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			note := strings.Join(e.notes[k], ", ")
			if e.total[k] > 0 {
				note = fmt.Sprintf("%d of %d values: %s", e.count[k], e.total[k], note)
			}
			nb, _ := json.Marshal(note)
			e.buf.Write(kb)
			e.buf.WriteByte(':')
			e.buf.Write(nb)
		}
		e.buf.WriteByte('}')
	}
	e.buf.WriteByte('}')
	return nil
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// value writes v, found under the top-level key at path within it ("" for
// the key's own value, "[3]" for an element of it).
func (e *finiteEncoder) value(v reflect.Value, key, path string) error {
	t := v.Type()
	if t.Implements(marshalerType) || t.Implements(textMarshalerType) ||
		v.CanAddr() && (reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)) {
		if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
			e.buf.WriteString("null")
			return nil
		}
		return e.plain(v, key)
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		x := v.Float()
		if path != "" {
			e.total[key]++
		}
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			return e.plain(v, key)
		}
		e.note(key, path, x)
		e.buf.WriteString("null")
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			e.buf.WriteString("null")
			return nil
		}
		return e.value(v.Elem(), key, path)
	case reflect.Struct:
		return e.object(v, key, path, false)
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && (v.IsNil() || t.Elem().Kind() == reflect.Uint8) {
			return e.plain(v, key)
		}
		e.buf.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				e.buf.WriteByte(',')
			}
			if err := e.value(v.Index(i), key, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		e.buf.WriteByte(']')
	default:
		return e.plain(v, key)
	}
	return nil
}

// plain writes v with encoding/json.
func (e *finiteEncoder) plain(v reflect.Value, key string) error {
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return fmt.Errorf("signal: JSON of %s: %w", key, err)
	}
	e.buf.Write(b)
	return nil
}

// note records the non-finite x at path under key.
func (e *finiteEncoder) note(key, path string, x float64) {
	s := strconv.FormatFloat(x, 'g', -1, 64) // +Inf, -Inf or NaN
	if _, ok := e.count[key]; !ok {
		e.keys = append(e.keys, key)
	}
	e.count[key]++
	if path != "" {
		if e.count[key] > maxNoted {
			return
		}
		s = path + " " + s
	}
	e.notes[key] = append(e.notes[key], s)
}

// jsonField is a field as encoding/json sees it.
type jsonField struct {
	name                string
	index               []int
	omitEmpty, omitZero bool
}

// jsonFields returns the fields encoding/json writes for struct type t, in
// its order: fields of embedded structs without a name of their own are
// promoted, and of fields with the same name the least deeply embedded
// wins (among equals, the first).
func jsonFields(t reflect.Type) []jsonField {
	type cand struct {
		jsonField
		depth int
	}
	var all []cand
	var walk func(t reflect.Type, index []int, depth int)
	walk = func(t reflect.Type, index []int, depth int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			idx := append(append([]int(nil), index...), i)
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if sf.Anonymous && name == "" && ft.Kind() == reflect.Struct {
				walk(ft, idx, depth+1)
				continue
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			all = append(all, cand{jsonField{name: name, index: idx,
				omitEmpty: strings.Contains(","+opts+",", ",omitempty,"),
				omitZero:  strings.Contains(","+opts+",", ",omitzero,")}, depth})
		}
	}
	walk(t, nil, 0)
	best := map[string]int{}
	for i, c := range all {
		if j, ok := best[c.name]; !ok || c.depth < all[j].depth {
			best[c.name] = i
		}
	}
	var out []jsonField
	for i, c := range all {
		if best[c.name] == i {
			out = append(out, c.jsonField)
		}
	}
	return out
}

// fieldByIndex is v.FieldByIndex that reports a nil embedded pointer on
// the way instead of panicking.
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

// emptyValue is encoding/json's test for omitempty.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
