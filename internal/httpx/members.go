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
