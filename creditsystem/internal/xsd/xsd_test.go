package xsd

import (
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

type doc struct {
	S  String  `xml:"s"`
	D  Decimal `xml:"d"`
	I  Int     `xml:"i"`
	Dt Date    `xml:"dt"`
	P  Ptr[struct {
		X String `xml:"x"`
	}] `xml:"p"`
	N Ptr[struct {
		P Ptr[struct {
			X String `xml:"x"`
		}] `xml:"p"`
	}] `xml:"n"`
}

const xsi = `xmlns:i="http://www.w3.org/2001/XMLSchema-instance"`

func TestDecode(t *testing.T) {
	cases := []struct {
		name, body string
		check      func(t *testing.T, d doc)
	}{
		{"values", `<r><s>abc</s><d>1000000.00</d><i>42</i><dt>2025-03-10T00:00:00</dt><p><x>y</x></p></r>`, func(t *testing.T, d doc) {
			if *d.S.Ptr() != "abc" || d.D.Ptr().String() != "1000000" || d.I.Value != 42 || d.Dt.String() != "2025-03-10" || d.P.V == nil || d.P.V.X.Value != "y" {
				t.Errorf("%+v", d)
			}
		}},
		{"xsi:nil", `<r ` + xsi + `><s i:nil="true"/><d i:nil="true"/><i i:nil="true"/><dt i:nil="true"/><p i:nil="true"><x>ignored</x></p></r>`, allNil},
		{"empty", `<r><s/><d></d><i> </i><dt/><p/></r>`, allNil},
		{"absent", `<r/>`, allNil},
		{"complex with blanks and a comment only", `<r><p> <!-- nothing --> </p></r>`, allNil},
		{"complex whose members are all zero", `<r><p><x/></p></r>`, func(t *testing.T, d doc) {
			if d.P.V == nil || d.P.V.X.Valid {
				t.Errorf("P = %+v, want a value with an invalid X", d.P.V)
			}
		}},
		{"complex whose members are all nil", `<r ` + xsi + `><p><x i:nil="true"/></p></r>`, func(t *testing.T, d doc) {
			if d.P.V == nil {
				t.Error("P = nil, want a value")
			}
		}},
		{"nested: inner empty", `<r><n><p/></n></r>`, func(t *testing.T, d doc) {
			if d.N.V == nil || d.N.V.P.V != nil {
				t.Errorf("N = %+v, want a value with a nil P", d.N.V)
			}
		}},
		{"nested: inner value", `<r><n> <p><x>1</x></p></n></r>`, func(t *testing.T, d doc) {
			if d.N.V == nil || d.N.V.P.V == nil || d.N.V.P.V.X.Value != "1" {
				t.Errorf("N = %+v, want a value holding P", d.N.V)
			}
		}},
		{"DateTime.MinValue", `<r><dt>0001-01-01T00:00:00</dt></r>`, allNil},
		{"date with zone", `<r><dt>2025-03-10T23:59:59.1234567-05:00</dt></r>`, func(t *testing.T, d doc) {
			if d.Dt.String() != "2025-03-10" {
				t.Errorf("date = %s", d.Dt)
			}
		}},
		{"signed decimal and int", `<r><d>+12.5</d><i>+7</i></r>`, func(t *testing.T, d doc) {
			if d.D.Decimal.String() != "12.5" || d.I.Value != 7 {
				t.Errorf("%+v", d)
			}
		}},
		{"entities, character references and CDATA", `<r><s>a&amp;b&#233;<![CDATA[<c>]]></s><p><x>&lt;y&gt;</x></p></r>`, func(t *testing.T, d doc) {
			if d.S.Value != "a&bé<c>" || d.P.V == nil || d.P.V.X.Value != "<y>" {
				t.Errorf("%+v", d)
			}
		}},
	}
	// Ptr decides emptiness in two ways: replaying the tokens (any decoder) or counting the
	// child elements read (under DecodeByLocalName and NewDecoder); all must agree.
	decoders := []struct {
		name   string
		decode func(body string, v any) error
	}{
		{"xml.Unmarshal", func(body string, v any) error { return xml.Unmarshal([]byte(body), v) }},
		{"DecodeByLocalName", decodeLocal},
		{"NewDecoder", func(body string, v any) error {
			d, release := NewDecoder([]byte(body))
			defer release()
			return d.Decode(v)
		}},
	}
	for _, dec := range decoders {
		for _, tc := range cases {
			t.Run(dec.name+"/"+tc.name, func(t *testing.T) {
				var d doc
				if err := dec.decode(tc.body, &d); err != nil {
					t.Fatal(err)
				}
				tc.check(t, d)
			})
		}
	}
}

// NewDecoder reads raw tokens: the decoder it returns must still check what a plain one does.
func TestNewDecoderRejects(t *testing.T) {
	for _, body := range []string{
		`<r><s>a</t></r>`, `<r><p><x>1</x></r>`, `<r><s>&bogus;</s></r>`, `<r><s>a</s>`,
	} {
		var want doc
		if err := xml.Unmarshal([]byte(body), &want); err == nil {
			t.Fatalf("%s: xml.Unmarshal accepts it, the case checks nothing", body)
		}
		d, release := NewDecoder([]byte(body))
		var got doc
		if err := d.Decode(&got); err == nil {
			t.Errorf("%s decoded without error: %+v", body, got)
		}
		release()
	}
}

func allNil(t *testing.T, d doc) {
	t.Helper()
	if d.S.Ptr() != nil || d.D.Ptr() != nil || d.I.Valid || d.Dt.Valid || d.P.V != nil || d.N.V != nil {
		t.Errorf("not all nil: %+v", d)
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, body := range []string{
		`<r><d>1e+06</d></r>`, `<r><d>1,5</d></r>`, `<r><d>.</d></r>`, `<r><d>--1</d></r>`, `<r><d>` + strings.Repeat("9", 80) + `</d></r>`,
		`<r><i>4.0</i></r>`, `<r><i>99999999999999999999</i></r>`,
		`<r><dt>10/03/2025</dt></r>`, `<r><dt>2025-03-10Tjunk</dt></r>`, `<r><dt>2025-02-30</dt></r>`,
		`<r><s><nested/></s></r>`,
	} {
		var d doc
		if err := xml.Unmarshal([]byte(body), &d); err == nil {
			t.Errorf("%s decoded without error: %+v", body, d)
		}
	}
}

func TestEncode(t *testing.T) {
	type out struct {
		XMLName xml.Name `xml:"r"`
		S       String   `xml:"s"`
		D       Decimal  `xml:"d"`
		I       Int      `xml:"i"`
		Dt      Date     `xml:"dt"`
		P       Ptr[out] `xml:"p"`
	}
	b, err := xml.Marshal(out{S: NewString("a&b"), D: NewDecimal(decimal.RequireFromString("1000000")), I: NewInt(-3), Dt: NewDate(2025, time.March, 1)})
	if err != nil {
		t.Fatal(err)
	}
	if want := `<r><s>a&amp;b</s><d>1000000.00</d><i>-3</i><dt>2025-03-01T00:00:00</dt></r>`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	for in, want := range map[string]decimal.Decimal{
		"300.00":  decimal.RequireFromString("1200").Div(decimal.NewFromInt(4)), // exponent -16
		"0.015":   decimal.RequireFromString("0.0150000"),
		"1.10":    decimal.New(11, -1),
		"5000.00": decimal.New(5, 3),
	} {
		if got := FormatDecimal(want); got != in {
			t.Errorf("FormatDecimal(%v) = %s, want %s", want, got, in)
		}
	}
	b, _ = xml.Marshal(out{S: NewString("")})
	if string(b) != `<r></r>` {
		t.Errorf("invalid values written: %s", b)
	}
}

func TestJSON(t *testing.T) {
	b, err := json.Marshal(map[string]any{
		"s": NewString("x"), "sn": String{}, "d": NewDecimal(decimal.RequireFromString("0.1")), "dn": Decimal{},
		"i": NewInt(5), "in": Int{}, "dt": NewDate(2025, 1, 2), "dtn": Date{}, "pn": Ptr[String]{},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"d":0.10,"dn":null,"dt":"2025-01-02","dtn":null,"i":5,"in":null,"pn":null,"s":"x","sn":null}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"0", "1000000.00", "-0.01", "+1", "1e5", ".5", "5.", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDecimal(s)
		if err != nil {
			return
		}
		back, err := ParseDecimal(FormatDecimal(d))
		if err != nil || !back.Equal(d) {
			t.Fatalf("%q -> %s -> %v (%v)", s, FormatDecimal(d), back, err)
		}
	})
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2025-03-10", "2025-03-10T00:00:00", "0001-01-01T00:00:00", "2025-03-10T10:00:00.5+05:00", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDate(s)
		if err != nil || !d.Valid {
			return
		}
		back, err := ParseDate(d.String())
		if err != nil || back != d {
			t.Fatalf("%q -> %s -> %v (%v)", s, d, back, err)
		}
	})
}
