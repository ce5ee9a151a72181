package httpx_test

import (
	"slices"
	"testing"

	"github.com/platform/integrations/internal/httpx"
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
