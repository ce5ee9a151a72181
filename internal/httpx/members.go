package httpx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/platform/integrations/internal/validation"
)

// memberFrame is an object or array being read by DuplicateMembers.
type memberFrame struct {
	object   bool
	path     string
	index    int               // arrays: the index of the next element
	wantKey  bool              // objects: the next token is a member name
	seen     map[string]string // objects: lower-cased name -> first spelling
	reported map[string]bool
}

// DuplicateMembers finds, in every object of the JSON text body, the members named twice,
// exactly or in another case ("amount" and "AMOUNT"): encoding/json would keep one of them by
// position or by map order, so the same bytes could be read two ways. One problem per repeated
// name, named by its JSON path ("items[0].precio"), in document order. A body that is not JSON
// yields no problem here (decoding reports it).
func DuplicateMembers(body []byte) []validation.Problem {
	if duplicateFree(body) {
		return nil // the common case, without encoding/json's token reader (a tenth of the time)
	}
	return duplicateMembers(body)
}

// duplicateMembers is DuplicateMembers read with encoding/json's tokens: escapes decoded,
// names compared lower-cased, each problem named by its path.
func duplicateMembers(body []byte) []validation.Problem {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var (
		stack    []*memberFrame
		problems []validation.Problem
		key      string // the name of the member whose value comes next
	)
	// valueDone moves the frame on top past one value.
	valueDone := func() {
		if len(stack) == 0 {
			return
		}
		top := stack[len(stack)-1]
		if top.object {
			top.wantKey = true
		} else {
			top.index++
		}
	}
	// childPath is the path of the value that starts now.
	childPath := func() string {
		if len(stack) == 0 {
			return ""
		}
		top := stack[len(stack)-1]
		if top.object {
			return joinPath(top.path, key)
		}
		return fmt.Sprintf("%s[%d]", top.path, top.index)
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return problems
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			top := stack[n-1]
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:n-1]
				valueDone()
				continue
			}
			key, _ = tok.(string)
			lower := strings.ToLower(key)
			switch first, dup := top.seen[lower]; {
			case !dup:
				top.seen[lower] = key
			case !top.reported[lower]:
				top.reported[lower] = true
				msg := "is given more than once"
				if first != key {
					msg = fmt.Sprintf("is given more than once (as %s and %s)", first, key)
				}
				problems = append(problems, validation.Problem{Field: joinPath(top.path, first), Message: msg})
			}
			top.wantKey = false
			continue
		}
		switch d, _ := tok.(json.Delim); d {
		case '{':
			stack = append(stack, &memberFrame{object: true, path: childPath(), wantKey: true,
				seen: map[string]string{}, reported: map[string]bool{}})
		case '[':
			stack = append(stack, &memberFrame{path: childPath()})
		case ']':
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// Bounds of duplicateFree's walk; past them it is not sure, and DuplicateMembers reads the body
// with encoding/json.
const (
	maxFreeDepth   = 64
	maxFreeMembers = 64 // per object: names are compared pairwise
)

// duplicateFree reports whether body is certainly free of repeated member names: it walks the
// JSON text without decoding it, and answers true only when every member name is printable
// ASCII without escapes and no object repeats one, ignoring ASCII case (for such names the same
// comparison as DuplicateMembers' lower-casing). Anything else (an escape, a non-ASCII name, a
// text it cannot walk) is false: not sure. Where the walk is laxer than JSON (a literal is
// taken up to the next delimiter), encoding/json stops at that point and sees only names the
// walk compared.
func duplicateFree(body []byte) bool {
	var names [16][]byte
	s := freeWalk{b: body, names: names[:0]}
	s.space()
	if !s.value(0) {
		return false
	}
	s.space()
	return s.i == len(s.b)
}

// freeWalk is duplicateFree's position in the text and the names of the objects it is in.
type freeWalk struct {
	b     []byte
	i     int
	names [][]byte // of every open object, outermost first
}

func (w *freeWalk) space() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

func (w *freeWalk) value(depth int) bool {
	if depth > maxFreeDepth || w.i >= len(w.b) {
		return false
	}
	switch w.b[w.i] {
	case '{':
		return w.object(depth)
	case '[':
		w.i++
		w.space()
		if w.i < len(w.b) && w.b[w.i] == ']' {
			w.i++
			return true
		}
		for {
			if !w.value(depth + 1) {
				return false
			}
			if more, ok := w.after(']'); !more {
				return ok
			}
		}
	case '"':
		_, ok := w.str(false)
		return ok
	}
	start := w.i // a number, true, false or null: encoding/json checks which
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r', '"', '{', '[', ':':
			return w.i > start
		}
		w.i++
	}
	return w.i > start
}

// object walks an object and compares each member name with those before it.
func (w *freeWalk) object(depth int) bool {
	w.i++ // {
	first := len(w.names)
	defer func() { w.names = w.names[:first] }()
	w.space()
	if w.i < len(w.b) && w.b[w.i] == '}' {
		w.i++
		return true
	}
	for {
		if w.i >= len(w.b) || w.b[w.i] != '"' {
			return false
		}
		name, ok := w.str(true)
		if !ok || len(w.names)-first >= maxFreeMembers {
			return false
		}
		for _, seen := range w.names[first:] {
			if bytes.EqualFold(seen, name) {
				return false
			}
		}
		w.names = append(w.names, name)
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != ':' {
			return false
		}
		w.i++
		w.space()
		if !w.value(depth + 1) {
			return false
		}
		if more, ok := w.after('}'); !more {
			return ok
		}
	}
}

// after reads what follows a member or an element: a comma, with more to come, or close.
func (w *freeWalk) after(close byte) (more, ok bool) {
	w.space()
	if w.i >= len(w.b) {
		return false, false
	}
	switch w.b[w.i] {
	case ',':
		w.i++
		w.space()
		return true, true
	case close:
		w.i++
		return false, true
	}
	return false, false
}

// str walks a string and returns its text between the quotes. A name (plain) must be printable
// ASCII without escapes; a value may hold anything but an unescaped quote.
func (w *freeWalk) str(plain bool) ([]byte, bool) {
	w.i++ // "
	start := w.i
	for w.i < len(w.b) {
		c := w.b[w.i]
		switch {
		case c == '"':
			w.i++
			return w.b[start : w.i-1], true
		case plain && (c == '\\' || c < 0x20 || c >= 0x7f):
			return nil, false
		case c == '\\':
			w.i += 2
		default:
			w.i++
		}
	}
	return nil, false
}
