package xsd

import (
	"encoding/xml"
	"strings"
	"testing"
)

const testNS = "urn:test:dc"

type lnItem struct {
	Code String `xml:"urn:test:dc code,omitempty"`
}

type lnList struct {
	Item []*lnItem `xml:"urn:test:dc Item,omitempty"`
}

type lnResult struct {
	Name   String      `xml:"urn:test:dc name,omitempty"`
	Flag   bool        `xml:"urn:test:dc flag"`
	Amount Decimal     `xml:"urn:test:dc amount,omitempty"`
	List   Ptr[lnList] `xml:"urn:test:dc list,omitempty"`
}

type lnAnswer struct {
	XMLName xml.Name      `xml:"Answer"`
	Result  Ptr[lnResult] `xml:"Result,omitempty"`
}

// decodeLocal decodes body's root element into v through DecodeByLocalName.
func decodeLocal(body string, v any) error {
	d := xml.NewDecoder(strings.NewReader(body))
	for {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		if se, ok := tok.(xml.StartElement); ok {
			return DecodeByLocalName(d, v, se)
		}
	}
}

func TestDecodeByLocalName(t *testing.T) {
	members := `<name>N</name><flag>true</flag><amount>1.50</amount><unknown><name>not a member</name></unknown>` +
		`<list><Item><code>A</code></Item><Item><code>B</code></Item></list>`
	cases := []struct{ name, body string }{
		{"tag namespace", `<Answer xmlns="urn:svc"><Result xmlns="` + testNS + `">` + members + `</Result></Answer>`},
		{"no namespace", `<Answer><Result>` + members + `</Result></Answer>`},
		{"empty xmlns", `<Answer xmlns="urn:svc"><Result xmlns="">` + members + `</Result></Answer>`},
		{"inherited service namespace", `<Answer xmlns="urn:svc"><Result>` + members + `</Result></Answer>`},
		{"other prefix and URI", `<Answer xmlns="urn:svc"><Result xmlns:x="urn:other">` + strings.NewReplacer("</", "</x:", "<", "<x:").Replace(members) + `</Result></Answer>`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var a lnAnswer
			if err := decodeLocal(tc.body, &a); err != nil {
				t.Fatal(err)
			}
			r := a.Result.V
			if r == nil || r.Name.Value != "N" || !r.Flag || r.Amount.Decimal.String() != "1.5" || r.List.V == nil || len(r.List.V.Item) != 2 || r.List.V.Item[1].Code.Value != "B" {
				t.Fatalf("decoded %+v", r)
			}
		})
	}
}

func TestDecodeByLocalNameErrors(t *testing.T) {
	for _, body := range []string{
		`<Answer><Result><name>N</name>`,       // truncated
		`<Answer><Result><amount>1e3</amount>`, // bad value
	} {
		var a lnAnswer
		if err := decodeLocal(body, &a); err == nil {
			t.Errorf("%s: no error", body)
		}
	}
	if err := DecodeByLocalName(xml.NewDecoder(strings.NewReader("")), lnAnswer{}, xml.StartElement{}); err == nil {
		t.Error("a non-pointer was accepted")
	}
}
