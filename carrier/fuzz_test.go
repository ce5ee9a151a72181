package carrier

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/platform/integrations/carrier/internal/umsprot"
	"github.com/platform/integrations/upstream"
)

// FuzzDecodeAnswer feeds arbitrary answers to the decoder and classifier.
// Besides not panicking, a success must really be one: a 2xx status,
// STATUS=SUCCESS, a zero ID_CODIGO, a well-formed document and no Fault
// element anywhere, as an independent walk over the document sees it.
func FuzzDecodeAnswer(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "answers", "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint16(200), b)
		f.Add(uint16(500), b)
	}
	f.Fuzz(func(t *testing.T, status uint16, body []byte) {
		res := &Result{}
		_, err := interpret(FunctionTopup, int(status), body, res, identity)
		kind := kindOf(err)
		if kind < 0 {
			t.Fatalf("error of no known kind: %#v", err)
		}
		if err != nil {
			if kind == upstream.NotSent {
				t.Fatalf("error %v for an answer that arrived is kind NotSent", err)
			}
			return
		}
		if status < 200 || status > 299 {
			t.Fatalf("success in HTTP %d", status)
		}
		if !strings.EqualFold(res.Status, StatusSuccess) || !isZeroCode(res.IDCodigo) {
			t.Fatalf("success with STATUS %q ID_CODIGO %q", res.Status, res.IDCodigo)
		}
		if hasFault(t, body) {
			t.Fatalf("success for a document with a Fault: %q", body)
		}
	})
}

// hasFault is the oracle: it reports whether a well-formed document has an
// element named Fault, and fails the test if the document is not well
// formed, since a success must come from a well-formed one.
func hasFault(t *testing.T, body []byte) bool {
	d := xml.NewDecoder(bytes.NewReader(body))
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			// Latin-1 documents may be invalid UTF-8 to this walk; the
			// decoder under test read them through its charset reader.
			if bytes.Contains(body, []byte("ISO-8859-1")) || bytes.Contains(body, []byte("iso-8859-1")) {
				return bytes.Contains(body, []byte("Fault"))
			}
			t.Fatalf("success for a document that is not well formed (%v): %q", err, body)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "Fault" {
			return true
		}
	}
}

// TestDecodeBoundedMemory: the client never reads more than MaxAnswerSize
// (tested end to end in TestHugeAnswer); within that, pathological
// documents must not make the decoder allocate without bound.
func TestDecodeBoundedMemory(t *testing.T) {
	const limit = 64 << 20
	tests := map[string][]byte{
		"deep nesting":         bytes.Repeat([]byte("<a>"), MaxAnswerSize/3),
		"deep nesting in data": append([]byte(`<umsprot><exec_rsp>`), bytes.Repeat([]byte(`<data name="X">`), MaxAnswerSize/16)...),
		"many attributes":      append(append([]byte("<a "), bytes.Repeat([]byte(`x="1" `), MaxAnswerSize/6)...), "/>"...),
		"many data elements":   append([]byte(`<umsprot><exec_rsp>`), bytes.Repeat([]byte(`<data name="STATUS">SUCCESS</data>`), MaxAnswerSize/36)...),
		"long text":            append([]byte(`<umsprot><exec_rsp><data name="MENSAJE">`), bytes.Repeat([]byte("a&amp;"), MaxAnswerSize/6)...),
		// Text split into many tokens by child elements or comments: each
		// piece used to be appended to a string, copying the whole value
		// every time (21 GB allocated for 1 MiB).
		"text split by elements": append([]byte(`<umsprot><exec_rsp><data name="MENSAJE">`), bytes.Repeat([]byte("a<b/>"), MaxAnswerSize/5)...),
		"text split by comments": append([]byte(`<umsprot><exec_rsp><data name="MENSAJE">`), bytes.Repeat([]byte("a<!---->"), MaxAnswerSize/8)...),
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			body = body[:min(len(body), MaxAnswerSize)]
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := interpret(FunctionTopup, 200, body, &Result{}, identity)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrMalformedAnswer) {
				t.Errorf("err = %v, want ErrMalformedAnswer", err)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > limit {
				t.Errorf("decoding %d bytes allocated %d MiB, limit %d MiB", len(body), got>>20, limit>>20)
			}
		})
	}
}

func TestDecodeAnswerDepthLimit(t *testing.T) {
	deep := strings.Repeat("<a>", umsprot.MaxDepth+1) + strings.Repeat("</a>", umsprot.MaxDepth+1)
	if _, err := umsprot.DecodeAnswer([]byte(deep)); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Errorf("err = %v, want the depth limit", err)
	}
}
