package httpx_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/internal/validation"
)

func TestDuplicateMembers(t *testing.T) {
	cases := []struct {
		name string
		body string
		want []string
	}{
		{"none", `{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}`, nil},
		{"exact twice", `{"amount":1,"amount":2}`, []string{"amount is given more than once"}},
		{"case variants", `{"Source_Xml_Hash":"a","SOURCE_XML_HASH":"b"}`, []string{"Source_Xml_Hash is given more than once (as Source_Xml_Hash and SOURCE_XML_HASH)"}},
		{"three times, reported once", `{"a":1,"A":2,"a":3}`, []string{"a is given more than once (as a and A)"}},
		{"nested object", `{"extra_fields":{"valor_1":1,"valor_1":2}}`, []string{"extra_fields.valor_1 is given more than once"}},
		{"in an array element", `{"items":[{"precio":"1"},{"precio":"1","PRECIO":"2"}]}`, []string{"items[1].precio is given more than once (as precio and PRECIO)"}},
		{"after nested values", `{"a":{"x":[1,{"y":2}]},"b":[],"A":3}`, []string{"a is given more than once (as a and A)"}},
		{"top-level array", `[{"k":1,"k":2}]`, []string{"[0].k is given more than once"}},
		{"not JSON", `{"a":`, nil},
		{"a string value that looks like a key", `{"a":"a","b":"a"}`, nil},
		{"an escaped name", `{"amount":1,"\u0061mount":2}`, []string{"amount is given more than once"}},
		{"an escaped quote in a value", `{"a":"x\"y","A":1}`, []string{"a is given more than once (as a and A)"}},
		{"non-ASCII names, distinct", `{"año":1,"AÑO":2,"ano":3}`, []string{"año is given more than once (as año and AÑO)"}},
		{"after a truncated value", `{"a":1,"a":2,`, []string{"a is given more than once"}},
		{"in the 70th member", manyMembers(70, "m3"), []string{"m3 is given more than once"}},
		{"70 distinct members", manyMembers(70, ""), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range httpx.DuplicateMembers([]byte(tc.body)) {
				got = append(got, p.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// manyMembers is an object of n members m0...; a non-empty again is given once more at the end.
func manyMembers(n int, again string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, `"m%d":%d,`, i, i)
	}
	if again != "" {
		fmt.Fprintf(&b, `"%s":0,`, again)
	}
	b.WriteString(`"last":[1,{"x":null},true]}`)
	return b.String()
}

func TestDuplicateFree(t *testing.T) {
	cases := []struct {
		name string
		body string
		want bool
	}{
		{"flat", `{"a":1,"b":"x","c":null}`, true},
		{"nested, the same name in two objects", ` {"a":{"a":1},"b":[{"a":1},{"a":2}]} `, true},
		{"values of every kind", `{"s":"q\"\\u00e9","n":-1.5e3,"t":true,"f":false,"z":null,"e":{},"l":[]}`, true},
		{"top-level array", `[1,"a",{"k":1}]`, true},
		{"a repeated name", `{"a":1,"A":2}`, false},
		{"an escaped name", `{"\u0061":1}`, false},
		{"a non-ASCII name", `{"año":1}`, false},
		{"truncated", `{"a":1,`, false},
		{"trailing text", `{"a":1} x`, false},
		{"no colon", `{"a" 1}`, false},
		{"empty", ``, false},
		{"too deep", strings.Repeat("[", 70) + strings.Repeat("]", 70), false},
		{"too many members", manyMembers(70, ""), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := httpx.DuplicateFree([]byte(tc.body)); got != tc.want {
				t.Fatalf("DuplicateFree(%s) = %v, want %v", tc.body, got, tc.want)
			}
		})
	}
}

// FuzzDuplicateMembers: the fast path never hides a problem that encoding/json's reading finds.
func FuzzDuplicateMembers(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":{"a":2}}`, `{"a":1,"A":2}`, `{"\u0061":1,"a":2}`, `[{"k":[1,{"k":2}]}]`, `{"a":"\"","b":tru}`, `{"año":1,"AÑO":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		full := httpx.DuplicateMembersFull(body)
		if httpx.DuplicateFree(body) && len(full) > 0 {
			t.Fatalf("DuplicateFree(%q) is true but the full reading finds %v", body, full)
		}
		if got := httpx.DuplicateMembers(body); !slices.Equal(got, full) {
			t.Fatalf("DuplicateMembers(%q) = %v, the full reading %v", body, got, full)
		}
	})
}

func BenchmarkDuplicateMembers(b *testing.B) {
	body := []byte(`{"codigo_empresa":"000598","identificacion":"1712345678","numero_tarjeta":"1712345678",` +
		`"codigo_producto":"001","plazo":3,"monto":"100.00","punto_venta":"PV1",` +
		`"items":[{"codigo":"A1","descripcion":"Televisor \"55\"","cantidad":1,"precio":"100.00"}]}`)
	for _, bc := range []struct {
		name string
		fn   func([]byte) []validation.Problem
	}{{"fast", httpx.DuplicateMembers}, {"full", httpx.DuplicateMembersFull}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if p := bc.fn(body); p != nil {
					b.Fatal(p)
				}
			}
		})
	}
}
