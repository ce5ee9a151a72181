package xsd

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
)

// DecodeByLocalName decodes the element start, just read from d, into v (a pointer to a
// struct of generated code), matching its descendants to struct fields by local name
// whatever namespace the answer put them in.
//
// The generated tags name each DataContract member's namespace, which encoding/xml requires
// to match exactly: a member that arrives in another namespace (no prefix, an empty xmlns,
// a prefix bound to another URI) is skipped without an error, so a business error's lError
// would read as false. Before the tokens reach encoding/xml, each element that is a known
// member of the struct being decoded is moved into the namespace its tag names; elements
// that are not members are left as they are (and ignored by encoding/xml as before).
func DecodeByLocalName(d *xml.Decoder, v any, start xml.StartElement) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return errors.New("xsd: DecodeByLocalName needs a pointer")
	}
	r := &localNames{d: d, first: xml.CopyToken(start).(xml.StartElement), top: membersOf(t.Elem())}
	return decodeCounted(r, v)
}

// decoding maps the decoders of DecodeByLocalName calls and of Ptr replays in progress to
// their readers, so that a Ptr decoded by one tells an element without children from a value
// by the reader's count of start elements instead of replaying its tokens through one more
// decoder.
var decoding sync.Map // *xml.Decoder -> startCounter

// startCounter is a token reader that counts the start elements it has read.
type startCounter interface{ startsRead() int }

// decodeCounted decodes r's tokens into v through a decoder registered in decoding.
func decodeCounted(r interface {
	xml.TokenReader
	startCounter
}, v any) error {
	dec := xml.NewTokenDecoder(r)
	decoding.Store(dec, r)
	defer decoding.Delete(dec)
	return dec.Decode(v)
}

// NewDecoder returns a decoder of data whose [Ptr] members decode in place, and the function
// that releases it once the caller is done. A Ptr decoded by a plain xml.Decoder replays its
// tokens through one more decoder to tell an empty element from a value; this one reads data's
// raw tokens (text and entities read by an inner decoder) through a reader that counts the start
// elements, and resolves namespaces and checks the nesting of elements once. Unlike a plain
// decoder, its errors name line 1, InputOffset stays 0, a ",innerxml" field stays empty, and its
// Strict, AutoClose, Entity and CharsetReader settings change nothing.
func NewDecoder(data []byte) (d *xml.Decoder, release func()) {
	r := &rawCounter{d: xml.NewDecoder(bytes.NewReader(data))}
	d = xml.NewTokenDecoder(r)
	decoding.Store(d, r)
	return d, func() { decoding.Delete(d) }
}

// rawCounter is the reader behind NewDecoder: d's raw tokens, the start elements counted.
type rawCounter struct {
	d      *xml.Decoder
	starts int
}

func (r *rawCounter) startsRead() int { return r.starts }

func (r *rawCounter) Token() (xml.Token, error) {
	tok, err := r.d.RawToken()
	if _, ok := tok.(xml.StartElement); ok {
		r.starts++
	}
	return tok, err
}

// counterOf returns the reader behind d if d is one of the decoders of decoding.
func counterOf(d *xml.Decoder) (startCounter, bool) {
	r, ok := decoding.Load(d)
	if !ok {
		return nil, false
	}
	return r.(startCounter), true
}

// localNames is the xml.TokenReader behind DecodeByLocalName: it replays start, then reads d
// up to start's end element, renaming member elements on the way.
type localNames struct {
	d       *xml.Decoder
	first   xml.StartElement
	started bool
	done    bool
	top     members
	stack   []frame
	starts  int // start elements read so far, the first included
}

type frame struct {
	name    xml.Name // as renamed, for the end element
	members members  // of the element's type; nil for a simple type or an unknown element
}

func (r *localNames) startsRead() int { return r.starts }

func (r *localNames) Token() (xml.Token, error) {
	if r.done {
		return nil, io.EOF
	}
	if !r.started {
		r.started = true
		r.starts++
		r.stack = append(r.stack, frame{name: r.first.Name, members: r.top})
		return r.first, nil
	}
	tok, err := r.d.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case xml.StartElement:
		r.starts++
		parent := r.stack[len(r.stack)-1].members
		m, known := parent[t.Name.Local]
		if known && m.space != "" {
			t.Name.Space = m.space
		}
		r.stack = append(r.stack, frame{name: t.Name, members: m.members})
		return t, nil
	case xml.EndElement:
		if len(r.stack) == 0 {
			return nil, errors.New("xsd: unbalanced end element")
		}
		t.Name = r.stack[len(r.stack)-1].name
		r.stack = r.stack[:len(r.stack)-1]
		if len(r.stack) == 0 {
			r.done = true
		}
		return t, nil
	case xml.CharData:
		return t.Copy(), nil // d may reuse its buffer before the consumer is done
	}
	return tok, nil
}

// member is what DecodeByLocalName knows of a struct field: the namespace of its tag and,
// for a complex member, the members of its type.
type member struct {
	space   string
	members members
}

// members maps local names to fields of one struct type.
type members map[string]member

var (
	membersMu    sync.Mutex
	membersCache = map[reflect.Type]members{}
	unmarshaler  = reflect.TypeFor[xml.Unmarshaler]()
	pointerType  = reflect.TypeFor[Pointer]()
)

// membersOf returns the members of struct type t, or nil when t is not a struct decoded
// field by field (the simple types of this package decode themselves).
func membersOf(t reflect.Type) members {
	membersMu.Lock()
	defer membersMu.Unlock()
	return membersLocked(t)
}

func membersLocked(t reflect.Type) members {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	if t.Implements(pointerType) {
		return membersLocked(t.Field(0).Type) // Ptr[T]: the members of T
	}
	if reflect.PointerTo(t).Implements(unmarshaler) {
		return nil
	}
	if m, ok := membersCache[t]; ok {
		return m
	}
	m := members{}
	// Cached before its fields are walked, so that a recursive type terminates.
	membersCache[t] = m
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Name == "XMLName" || !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("xml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if opts != "" && opts != "omitempty" {
			continue // attributes, chardata, innerxml: not child elements
		}
		space, local, found := strings.Cut(name, " ")
		if !found {
			space, local = "", name
		}
		if local == "" {
			local = f.Name
		}
		if strings.Contains(local, ">") {
			continue // paths are not produced by the generator
		}
		m[local] = member{space: space, members: membersLocked(f.Type)}
	}
	return m
}
