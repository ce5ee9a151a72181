package xsd

import (
	"encoding"
	"encoding/xml"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
)

// AppendXMLContent appends to b the child elements that encoding/xml writes for v, a pointer
// to a struct of the generated types, inside the element that Encoder.EncodeElement(v, start)
// opens. ok is false, and b is returned as it is, when v's type holds something it does not
// write itself (a marshaller of another type, an attribute, character data, an interface, an
// embedded field, a path, two members of one name, a number other than this package's): the
// caller then encodes v with encoding/xml.
//
// encoding/xml reaches every member of a request through reflection and the member's
// MarshalXML, which encodes its text through the encoder again; AppendXMLContent works out
// each struct type's elements once and writes their text directly.
func AppendXMLContent(b []byte, v any) ([]byte, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return b, false
	}
	p := xmlPlanOf(rv.Type().Elem())
	if !p.ok || p.kind != xStruct || p.xmlName == xmlNameUnnamed {
		return b, false
	}
	return appendXMLFields(b, rv.Elem(), p), true
}

// xmlKind is how a type is written.
type xmlKind uint8

const (
	xLeaf    xmlKind = iota + 1 // String, Decimal, Int, Date: their XMLText, when there is one
	xPtr                        // Ptr[T] of a struct T: nothing when nil
	xStruct                     // a struct without a marshaller: its fields
	xSlice                      // each element under the field's name
	xPointer                    // a Go pointer: nothing when nil
	xBool
	xString
)

// XMLName fields, which name a struct's element before its field's tag does.
const (
	xmlNameNone    = iota
	xmlNameNamed   // tagged with a name: a start element given by the caller (EncodeElement) wins
	xmlNameUnnamed // the name taken from the field's value at run time: left to encoding/xml
)

type xmlPlan struct {
	ok      bool
	kind    xmlKind
	elem    *xmlPlan   // xPtr (T), xSlice, xPointer
	fields  []xmlField // xStruct
	xmlName int        // xStruct
}

// xmlField is a struct field written as an element: its start and end tags as encoding/xml
// writes them.
type xmlField struct {
	index      int
	start, end string
	omitEmpty  bool
	plan       *xmlPlan
}

var (
	xmlPlansMu sync.Mutex
	xmlPlans   sync.Map // reflect.Type -> *xmlPlan, complete
	marshalerT = reflect.TypeFor[xml.Marshaler]()
	texterT    = reflect.TypeFor[encoding.TextMarshaler]()
	xmlNameT   = reflect.TypeFor[xml.Name]()
)

func xmlPlanOf(t reflect.Type) *xmlPlan {
	if p, ok := xmlPlans.Load(t); ok {
		return p.(*xmlPlan)
	}
	xmlPlansMu.Lock()
	defer xmlPlansMu.Unlock()
	building := map[reflect.Type]*xmlPlan{}
	p := buildXMLPlan(t, building)
	// Every plan is built now: decide which are writable. A plan met again while it was built
	// counts as writable until one it holds is found not to be.
	for changed := true; changed; {
		changed = false
		for _, q := range building {
			if q.ok && !q.childrenWritable() {
				q.ok, changed = false, true
			}
		}
	}
	for t, p := range building {
		xmlPlans.Store(t, p)
	}
	return p
}

// childrenWritable reports whether the plans p holds are writable, and written by p as
// encoding/xml writes them.
func (p *xmlPlan) childrenWritable() bool {
	switch p.kind {
	case xPtr: // Ptr names its element: a struct's XMLName with a name gives way to it
		return p.elem.ok && p.elem.kind == xStruct && p.elem.xmlName != xmlNameUnnamed
	case xPointer:
		return p.elem.ok && p.elem.kind != xPointer && p.elem.kind != xSlice
	case xSlice:
		return p.elem.ok && p.elem.kind != xSlice
	case xStruct:
		for _, f := range p.fields {
			// A struct reached through a field is named by its own XMLName first. Two steps
			// reach it: the only writable nesting is a list of pointers (the cases above), and
			// a bounded walk ends on a type that holds itself.
			inner := f.plan
			for range 2 {
				if inner.kind == xPointer || inner.kind == xSlice {
					inner = inner.elem
				}
			}
			if !f.plan.ok || inner.kind == xStruct && inner.xmlName != xmlNameNone {
				return false
			}
		}
	}
	return true
}

// buildXMLPlan works out t's plan, its ok flag saying only whether t itself can be written
// (xmlPlanOf then checks what it holds); building holds the plans in progress, so that a
// recursive type ends.
func buildXMLPlan(t reflect.Type, building map[reflect.Type]*xmlPlan) *xmlPlan {
	if p, ok := xmlPlans.Load(t); ok {
		return p.(*xmlPlan)
	}
	if p, ok := building[t]; ok {
		return p
	}
	p := &xmlPlan{ok: true}
	building[t] = p
	pt := reflect.PointerTo(t)
	switch {
	case own(t) && strings.HasPrefix(t.Name(), "Ptr["):
		p.kind, p.elem = xPtr, buildXMLPlan(t.Field(0).Type.Elem(), building)
	case own(t):
		p.kind = xLeaf
	case t.Kind() == reflect.Pointer: // encoding/xml follows a pointer before it looks for a marshaller
		p.kind, p.elem = xPointer, buildXMLPlan(t.Elem(), building)
	case t.Implements(marshalerT) || pt.Implements(marshalerT) || t.Implements(texterT) || pt.Implements(texterT):
		p.ok = false
	case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8:
		p.kind, p.elem = xSlice, buildXMLPlan(t.Elem(), building)
	case t.Kind() == reflect.Bool:
		p.kind = xBool
	case t.Kind() == reflect.String:
		p.kind = xString
	case t.Kind() == reflect.Struct:
		p.kind = xStruct
		p.ok = structXMLPlan(t, p, building)
	default:
		p.ok = false
	}
	return p
}

// structXMLPlan fills p with the fields of struct type t, and reports whether encoding/xml
// writes them as plain elements: exported, not embedded, tagged "[namespace ]name[,omitempty]",
// no two of the same name, and an XMLName tagged "[namespace ]name" or not at all.
func structXMLPlan(t reflect.Type, p *xmlPlan, building map[reflect.Type]*xmlPlan) bool {
	names := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, tagged := f.Tag.Lookup("xml")
		if f.Name == "XMLName" {
			if f.Type != xmlNameT {
				return false
			}
			p.xmlName = xmlNameUnnamed
			if tag != "" {
				if _, _, ok := elementName(tag); !ok {
					return false
				}
				p.xmlName = xmlNameNamed
			}
			continue
		}
		if f.Anonymous {
			return false
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !tagged || (opts != "" && opts != "omitempty") {
			return false
		}
		space, local, ok := elementName(name)
		if !ok || names[local] {
			return false
		}
		names[local] = true
		start := "<" + local
		if space != "" {
			start += ` xmlns="` + string(appendEscaped(nil, space)) + `"`
		}
		p.fields = append(p.fields, xmlField{index: i, start: start + ">", end: "</" + local + ">",
			omitEmpty: opts == "omitempty", plan: buildXMLPlan(f.Type, building)})
	}
	return true
}

// elementName splits "[namespace ]name" (no options); ok is false for anything else.
func elementName(s string) (space, local string, ok bool) {
	space, local, found := strings.Cut(s, " ")
	if !found {
		space, local = "", s
	}
	return space, local, local != "" && !strings.ContainsAny(local, "> ,") && !strings.ContainsAny(space, " ,")
}

func appendXMLFields(b []byte, v reflect.Value, p *xmlPlan) []byte {
	for i := range p.fields {
		f := &p.fields[i]
		b = appendXMLValue(b, v.Field(f.index), f, f.plan, f.omitEmpty)
	}
	return b
}

// appendXMLValue writes v, of plan p, as encoding/xml's marshalValue writes a field's value:
// omitEmpty is checked on the field's value and on each element of a list, not again on what a
// pointer points to.
func appendXMLValue(b []byte, v reflect.Value, f *xmlField, p *xmlPlan, omitEmpty bool) []byte {
	if omitEmpty && emptyXML(v) {
		return b
	}
	switch p.kind {
	case xPointer:
		if v.IsNil() {
			return b
		}
		return appendXMLValue(b, v.Elem(), f, p.elem, false)
	case xSlice:
		for i := range v.Len() {
			b = appendXMLValue(b, v.Index(i), f, p.elem, f.omitEmpty)
		}
		return b
	case xLeaf:
		text, ok := v.Addr().Interface().(Texter).XMLText()
		if !ok {
			return b
		}
		b = append(b, f.start...)
		b = appendEscaped(b, text)
		return append(b, f.end...)
	case xPtr:
		pv := v.Field(0)
		if pv.IsNil() {
			return b
		}
		b = append(b, f.start...)
		b = appendXMLFields(b, pv.Elem(), p.elem)
		return append(b, f.end...)
	case xStruct:
		b = append(b, f.start...)
		b = appendXMLFields(b, v, p)
		return append(b, f.end...)
	case xBool:
		b = append(b, f.start...)
		if v.Bool() {
			b = append(b, "true"...)
		} else {
			b = append(b, "false"...)
		}
		return append(b, f.end...)
	case xString:
		b = append(b, f.start...)
		b = appendEscaped(b, v.String())
		return append(b, f.end...)
	}
	panic("xsd: AppendXMLContent: no plan for " + v.Type().String())
}

// emptyXML is encoding/xml's isEmptyValue for the kinds of a plan.
func emptyXML(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// appendEscaped appends s as encoding/xml escapes text: the five markup characters, tab and
// line ends as character references, and a byte that is not UTF-8 or a character outside
// XML's range as U+FFFD.
func appendEscaped(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		var esc string
		width := 1
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				esc = "&#34;"
			case '\'':
				esc = "&#39;"
			case '&':
				esc = "&amp;"
			case '<':
				esc = "&lt;"
			case '>':
				esc = "&gt;"
			case '\t':
				esc = "&#x9;"
			case '\n':
				esc = "&#xA;"
			case '\r':
				esc = "&#xD;"
			default:
				if c >= 0x20 {
					i++
					continue
				}
				esc = "\uFFFD"
			}
		} else {
			var r rune
			r, width = utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && width == 1 || !(r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF) {
				esc = "\uFFFD"
			} else {
				i += width
				continue
			}
		}
		b = append(b, s[last:i]...)
		b = append(b, esc...)
		i += width
		last = i
	}
	return append(b, s[last:]...)
}
