package xsd

import (
	"bytes"
	"encoding/xml"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

type xmlItem struct {
	Texto  String  `xml:"http://schemas.datacontract.org/2004/07/X.Modelos cTexto,omitempty"`
	Precio Decimal `xml:"http://schemas.datacontract.org/2004/07/X.Modelos nPrecio,omitempty"`
}

type xmlItems struct {
	Item []*xmlItem `xml:"http://schemas.datacontract.org/2004/07/X.Modelos Item,omitempty"`
}

type xmlSolicitud struct {
	Codigo   String         `xml:"http://schemas.datacontract.org/2004/07/X.Modelos cCodigo,omitempty"`
	Monto    Decimal        `xml:"http://schemas.datacontract.org/2004/07/X.Modelos nMonto,omitempty"`
	Plazo    Int            `xml:"http://schemas.datacontract.org/2004/07/X.Modelos nPlazo,omitempty"`
	Fecha    Date           `xml:"http://schemas.datacontract.org/2004/07/X.Modelos dFecha,omitempty"`
	Items    Ptr[xmlItems]  `xml:"http://schemas.datacontract.org/2004/07/X.Modelos iItems,omitempty"`
	Flag     bool           `xml:"http://schemas.datacontract.org/2004/07/X.Modelos lFlag"`
	Opcional bool           `xml:"http://schemas.datacontract.org/2004/07/X.Modelos lOpcional,omitempty"`
	Puntero  *String        `xml:"http://schemas.datacontract.org/2004/07/X.Modelos cPuntero,omitempty"`
	Plano    string         `xml:"cPlano,omitempty"`
	Lista    []xmlItem      `xml:"http://schemas.datacontract.org/2004/07/X.Modelos Lista"`
	Nested   xmlItem        `xml:"oNested"`
	Raro     String         `xml:"urn:a&b\"c cRaro,omitempty"`
	Ignored  String         `xml:"-"`
	private  String         // skipped by both encoders
	Sub      Ptr[xmlItem]   `xml:"oSub,omitempty"`
	Subs     []Ptr[xmlItem] `xml:"oSubs,omitempty"`
}

// pointers: omitempty looks at the pointer, not at what it points to.
type pointers struct {
	S *string   `xml:"s,omitempty"`
	B *bool     `xml:"b,omitempty"`
	L []*string `xml:"l,omitempty"`
	P *String   `xml:"p,omitempty"`
	N *string   `xml:"n,omitempty"`
}

// node is recursive: its plan meets itself while it is built.
type node struct {
	V    String `xml:"urn:n v,omitempty"`
	Next *node  `xml:"urn:n next,omitempty"`
}

type xmlOperation struct {
	XMLName   xml.Name          `xml:"Operacion"`
	Solicitud Ptr[xmlSolicitud] `xml:"oSolicitud,omitempty"`
}

func str(s string) String { return String{Value: s, Valid: true} }

func dec(s string) Decimal { return Decimal{Decimal: decimal.RequireFromString(s), Valid: true} }

// encodingXML is what encoding/xml writes for v under name, as element.MarshalXML did.
func encodingXML(t *testing.T, name xml.Name, v any) string {
	t.Helper()
	var buf bytes.Buffer
	if err := xml.NewEncoder(&buf).EncodeElement(v, xml.StartElement{Name: name}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestAppendXMLContentWritesWhatEncodingXMLWrites(t *testing.T) {
	p := func(s string) *String { v := str(s); return &v }
	full := xmlSolicitud{
		Codigo: str("A<B>&\"C\"'D'\t\n\r\x01\x7f é \xff\xfe 𝄞 \uFFFE \uFFFD"), Monto: dec("1000000"),
		Plazo: NewInt(-12), Fecha: NewDate(2026, time.December, 6),
		Items: Ptr[xmlItems]{V: &xmlItems{Item: []*xmlItem{{Texto: str("uno"), Precio: dec("0.005")}, nil, {}}}},
		Flag:  false, Opcional: true, Puntero: p(""), Plano: "x<y", Lista: []xmlItem{{}, {Texto: str("dos")}},
		Nested: xmlItem{Precio: dec("-0.01")}, Raro: str("r"), Ignored: str("no"), private: str("no"),
		Sub: Ptr[xmlItem]{V: &xmlItem{}}, Subs: []Ptr[xmlItem]{{}, {V: &xmlItem{Texto: str("tres")}}},
	}
	cases := []struct {
		name string
		v    any
	}{
		{"every kind of member", &xmlOperation{Solicitud: Ptr[xmlSolicitud]{V: &full}}},
		{"nothing set", &xmlOperation{Solicitud: Ptr[xmlSolicitud]{V: &xmlSolicitud{}}}},
		{"nil request", &xmlOperation{}},
		{"empty but valid strings", &xmlSolicitud{Codigo: str(""), Puntero: p(""), Items: Ptr[xmlItems]{V: &xmlItems{Item: []*xmlItem{}}}}},
		{"a struct without XMLName", &xmlItems{Item: []*xmlItem{{Texto: str("]]>")}}}},
		{"XMLName with a namespace", &namespaced{A: str("a")}},
		{"recursive type", &node{V: str("1"), Next: &node{Next: &node{V: str("3")}}}},
		{"omitempty of pointers to empty values", &pointers{S: new(string), B: new(bool), L: []*string{new(string), nil}, P: &String{Valid: true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := xml.Name{Space: "http://tempuri.org/", Local: "Operacion"}
			want := encodingXML(t, name, tc.v)
			content, ok := AppendXMLContent([]byte("prefix"), tc.v)
			if !ok {
				t.Fatal("AppendXMLContent left a generated type to encoding/xml")
			}
			got := `<Operacion xmlns="http://tempuri.org/">` + string(bytes.TrimPrefix(content, []byte("prefix"))) + `</Operacion>`
			if got != want {
				t.Errorf("AppendXMLContent wrote\n%s\nencoding/xml\n%s", got, want)
			}
		})
	}
}

// Types that encoding/xml writes by rules AppendXMLContent does not follow: it leaves them to it.
type (
	withAttr struct {
		A String `xml:"a,attr"`
	}
	withCharData struct {
		A string `xml:",chardata"`
	}
	withInterface struct {
		A any `xml:"a"`
	}
	withNumber struct {
		N int `xml:"n"`
	}
	withUntagged struct{ A String }
	withPath     struct {
		A String `xml:"a>b"`
	}
	withEmbedded struct {
		xmlItem
	}
	namedByValue struct {
		XMLName xml.Name
		A       String `xml:"a"`
	}
	fieldNamedBy struct {
		Inner struct {
			XMLName xml.Name `xml:"inner"`
		} `xml:"inner"`
	}
	namespaced struct {
		XMLName xml.Name `xml:"urn:x Operacion"`
		A       String   `xml:"a"`
	}
	withMarshaler struct {
		A marshals `xml:"a"`
	}
	marshals   struct{}
	withTexter struct {
		T time.Time `xml:"t"`
	}
	ptrToString struct {
		P Ptr[String] `xml:"p"`
	}
	withBytes struct {
		B []byte `xml:"b"`
	}
	sameName struct {
		A String `xml:"x"`
		B String `xml:"urn:b x"`
	}
	// A field of a recursive type named by its own XMLName, which the field's plan is built
	// before.
	selfNamed struct {
		Next    *selfNamed `xml:"R"`
		XMLName xml.Name   `xml:"ns R"`
	}
	// A cycle through a type that is not writable: recB's plan is built while recA's is, on
	// the assumption that recA is writable.
	recA struct {
		B *recB `xml:"b"`
		N int   `xml:"n"`
	}
	recB struct {
		A *recA `xml:"a"`
	}
)

func (marshals) MarshalXML(*xml.Encoder, xml.StartElement) error { return nil }

func TestAppendXMLContentLeavesOtherRulesToEncodingXML(t *testing.T) {
	cases := []struct {
		name string
		v    any
	}{
		{"attribute", &withAttr{}}, {"character data", &withCharData{}}, {"interface", &withInterface{}},
		{"number", &withNumber{}}, {"untagged field", &withUntagged{}}, {"path", &withPath{}},
		{"embedded field", &withEmbedded{}}, {"XMLName without a name", &namedByValue{}},
		{"field whose type has an XMLName", &fieldNamedBy{}}, {"marshaller of another type", &withMarshaler{}},
		{"text marshaller", &withTexter{}}, {"Ptr of a simple type", &ptrToString{}}, {"bytes", &withBytes{}},
		{"a cycle through a number, built from its number's side", &recA{}}, {"the other side of it", &recB{A: &recA{}}},
		{"two members of one name", &sameName{}},
		{"recursive field named by its XMLName", &selfNamed{Next: &selfNamed{}}},
		{"not a pointer", xmlItems{}}, {"nil pointer", (*xmlItems)(nil)}, {"pointer to a string", new(string)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if b, ok := AppendXMLContent([]byte("x"), tc.v); ok || string(b) != "x" {
				t.Errorf("AppendXMLContent = %q, %v; want it left to encoding/xml", b, ok)
			}
		})
	}
}

func BenchmarkAppendXMLContent(b *testing.B) {
	v := &xmlOperation{Solicitud: Ptr[xmlSolicitud]{V: &xmlSolicitud{Codigo: str("000598"), Monto: dec("100"), Plazo: NewInt(3),
		Items: Ptr[xmlItems]{V: &xmlItems{Item: []*xmlItem{{Texto: str("REFRIGERADORA"), Precio: dec("500000")}}}}}}}
	b.Run("AppendXMLContent", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf, _ = AppendXMLContent(buf[:0], v)
		}
	})
	b.Run("encoding/xml", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			_ = xml.NewEncoder(&buf).EncodeElement(v, xml.StartElement{Name: xml.Name{Local: "Operacion"}})
		}
	})
}

// The tags of XMLName and of members: "[namespace ]name" and nothing else.
func TestElementName(t *testing.T) {
	for _, tc := range []struct {
		tag, space, local string
		ok                bool
	}{
		{"R", "", "R", true}, {"urn:x R", "urn:x", "R", true},
		{"", "", "", false}, {"ns ", "ns", "", false}, {"R,attr", "", "R,attr", false},
		{"a>b", "", "a>b", false}, {"urn:x a b", "urn:x", "a b", false},
	} {
		space, local, ok := elementName(tc.tag)
		if ok != tc.ok || ok && (space != tc.space || local != tc.local) {
			t.Errorf("elementName(%q) = %q, %q, %v; want %q, %q, %v", tc.tag, space, local, ok, tc.space, tc.local, tc.ok)
		}
	}
}
