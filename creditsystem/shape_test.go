package creditsystem

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestCheckShape(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("<a>", n) + strings.Repeat("</a>", n) }
	attrs := func(n int) string { return "<a" + strings.Repeat(` x="1"`, n) + "/>" }
	tests := []struct {
		name string
		doc  string
		ok   bool
	}{
		{"flat", "<a><b/><c x='1'>t</c></a>", true},
		{"at the depth limit", nest(maxAnswerDepth), true},
		{"past the depth limit", nest(maxAnswerDepth + 1), false},
		{"past the limit, never closed", strings.Repeat("<a>", maxAnswerDepth+1), false},
		{"empty-element tags do not nest", "<r>" + strings.Repeat("<a/>", 10*maxAnswerDepth) + "</r>", true},
		{"siblings do not nest", "<r>" + strings.Repeat("<a></a>", 10*maxAnswerDepth) + "</r>", true},
		{"at the attribute limit", attrs(maxAnswerAttrs), true},
		{"past the attribute limit", attrs(maxAnswerAttrs + 1), false},
		{"past the attribute limit, tag never closed", "<a" + strings.Repeat(` x="1"`, maxAnswerAttrs+1), false},
		{"markup in a comment", "<r><!--" + strings.Repeat("<a>", 100) + "--></r>", true},
		{"markup in CDATA", "<r><![CDATA[" + strings.Repeat("<a x='1' y='2'>", 100) + "]]></r>", true},
		{"markup in a processing instruction", `<?xml version="1.0"?><?pi ` + strings.Repeat("<a>", 100) + "?><r/>", true},
		{"'>' and '/>' in attribute values", `<r a="x>y" b='/>'>` + nest(maxAnswerDepth-1) + "</r>", true},
		{"doctype with internal subset", `<!DOCTYPE r [<!ENTITY e "<a><a>">]>` + nest(maxAnswerDepth), true},
		{"deep after a doctype", `<!DOCTYPE html>` + nest(maxAnswerDepth+1), false},
		{"empty tag", "<>", true},
		{"unterminated comment", "<r><!-- <a>", true},
		{"text with '>'", "<r>a > b</r>", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := checkShape([]byte(tt.doc)); (err == nil) != tt.ok {
				t.Errorf("checkShape = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// FuzzCheckShape: the scan never panics, and never refuses a well-formed document within
// the bounds, as encoding/xml measures them. The seed corpus is in testdata/fuzz.
func FuzzCheckShape(f *testing.F) {
	f.Add([]byte(`<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body/></s:Envelope>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		err := checkShape(doc)
		if err == nil {
			return
		}
		d := xml.NewDecoder(bytes.NewReader(doc))
		depth, deepest, widest := 0, 0, 0
		for {
			tok, terr := d.Token()
			if errors.Is(terr, io.EOF) {
				break
			}
			if terr != nil {
				return // not well formed: refusing it is fine
			}
			switch se := tok.(type) {
			case xml.StartElement:
				depth++
				deepest, widest = max(deepest, depth), max(widest, len(se.Attr))
			case xml.EndElement:
				depth--
			}
		}
		if deepest <= maxAnswerDepth && widest <= maxAnswerAttrs {
			t.Fatalf("refused a well-formed document %d deep with %d attributes: %v", deepest, widest, err)
		}
	})
}
