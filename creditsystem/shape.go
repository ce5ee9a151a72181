package creditsystem

import (
	"bytes"
	"fmt"
)

// Bounds on the shape of an answer, checked before any XML decoder sees it. encoding/xml
// keeps a record for every open element and a slice of every attribute of the element it
// is reading, so an answer of maxAnswerSize nested a million deep, or with a million
// attributes on one element, held well over 100 MB of heap per call. WCF answers are about
// ten elements deep with a handful of namespace declarations per element.
const (
	maxAnswerDepth = 64
	maxAnswerAttrs = 64
)

// checkShape refuses an answer nested deeper than maxAnswerDepth or with an element of more
// than maxAnswerAttrs attributes. It only scans bytes: comments, CDATA sections, processing
// instructions and a document type declaration are skipped, and what is not well formed is
// left for the decoder to report.
func checkShape(b []byte) error {
	depth := 0
	for i := 0; i < len(b); i++ {
		next := bytes.IndexByte(b[i:], '<')
		if next < 0 {
			return nil
		}
		i += next
		rest := b[i+1:]
		var skip int // bytes after '<' up to and including the construct's last byte
		switch {
		case bytes.HasPrefix(rest, []byte("!--")):
			skip = endOf(rest, 3, "-->")
		case bytes.HasPrefix(rest, []byte("![CDATA[")):
			skip = endOf(rest, 8, "]]>")
		case bytes.HasPrefix(rest, []byte("?")):
			skip = endOf(rest, 1, "?>")
		case bytes.HasPrefix(rest, []byte("!")):
			skip = endOfDeclaration(rest)
		case bytes.HasPrefix(rest, []byte("/")):
			depth--
			skip = endOf(rest, 1, ">")
		default:
			end, attrs := endOfStartTag(rest)
			if attrs > maxAnswerAttrs {
				return fmt.Errorf("answer has an element with more than %d attributes", maxAnswerAttrs)
			}
			if end < 0 {
				return nil
			}
			if end == 0 || rest[end-1] != '/' { // not an empty-element tag <x/>
				depth++
				if depth > maxAnswerDepth {
					return fmt.Errorf("answer nested deeper than %d elements", maxAnswerDepth)
				}
			}
			skip = end + 1
		}
		if skip < 0 {
			return nil // unterminated: the decoder stops there too
		}
		i += skip
	}
	return nil
}

// endOf returns the length of rest up to and including the first end found after from, or
// -1.
func endOf(rest []byte, from int, end string) int {
	j := bytes.Index(rest[from:], []byte(end))
	if j < 0 {
		return -1
	}
	return from + j + len(end)
}

// endOfStartTag returns the index in rest of the '>' closing a start tag, or -1, and how
// many attribute values (quoted strings) it has; '>' may appear inside a quoted value.
func endOfStartTag(rest []byte) (int, int) {
	var quote byte
	attrs := 0
	for j, c := range rest {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
			attrs++
			if attrs > maxAnswerAttrs {
				return -1, attrs
			}
		case c == '>':
			return j, attrs
		}
	}
	return -1, attrs
}

// endOfDeclaration returns the length of a <!DOCTYPE ...> declaration after its '<', whose
// internal subset may hold further <...> markup, or -1.
func endOfDeclaration(rest []byte) int {
	var quote byte
	open := 1
	for j, c := range rest {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '<':
			open++
		case c == '>':
			open--
			if open == 0 {
				return j + 1
			}
		}
	}
	return -1
}
