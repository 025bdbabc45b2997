package memview

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"time"
	"unicode"
)

// JSON returns v as the command line's --json and the REST API write it: the fields
// of structs that name none of their own keys in snake_case (GenerationBytes becomes
// generation_bytes), and durations as Go writes them ("1.5s") rather than as
// nanoseconds, tagged or not, so that every answer reads the same way. The keys of
// fields with json tags, and values that marshal themselves, stay as they are.
func JSON(v any) any {
	if v == nil {
		return nil
	}
	return view(reflect.ValueOf(v))
}

var (
	durationType  = reflect.TypeFor[time.Duration]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textType      = reflect.TypeFor[encoding.TextMarshaler]()
)

func view(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	t := v.Type()
	switch {
	case t == durationType:
		return time.Duration(v.Int()).String()
	case t.Implements(marshalerType) || t.Implements(textType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textType):
		return v.Interface()
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return view(v.Elem())
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return v.Interface() // bytes: base64, as encoding/json writes them
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = view(v.Index(i))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			out[mapKey(it.Key())] = view(it.Value())
		}
		return out
	case reflect.Struct:
		var out object
		structFields(v, &out)
		return out
	}
	return v.Interface()
}

// object is a JSON object that keeps its keys in the order of the struct's fields.
type object []field

type field struct {
	key string
	val any
}

func (o object) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, f := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(f.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.val)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// structFields adds the exported fields of struct v to out, those of embedded
// structs as if they were v's.
func structFields(v reflect.Value, out *object) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if f.Anonymous && name == "" && fv.Kind() == reflect.Struct {
			structFields(fv, out) // promoted fields, of an unexported type too
			continue
		}
		if !f.IsExported() {
			continue
		}
		if strings.Contains(opts, "omitempty") && empty(fv) || strings.Contains(opts, "omitzero") && zero(fv) {
			continue
		}
		if name == "" {
			name = snakeCase(f.Name)
		}
		*out = append(*out, field{name, view(fv)})
	}
}

// zero reports whether omitzero leaves v out: its IsZero method says so, or it is
// its type's zero value.
func zero(v reflect.Value) bool {
	if z, ok := v.Interface().(interface{ IsZero() bool }); ok {
		return z.IsZero()
	}
	return v.IsZero()
}

// empty reports whether omitempty leaves v out, as encoding/json decides it.
func empty(v reflect.Value) bool {
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

// mapKey writes a map key as encoding/json would.
func mapKey(k reflect.Value) string {
	if k.Kind() == reflect.String {
		return k.String()
	}
	if tm, ok := k.Interface().(encoding.TextMarshaler); ok {
		if b, err := tm.MarshalText(); err == nil {
			return string(b)
		}
	}
	b, _ := json.Marshal(k.Interface())
	return strings.Trim(string(b), `"`)
}

// snakeCase turns a Go field name into snake_case: CheckpointBytes is
// checkpoint_bytes, SourceRev source_rev, ID id and HTTPAddr http_addr.
func snakeCase(name string) string {
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			prevLower := i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]))
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if i > 0 && (prevLower || nextLower && unicode.IsUpper(rs[i-1])) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
