package umsprot

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestRequestRoundTrip(t *testing.T) {
	in := Request{Function: "sre_consulta_recarga", Data: []Data{
		{Name: "USERID", Value: "u"},
		{Name: "PASSWORD", Value: `<&>"'`},
		{Name: "EMPTY", Value: ""},
	}}
	b, err := MarshalRequest(in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<umsprot version="1">`)) {
		t.Errorf("document starts %q", b[:60])
	}
	out, err := DecodeRequest(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*out, in) {
		t.Errorf("round trip gave %+v, want %+v", *out, in)
	}
	if v, ok := out.Value("PASSWORD"); !ok || v != `<&>"'` {
		t.Errorf("Value(PASSWORD) = %q, %v", v, ok)
	}
	if _, ok := out.Value("MISSING"); ok {
		t.Error("Value of a missing element reported present")
	}
}

func TestDecodeRequestRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"not XML":         "hello",
		"other root":      `<soap version="1"><exec_req function="f"/></soap>`,
		"wrong version":   `<umsprot version="7"><exec_req function="f"/></umsprot>`,
		"no function":     `<umsprot version="1"><exec_req/></umsprot>`,
		"unclosed":        `<umsprot version="1"><exec_req function="f">`,
		"unknown charset": `<?xml version="1.0" encoding="EBCDIC"?><umsprot version="1"><exec_req function="f"/></umsprot>`,
	} {
		if _, err := DecodeRequest([]byte(doc)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func TestFaultAndResponseDecode(t *testing.T) {
	fb, err := MarshalFault(Fault{Code: "350", String: "IP <blocked>"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := DecodeAnswer(fb)
	if err != nil || a.Fault == nil || a.Response != nil || *a.Fault != (Fault{Code: "350", String: "IP <blocked>"}) {
		t.Fatalf("fault decoded as %+v, %v", a, err)
	}
	rb, err := MarshalResponse(Response{Result: "0", Diagnostic: "OK", Data: []Data{{Name: "STATUS", Value: "SUCCESS"}, {Name: "MENSAJE", Value: "á & ñ"}}})
	if err != nil {
		t.Fatal(err)
	}
	a, err = DecodeAnswer(rb)
	if err != nil || a.Fault != nil || a.Response == nil {
		t.Fatalf("response decoded as %+v, %v", a, err)
	}
	want := Response{Result: "0", Diagnostic: "OK", Data: []Data{{Name: "STATUS", Value: "SUCCESS"}, {Name: "MENSAJE", Value: "á & ñ"}}}
	if !reflect.DeepEqual(*a.Response, want) {
		t.Errorf("got %+v, want %+v", *a.Response, want)
	}
	if _, err := DecodeAnswer([]byte(`<umsprot version="1"/>`)); err != ErrNoAnswer {
		t.Errorf("empty umsprot: %v, want ErrNoAnswer", err)
	}
}

// FuzzDecodeRequest: the fake parses whatever a client sends; no input may
// panic it, and what decodes re-encodes to an equal request.
func FuzzDecodeRequest(f *testing.F) {
	seed, _ := MarshalRequest(Request{Function: "sre_topupd_76186", Data: []Data{{Name: "QUANTITY", Value: "1"}}})
	f.Add(seed)
	f.Add([]byte(`<umsprot version="1"><exec_req function="f"><data name="A">&lt;</data></exec_req></umsprot>`))
	f.Add([]byte(strings.Repeat("<umsprot>", 100)))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRequest(b)
		if err != nil {
			return
		}
		again, err := MarshalRequest(*r)
		if err != nil {
			return // text with characters XML cannot carry
		}
		r2, err := DecodeRequest(again)
		if err != nil {
			t.Fatalf("re-encoded request does not decode: %v\n%s", err, again)
		}
		if r2.Function != r.Function || len(r2.Data) != len(r.Data) {
			t.Fatalf("round trip changed %+v into %+v", r, r2)
		}
	})
}

// A data value split into several tokens is their concatenation, without the text of child
// elements, and the values of neighbouring data elements stay apart.
func TestDecodeAnswerSplitText(t *testing.T) {
	doc := `<umsprot version="1"><exec_rsp result="0">` +
		`<data name="MENSAJE">a<!-- c -->b<x>not data</x>c<![CDATA[<d>]]></data>between` +
		`<data name="EMPTY"></data><data name="STATUS">SUCCESS</data></exec_rsp></umsprot>`
	a, err := DecodeAnswer([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := []Data{{Name: "MENSAJE", Value: "abc<d>"}, {Name: "EMPTY", Value: ""}, {Name: "STATUS", Value: "SUCCESS"}}
	if !reflect.DeepEqual(a.Response.Data, want) {
		t.Errorf("data = %q, want %q", a.Response.Data, want)
	}
}
