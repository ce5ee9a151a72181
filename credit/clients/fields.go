package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"
	"github.com/shopspring/decimal"

	"github.com/platform/integrations/internal/validation"
)

// Field is one optional input value: whether the caller sent it, whether it was null, its value,
// and whether what was sent could not be read as a T at all (Invalid: a decoder found a number
// where text belongs, say; validation reports it with the input's other problems).
type Field[T any] struct {
	Set     bool
	Null    bool
	Value   T
	Invalid bool
}

// FieldValue returns a field holding v.
func FieldValue[T any](v T) Field[T] { return Field[T]{Set: true, Value: v} }

// FieldNull returns a field sent as null (clears a nullable field on update).
func FieldNull[T any]() Field[T] { return Field[T]{Set: true, Null: true} }

// FieldInvalid returns a field whose value could not be read as a T.
func FieldInvalid[T any]() Field[T] { return Field[T]{Set: true, Invalid: true} }

// Fields is the input of create and update: every field of the client record a caller may send.
// On update only the fields with Set change; Null clears a nullable field.
type Fields struct {
	CodigoCliente  Field[string]
	CodigoEmpresa  Field[string]
	NombreCliente  Field[string]
	Identificacion Field[string]
	Email          Field[string]
	Telefono1      Field[string]
	Telefono2      Field[string]
	Direccion1     Field[string]
	CodigoVendedor Field[string]
	TerminoPagos   Field[string]
	LimiteCredito1 Field[decimal.Decimal]
	LimiteCredito2 Field[decimal.Decimal]
	CodigoSucursal Field[string]
	Localizacion   Field[string]
	ListaPrecios   Field[string]
	NivelRiesgo    Field[string]
	ExtraFields    Field[ExtraFields]
}

// Names of the fields that are not text.
const (
	NameLimiteCredito1 = "limite_credito_1"
	NameLimiteCredito2 = "limite_credito_2"
	NameExtraFields    = "extra_fields"
)

// textField is one text field of a client: its name in the specification, its rules, where the
// input holds it and where it goes on the record. Adding a text field to the client is one row
// here (plus the record's column).
type textField struct {
	name     string
	required bool // required on create, never null or blank on update
	max      int  // characters; 0: no maximum (a text column)
	in       func(*Fields) *Field[string]
	out      func(*Client) **string // nullable columns
	outReq   func(*Client) *string  // required columns
}

var textFields = []textField{
	{name: "codigo_cliente", max: 80, in: func(f *Fields) *Field[string] { return &f.CodigoCliente }, out: func(c *Client) **string { return &c.CodigoCliente }},
	{name: "codigo_empresa", required: true, max: 20, in: func(f *Fields) *Field[string] { return &f.CodigoEmpresa }, outReq: func(c *Client) *string { return &c.CodigoEmpresa }},
	{name: "nombre_cliente", required: true, max: 255, in: func(f *Fields) *Field[string] { return &f.NombreCliente }, outReq: func(c *Client) *string { return &c.NombreCliente }},
	{name: "identificacion", required: true, max: 50, in: func(f *Fields) *Field[string] { return &f.Identificacion }, outReq: func(c *Client) *string { return &c.Identificacion }},
	{name: "email", max: 255, in: func(f *Fields) *Field[string] { return &f.Email }, out: func(c *Client) **string { return &c.Email }},
	{name: "telefono_1", max: 50, in: func(f *Fields) *Field[string] { return &f.Telefono1 }, out: func(c *Client) **string { return &c.Telefono1 }},
	{name: "telefono_2", max: 50, in: func(f *Fields) *Field[string] { return &f.Telefono2 }, out: func(c *Client) **string { return &c.Telefono2 }},
	{name: "direccion_1", in: func(f *Fields) *Field[string] { return &f.Direccion1 }, out: func(c *Client) **string { return &c.Direccion1 }},
	{name: "codigo_vendedor", max: 100, in: func(f *Fields) *Field[string] { return &f.CodigoVendedor }, out: func(c *Client) **string { return &c.CodigoVendedor }},
	{name: "termino_pagos", max: 100, in: func(f *Fields) *Field[string] { return &f.TerminoPagos }, out: func(c *Client) **string { return &c.TerminoPagos }},
	{name: "codigo_sucursal", max: 50, in: func(f *Fields) *Field[string] { return &f.CodigoSucursal }, out: func(c *Client) **string { return &c.CodigoSucursal }},
	{name: "localizacion", max: 50, in: func(f *Fields) *Field[string] { return &f.Localizacion }, out: func(c *Client) **string { return &c.Localizacion }},
	{name: "lista_precios", max: 50, in: func(f *Fields) *Field[string] { return &f.ListaPrecios }, out: func(c *Client) **string { return &c.ListaPrecios }},
	{name: "nivel_riesgo", max: 50, in: func(f *Fields) *Field[string] { return &f.NivelRiesgo }, out: func(c *Client) **string { return &c.NivelRiesgo }},
}

// TextFields lists the text fields of f by their name in the specification, so a decoder fills
// them by name.
func (f *Fields) TextFields() iter.Seq2[string, *Field[string]] {
	return func(yield func(string, *Field[string]) bool) {
		for _, t := range textFields {
			if !yield(t.name, t.in(f)) {
				return
			}
		}
	}
}

// CreditSystemFields keeps only the fields POST /clients/from-creditsystem accepts
// (codigo_empresa, nombre_cliente, identificacion, email, telefono_1, telefono_2, direccion_1,
// extra_fields); anything else the caller sent is ignored, codigo_cliente included, since it stays
// null until the manual ERP sync.
func (f Fields) CreditSystemFields() Fields {
	return Fields{
		CodigoEmpresa:  f.CodigoEmpresa,
		NombreCliente:  f.NombreCliente,
		Identificacion: f.Identificacion,
		Email:          f.Email,
		Telefono1:      f.Telefono1,
		Telefono2:      f.Telefono2,
		Direccion1:     f.Direccion1,
		ExtraFields:    f.ExtraFields,
	}
}

// MaxExtraTexto is the longest texto_n value, in characters.
const MaxExtraTexto = 32000

// maxLimite is the largest value of a DECIMAL(14,2) column.
var maxLimite = decimal.RequireFromString("999999999999.99")

var emailValidator = validator.New()

// normalize trims the text fields and turns blank optional ones into null, so that an empty
// codigo_cliente never collides in the unique index and an empty e-mail is "no e-mail".
func (f *Fields) normalize() {
	for _, t := range textFields {
		in := t.in(f)
		if !in.Set || in.Null || in.Invalid {
			continue
		}
		in.Value = strings.TrimSpace(in.Value)
		if in.Value == "" && !t.required {
			in.Null = true
		}
	}
}

// Validate checks every field and returns a *ValidationError listing every problem, or nil.
// With forCreate the required fields must be present; otherwise (partial update) only the fields
// sent are checked. Validate trims text fields in place.
func (f *Fields) Validate(forCreate bool) error {
	f.normalize()
	var p validation.Problems
	for _, t := range textFields {
		in := t.in(f)
		switch {
		case in.Invalid:
			p.Add(t.name, "must be a string")
		case !in.Set && t.required && forCreate:
			p.Add(t.name, "is required")
		case !in.Set:
		case t.required && (in.Null || in.Value == ""):
			p.Add(t.name, "is required")
		case in.Null:
		case t.max > 0 && utf8.RuneCountInString(in.Value) > t.max:
			p.Add(t.name, fmt.Sprintf("must be at most %d characters long", t.max))
		case t.name == "email" && emailValidator.Var(in.Value, "email") != nil:
			p.Add(t.name, "must be a valid e-mail address")
		}
	}
	for _, l := range []struct {
		name  string
		field Field[decimal.Decimal]
	}{{NameLimiteCredito1, f.LimiteCredito1}, {NameLimiteCredito2, f.LimiteCredito2}} {
		switch {
		case l.field.Invalid:
			p.Add(l.name, "must be a numeric string")
		case !l.field.Set || l.field.Null:
		case l.field.Value.IsNegative():
			p.Add(l.name, "must not be negative")
		case decimalPlaces(l.field.Value) > 2:
			p.Add(l.name, "must have at most 2 decimal places")
		case l.field.Value.GreaterThan(maxLimite):
			p.Add(l.name, "must be at most "+maxLimite.String())
		}
	}
	switch {
	case f.ExtraFields.Invalid:
		p.Add(NameExtraFields, "must be an object")
	case f.ExtraFields.Set && !f.ExtraFields.Null:
		p = append(p, ValidateExtraFields(f.ExtraFields.Value)...)
	}
	return p.Err()
}

// decimalPlaces counts the significant digits after the point (trailing zeros do not count).
func decimalPlaces(d decimal.Decimal) int {
	if d.Exponent() >= 0 {
		return 0
	}
	_, frac, _ := strings.Cut(d.String(), ".")
	return len(strings.TrimRight(frac, "0"))
}

// extraFamily is one extra_fields family: a name prefix (numbered 1..10) and the rule its values
// follow (null is always accepted: the ERP payload carries it as null).
type extraFamily struct {
	prefix string
	check  func(raw json.RawMessage) string // "" when valid, else what the value must be
}

var extraFamilies = []extraFamily{
	{"lista_datos_", checkExtraLista},
	{"alfanumerico_", checkExtraString(0, "a string")},
	{"valor_", checkExtraNumber},
	{"fecha_", checkExtraDate},
	{"booleano_", checkExtraBool},
	{"texto_", checkExtraString(MaxExtraTexto, fmt.Sprintf("a string at most %d characters long", MaxExtraTexto))},
}

var extraFieldName = regexp.MustCompile(`^([a-z_]+_)([1-9]|10)$`)

// ValidateExtraFields checks extra_fields by family (specification "extra_fields families") and
// returns one problem per bad key, keys in sorted order.
func ValidateExtraFields(extra ExtraFields) []Problem {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var problems []Problem
	for _, k := range keys {
		field := NameExtraFields + "." + k
		fam := extraFamilyOf(k)
		if fam == nil {
			problems = append(problems, Problem{Field: field, Message: "is not a known extra field"})
			continue
		}
		raw := extra[k]
		if isJSONNull(raw) {
			continue
		}
		if want := fam.check(raw); want != "" {
			problems = append(problems, Problem{Field: field, Message: "must be " + want})
		}
	}
	return problems
}

func extraFamilyOf(key string) *extraFamily {
	m := extraFieldName.FindStringSubmatch(key)
	if m == nil {
		return nil
	}
	for i := range extraFamilies {
		if extraFamilies[i].prefix == m[1] {
			return &extraFamilies[i]
		}
	}
	return nil
}

func isJSONNull(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

func checkExtraString(maxChars int, want string) func(json.RawMessage) string {
	return func(raw json.RawMessage) string {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return want
		}
		if maxChars > 0 && utf8.RuneCountInString(s) > maxChars {
			return want
		}
		return ""
	}
}

// maxExtraValorDigits bounds the digits of a valor_n value: 38 is the largest precision of the
// usual SQL decimal types, so the ERP can hold any value accepted here.
const maxExtraValorDigits = 38

// checkExtraNumber accepts a JSON number or numeric text ("7.25") written in plain decimal
// notation with at most maxExtraValorDigits digits. An exponent is refused: "1e999999999" is 11
// bytes on the wire but a billion digits once expanded for the ERP (and out of PostgreSQL's
// numeric range in jsonb).
func checkExtraNumber(raw json.RawMessage) string {
	text := string(bytes.TrimSpace(raw))
	var s string
	if json.Unmarshal(raw, &s) == nil {
		text = s
	} else if json.Unmarshal(raw, new(json.Number)) != nil {
		return "numeric"
	}
	if !validation.PlainDecimal(text) {
		var n json.Number
		if json.Unmarshal([]byte(strconv.Quote(text)), &n) == nil {
			return extraValorShape
		}
		return "numeric"
	}
	if digits := len(text) - strings.Count(text, "-") - strings.Count(text, "."); digits > maxExtraValorDigits {
		return extraValorShape
	}
	return ""
}

var extraValorShape = fmt.Sprintf("a number in plain decimal notation (no exponent) of at most %d digits", maxExtraValorDigits)

func checkExtraDate(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil && len(s) == len(time.DateOnly) {
		if _, err := time.Parse(time.DateOnly, s); err == nil {
			return ""
		}
	}
	return "a date in yyyy-mm-dd format"
}

// checkExtraLista accepts a list value: one string (the value chosen from the list) or an array
// of strings (several values chosen). The specification says only "list values".
func checkExtraLista(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return ""
	}
	var list []*string
	if json.Unmarshal(raw, &list) == nil && !slices.Contains(list, nil) {
		return ""
	}
	return "a string or an array of strings"
}

// extraBool is the value of a booleano_n field (1 = true, 0 = false): 0 or 1 as a number or a
// string, or a JSON boolean. ok is false for anything else.
func extraBool(raw json.RawMessage) (v int, ok bool) {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		if b {
			return 1, true
		}
		return 0, true
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, false
		}
		n = json.Number(s)
	}
	switch n {
	case "0":
		return 0, true
	case "1":
		return 1, true
	}
	return 0, false
}

// checkExtraBool accepts what extraBool accepts.
func checkExtraBool(raw json.RawMessage) string {
	if _, ok := extraBool(raw); ok {
		return ""
	}
	return "0, 1, true or false"
}

// Apply copies the fields sent onto c. Call it once Validate passed.
func (f *Fields) Apply(c *Client) {
	for _, t := range textFields {
		in := t.in(f)
		switch {
		case !in.Set:
		case t.outReq != nil:
			if !in.Null {
				*t.outReq(c) = in.Value
			}
		case in.Null:
			*t.out(c) = nil
		default:
			v := in.Value
			*t.out(c) = &v
		}
	}
	setLimit := func(dst *decimal.NullDecimal, src Field[decimal.Decimal]) {
		switch {
		case !src.Set:
		case src.Null:
			*dst = decimal.NullDecimal{}
		default:
			*dst = decimal.NewNullDecimal(src.Value)
		}
	}
	setLimit(&c.LimiteCredito1, f.LimiteCredito1)
	setLimit(&c.LimiteCredito2, f.LimiteCredito2)
	switch {
	case !f.ExtraFields.Set:
	case f.ExtraFields.Null:
		c.ExtraFields = nil
	default:
		c.ExtraFields = mergeExtraFields(c.ExtraFields, f.ExtraFields.Value)
	}
}

// mergeExtraFields updates extra field by extra field: a key sent replaces the stored value, a
// key sent as null removes it, keys not sent stay. Each key is an ERP field of its own, so this is
// what "only the fields sent change" means for them.
func mergeExtraFields(stored, sent ExtraFields) ExtraFields {
	out := ExtraFields{}
	for k, v := range stored {
		out[k] = v
	}
	for k, v := range sent {
		if isJSONNull(v) {
			delete(out, k)
			continue
		}
		out[k] = normalizeExtraValue(k, v)
	}
	return out
}

// normalizeExtraValue stores valor_n as a JSON number even when it was sent as a string
// ("7.25"), and booleano_n as the number 1 or 0 whether it was sent as a number, a string ("1")
// or a JSON boolean (true), so the ERP always receives numbers for them. Other strings, and the
// strings of a lista_datos_n array, are written again from their decoded text: a lone surrogate
// escape ("\ud800") or invalid UTF-8 becomes U+FFFD, as in every other string field, instead of
// reaching the database as sent (PostgreSQL's jsonb refuses a lone surrogate). Numbers are kept
// as sent (compacted).
func normalizeExtraValue(key string, raw json.RawMessage) json.RawMessage {
	if fam := extraFamilyOf(key); fam != nil && fam.prefix == "booleano_" {
		if v, ok := extraBool(raw); ok {
			return json.RawMessage(strconv.Itoa(v))
		}
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		out := make([][]byte, len(list))
		for i, s := range list {
			out[i] = jsonString(s)
		}
		return json.RawMessage("[" + string(bytes.Join(out, []byte(","))) + "]")
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return compactJSON(raw)
	}
	if fam := extraFamilyOf(key); fam != nil && fam.prefix == "valor_" {
		if d, err := decimal.NewFromString(s); err == nil {
			return json.RawMessage(d.String())
		}
	}
	return jsonString(s)
}

// jsonString encodes s without HTML escaping; invalid UTF-8 becomes U+FFFD.
func jsonString(s string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// extraFieldNames lists every accepted extra_fields key.
func extraFieldNames() []string {
	var names []string
	for _, fam := range extraFamilies {
		for i := 1; i <= 10; i++ {
			names = append(names, fam.prefix+strconv.Itoa(i))
		}
	}
	return names
}
