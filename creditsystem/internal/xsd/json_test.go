package xsd

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

type cuota struct {
	Fecha   Date    `json:"dFecha"`
	Numero  Int     `json:"nNumero"`
	Valor   Decimal `json:"nValor"`
	Detalle String  `json:"cDetalle"`
}

type respuesta struct {
	Nombre  String `json:"cNombre"`
	Error   bool   `json:"lError"`
	Sin     String `json:"-"`
	privado string
	Tabla   Ptr[struct {
		Cuota []*cuota `json:"Cuota"`
	}] `json:"oTabla"`
	Nested   Ptr[cuota] `json:"oCuota"`
	Untagged Int
	Puntero  *cuota  `json:"pCuota"`
	Lista    []cuota `json:"lista"`
}

// Types encoding/json writes by other rules, which AppendJSON leaves to it.
type (
	withOptions struct {
		A String `json:"a,omitempty"`
		N int    `json:"n,string"`
	}
	embedded struct {
		cuota
		B bool `json:"b"`
	}
	odd struct {
		A String `json:"a b"`
	}
	duplicated struct {
		X String
		B String `json:"X"` // the tagged field wins
	}
	ownString struct{ String } // its own MarshalJSON, not String's
	texter    struct{ v string }
	ptrMa     struct{ v string }
	misc      struct {
		Text  texter          `json:"text"`
		PtrM  ptrMa           `json:"ptrm"`
		Bytes []byte          `json:"bytes"`
		Map   map[string]int  `json:"map"`
		Iface any             `json:"iface"`
		Str   string          `json:"str"`
		Float float64         `json:"float"`
		Arr   [2]Int          `json:"arr"`
		Dec   decimal.Decimal `json:"dec"`
	}
)

func (o ownString) MarshalJSON() ([]byte, error) { return []byte(`"own"`), nil }
func (t texter) MarshalText() ([]byte, error)    { return []byte("<" + t.v + ">"), nil }
func (p *ptrMa) MarshalJSON() ([]byte, error)    { return []byte(` { "v" : "` + p.v + `" } `), nil }

// AppendJSON writes what json.Marshal writes, for the generated types and for anything else.
func TestAppendJSONIsJSONMarshal(t *testing.T) {
	day := NewDate(2025, time.March, 10)
	full := respuesta{
		Nombre: NewString("CLIENTE <UNO> & \"DOS\" \\ ñ \u2028 \x01 \xff"), Error: true, Sin: NewString("x"), privado: "p",
		Nested:   NewPtr(&cuota{Fecha: day, Numero: NewInt(-3), Valor: NewDecimal(decimal.RequireFromString("1000000")), Detalle: NewString("")}),
		Untagged: NewInt(7),
		Puntero:  &cuota{Valor: NewDecimal(decimal.RequireFromString("0.015"))},
		Lista:    []cuota{},
	}
	full.Tabla.V = &struct {
		Cuota []*cuota `json:"Cuota"`
	}{Cuota: []*cuota{{Fecha: day, Numero: NewInt(1), Valor: NewDecimal(decimal.RequireFromString("0.01"))}, nil}}
	for name, v := range map[string]any{
		"every member": &full,
		"zero values":  &respuesta{},
		"by value":     full,
		"each escape": []String{NewString("a<b"), NewString("a>b"), NewString("a&b"), NewString(`a"b`), NewString(`a\b`),
			NewString("a\nb"), NewString("a\x7fb"), NewString("añb"), NewString("a\u2028b"), NewString("a\xffb"), NewString("a~ b")},
		"dates": []Date{NewDate(5, time.January, 1), NewDate(9999, time.December, 31), NewDate(12345, time.May, 6),
			NewDate(-1, time.May, 6), {Year: 2025, Month: 0, Day: 0, Valid: true}, {Year: 2025, Month: 13, Day: 100, Valid: true}, {}},
		"pointers to them": []*String{nil, {Value: "x", Valid: true}},
		"embeds String": &struct {
			V ownString   `json:"v"`
			P *ownString  `json:"p"`
			L []ownString `json:"l"`
		}{V: ownString{NewString("x")}, P: &ownString{NewString("y")}, L: []ownString{{NewString("z")}}},
		"nil":               nil,
		"nil pointer":       (*respuesta)(nil),
		"invalid String":    String{},
		"empty valid":       String{Valid: true},
		"Ptr nil":           Ptr[cuota]{},
		"slice of Ptr":      []Ptr[cuota]{{}, NewPtr(&cuota{})},
		"nil slice":         []cuota(nil),
		"tag options":       &withOptions{A: NewString("a"), N: 4},
		"embedded":          &embedded{cuota: cuota{Numero: NewInt(2)}, B: true},
		"odd name":          &odd{A: NewString("a")},
		"duplicate names":   &duplicated{X: NewString("a"), B: NewString("b")},
		"other types":       &misc{Text: texter{"t&"}, PtrM: ptrMa{"p"}, Bytes: []byte("hi"), Map: map[string]int{"b": 1, "a": 2}, Iface: cuota{}, Str: "<s>", Float: 1e21, Dec: decimal.RequireFromString("1.50")},
		"other types, zero": misc{},
	} {
		t.Run(name, func(t *testing.T) {
			want, werr := json.Marshal(v)
			got, err := AppendJSON([]byte("prefix"), v)
			if err != nil || werr != nil || !bytes.Equal(got, append([]byte("prefix"), want...)) {
				t.Errorf("AppendJSON = %s, %v\njson.Marshal = %s, %v", got, err, want, werr)
			}
		})
	}
}

// A marshaller's error reaches the caller, as from json.Marshal.
func TestAppendJSONError(t *testing.T) {
	v := struct {
		F float64 `json:"f"`
	}{F: 0}
	v.F = v.F / v.F // NaN: json.Marshal refuses it
	if _, err := AppendJSON(nil, &v); err == nil {
		t.Fatal("AppendJSON of NaN: no error")
	}
}
