package creditsystem_test

import (
	"bytes"
	"encoding/xml"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem/internal/cartera"
	"github.com/platform/integrations/creditsystem/internal/central"
	"github.com/platform/integrations/creditsystem/internal/xsd"
)

// Every operation element of both services, requests and answers.
var operationTypes = []any{
	&cartera.ConsultarTarjeta{}, &cartera.ConsultarTarjetaResponse{},
	&cartera.GrabarAutorizacion{}, &cartera.GrabarAutorizacionResponse{},
	&cartera.GrabarConsumo{}, &cartera.GrabarConsumoResponse{},
	&cartera.GrabarReversoAutorizacion{}, &cartera.GrabarReversoAutorizacionResponse{},
	&cartera.GrabarReversoConsumo{}, &cartera.GrabarReversoConsumoResponse{},
	&cartera.ConsultarDeudaTarjeta{}, &cartera.ConsultarDeudaTarjetaResponse{},
	&cartera.GrabarPagoTarjeta{}, &cartera.GrabarPagoTarjetaResponse{},
	&cartera.GrabarReversoPagoTarjeta{}, &cartera.GrabarReversoPagoTarjetaResponse{},
	&central.ConsultarAlternativaFinanciacion{}, &central.ConsultarAlternativaFinanciacionResponse{},
}

// The client writes each request's members itself (xsd.AppendXMLContent) inside the element
// encoding/xml opens: for every generated type, filled at random, the element is byte for byte
// what encoding/xml writes for the whole value.
func TestRequestsEncodeAsEncodingXMLDoes(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 2026))
	for _, typ := range operationTypes {
		elem := reflect.TypeOf(typ).Elem()
		t.Run(elem.Name(), func(t *testing.T) {
			name := xml.Name{Space: "http://tempuri.org/", Local: elem.Name()}
			for i := range 300 {
				v := reflect.New(elem)
				fill(r, v.Elem(), 0)
				var want bytes.Buffer
				if err := xml.NewEncoder(&want).EncodeElement(v.Interface(), xml.StartElement{Name: name}); err != nil {
					t.Fatal(err)
				}
				content, ok := xsd.AppendXMLContent(nil, v.Interface())
				if !ok {
					t.Fatal("AppendXMLContent left the type to encoding/xml")
				}
				got := `<` + name.Local + ` xmlns="` + name.Space + `">` + string(content) + `</` + name.Local + `>`
				if got != want.String() {
					t.Fatalf("value %d: AppendXMLContent wrote\n%s\nencoding/xml\n%s", i, got, want.String())
				}
			}
		})
	}
}

var (
	stringType  = reflect.TypeFor[xsd.String]()
	decimalType = reflect.TypeFor[xsd.Decimal]()
	intType     = reflect.TypeFor[xsd.Int]()
	dateType    = reflect.TypeFor[xsd.Date]()
	texts       = []string{"", "000598", "A&B <C> \"D\" 'E'", "ñandú é", "tab\there\r\nline", "\x00\x1f\x7f", "\xff\xfe", "𝄞", "\uFFFE\uFFFD", "]]>"}
)

// fill sets v, of a generated type, at random: each member absent, empty or set, lists of
// zero to three items, some of them nil.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	switch t := v.Type(); {
	case t == stringType:
		if r.IntN(4) > 0 {
			s := texts[r.IntN(len(texts))]
			if r.IntN(2) == 0 {
				s = strings.Repeat("x", r.IntN(20))
			}
			v.Set(reflect.ValueOf(xsd.String{Value: s, Valid: true}))
		}
	case t == decimalType:
		if r.IntN(4) > 0 {
			d := decimal.New(r.Int64N(2_000_000_001)-1_000_000_000, -int32(r.IntN(6)))
			v.Set(reflect.ValueOf(xsd.Decimal{Decimal: d, Valid: true}))
		}
	case t == intType:
		if r.IntN(4) > 0 {
			v.Set(reflect.ValueOf(xsd.NewInt(int64(r.Uint64()))))
		}
	case t == dateType:
		if r.IntN(4) > 0 {
			v.Set(reflect.ValueOf(xsd.NewDate(1900+r.IntN(200), time.Month(1+r.IntN(12)), 1+r.IntN(28))))
		}
	case strings.HasPrefix(t.Name(), "Ptr["):
		if depth < 6 && r.IntN(4) > 0 {
			p := reflect.New(t.Field(0).Type.Elem())
			fill(r, p.Elem(), depth+1)
			v.Field(0).Set(p)
		}
	case t.Kind() == reflect.Pointer:
		if depth < 6 && r.IntN(5) > 0 {
			p := reflect.New(t.Elem())
			fill(r, p.Elem(), depth+1)
			v.Set(p)
		}
	case t.Kind() == reflect.Slice:
		n := r.IntN(4)
		s := reflect.MakeSlice(t, n, n)
		for i := range n {
			fill(r, s.Index(i), depth+1)
		}
		if n > 0 || r.IntN(2) == 0 {
			v.Set(s)
		}
	case t.Kind() == reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case t.Kind() == reflect.Struct:
		for i := range v.NumField() {
			if t.Field(i).IsExported() && t.Field(i).Name != "XMLName" {
				fill(r, v.Field(i), depth)
			}
		}
	}
}
