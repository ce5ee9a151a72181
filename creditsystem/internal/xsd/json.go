package xsd

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// AppendJSON appends to b what json.Marshal(v) writes, for v a value of the generated types
// (structs of this package's types, Ptr, pointers and slices of them).
//
// json.Marshal compacts and checks again the output of every MarshalJSON it calls, inside the
// output of the one above it, nearly half the time of an answer with nested Ptr members
// (BenchmarkRawAnswerJSON, BENCHMARKS.md). AppendJSON writes the types of
// this package itself and hands any other type (one with a marshaller of its own, a tag option,
// an embedded field, a map, a string, a number) to json.Marshal. Unlike json.Marshal it does not
// detect a cycle of pointers: a decoded answer has none.
func AppendJSON(b []byte, v any) ([]byte, error) {
	return appendValue(b, reflect.ValueOf(v))
}

// jsonAppender is implemented by this package's types: the bytes their MarshalJSON returns.
type jsonAppender interface {
	appendJSON(b []byte) ([]byte, error)
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	ownTypes          = []reflect.Type{reflect.TypeFor[String](), reflect.TypeFor[Decimal](), reflect.TypeFor[Int](), reflect.TypeFor[Date]()}
)

// own reports whether t is String, Decimal, Int, Date or a Ptr, which AppendJSON writes itself;
// not a type that embeds one of them (and its appendJSON), whatever marshaller it has.
func own(t reflect.Type) bool {
	if t.PkgPath() != ownTypes[0].PkgPath() {
		return false
	}
	return slices.Contains(ownTypes, t) || strings.HasPrefix(t.Name(), "Ptr[")
}

func appendValue(b []byte, v reflect.Value) ([]byte, error) {
	if !v.IsValid() {
		return append(b, "null"...), nil
	}
	t := v.Type()
	switch handlingOf(t) {
	case ownAppender:
		if !v.CanAddr() {
			c := reflect.New(t).Elem()
			c.Set(v)
			v = c
		}
		return v.Addr().Interface().(jsonAppender).appendJSON(b)
	case ownMarshaller:
		return appendMarshal(b, v)
	}
	switch t.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		return appendValue(b, v.Elem())
	case reflect.Bool:
		return strconv.AppendBool(b, v.Bool()), nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			break // base64
		}
		if v.IsNil() {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i := range v.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, v.Index(i)); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case reflect.Struct:
		fields, ok := fieldsOf(t)
		if !ok {
			break
		}
		b = append(b, '{')
		for i, f := range fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, f.key...)
			var err error
			if b, err = appendValue(b, v.Field(f.index)); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return appendMarshal(b, v)
}

// handling is how AppendJSON writes a type.
type handling uint8

const (
	byKind        handling = iota // by its kind (pointer, slice, struct, bool), or json.Marshal
	ownAppender                   // a type of this package: its appendJSON
	ownMarshaller                 // another type with a marshaller: json.Marshal
)

var handlings sync.Map // reflect.Type -> handling

func handlingOf(t reflect.Type) handling {
	if h, ok := handlings.Load(t); ok {
		return h.(handling)
	}
	pt := reflect.PointerTo(t)
	h := byKind
	switch {
	case own(t):
		h = ownAppender
	case t.Kind() == reflect.Pointer && own(t.Elem()):
		// A pointer to one of this package's types: null or what its value writes.
	case t.Implements(jsonMarshalerType) || pt.Implements(jsonMarshalerType) ||
		t.Implements(textMarshalerType) || pt.Implements(textMarshalerType):
		h = ownMarshaller
	}
	handlings.Store(t, h)
	return h
}

// appendMarshal appends json.Marshal's bytes for v, through its address when it has one, as
// encoding/json reaches a pointer method of a field.
func appendMarshal(b []byte, v reflect.Value) ([]byte, error) {
	x := v.Interface()
	if v.CanAddr() {
		x = v.Addr().Interface()
	}
	out, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	return append(b, out...), nil
}

// jsonField is a struct field as encoding/json writes it: `"name":` and its index.
type jsonField struct {
	key   string
	index int
}

type structPlan struct {
	fields []jsonField
	ok     bool // false: json.Marshal writes the struct (see fieldsOf)
}

var structPlans sync.Map // reflect.Type -> structPlan

// fieldsOf returns the fields encoding/json writes for struct type t, in order, when they are
// plain: exported, not embedded, named by the field or by a tag without options, the names
// simple and distinct. ok is false otherwise, and AppendJSON leaves the struct to json.Marshal.
func fieldsOf(t reflect.Type) ([]jsonField, bool) {
	if p, ok := structPlans.Load(t); ok {
		plan := p.(structPlan)
		return plan.fields, plan.ok
	}
	plan := structPlan{ok: true}
	seen := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			plan.ok = false
			break
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name := f.Name
		if tag != "" {
			if strings.Contains(tag, ",") || !simpleName(tag) {
				plan.ok = false
				break
			}
			name = tag
		}
		if seen[name] {
			plan.ok = false
			break
		}
		seen[name] = true
		plan.fields = append(plan.fields, jsonField{key: `"` + name + `":`, index: i})
	}
	structPlans.Store(t, plan)
	return plan.fields, plan.ok
}

func simpleName(s string) bool {
	for _, c := range []byte(s) {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

// appendString appends s as encoding/json writes it: as it is between quotes when it is
// printable ASCII that needs no escape, through json.Marshal otherwise.
func appendString(b []byte, s string) []byte {
	for _, c := range []byte(s) {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			out, _ := json.Marshal(s) // a string always marshals
			return append(b, out...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func (s *String) appendJSON(b []byte) ([]byte, error) {
	if !s.Valid {
		return append(b, "null"...), nil
	}
	return appendString(b, s.Value), nil
}

func (d *Decimal) appendJSON(b []byte) ([]byte, error) {
	if !d.Valid {
		return append(b, "null"...), nil
	}
	return append(b, FormatDecimal(d.Decimal)...), nil
}

func (i *Int) appendJSON(b []byte) ([]byte, error) {
	if !i.Valid {
		return append(b, "null"...), nil
	}
	return strconv.AppendInt(b, i.Value, 10), nil
}

func (d *Date) appendJSON(b []byte) ([]byte, error) {
	if !d.Valid {
		return append(b, "null"...), nil
	}
	if d.Year < 0 || d.Year > 9999 || d.Month < 1 || d.Month > 12 || d.Day < 0 || d.Day > 99 {
		return appendString(b, d.String()), nil
	}
	b = append(b, '"', byte('0'+d.Year/1000), byte('0'+d.Year/100%10), byte('0'+d.Year/10%10), byte('0'+d.Year%10), '-',
		byte('0'+int(d.Month)/10), byte('0'+int(d.Month)%10), '-', byte('0'+d.Day/10), byte('0'+d.Day%10), '"')
	return b, nil
}

func (p *Ptr[T]) appendJSON(b []byte) ([]byte, error) {
	if p.V == nil {
		return append(b, "null"...), nil
	}
	return appendValue(b, reflect.ValueOf(p.V).Elem())
}
