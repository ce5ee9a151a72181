package credit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"
	"github.com/shopspring/decimal"
)

// ClientField is one optional input field: whether the caller sent it, whether it was JSON null,
// and its value. Decoding never fails on a wrong JSON type; the problem is kept and reported by
// validation together with every other problem of the request.
type ClientField[T any] struct {
	Set   bool
	Null  bool
	Value T
	bad   bool
}

// FieldValue returns a field holding v, for callers building ClientFields in Go.
func FieldValue[T any](v T) ClientField[T] { return ClientField[T]{Set: true, Value: v} }

// FieldNull returns a field sent as null (clears a nullable field on update).
func FieldNull[T any]() ClientField[T] { return ClientField[T]{Set: true, Null: true} }

// UnmarshalJSON records that the key was present; encoding/json calls it for null too.
func (f *ClientField[T]) UnmarshalJSON(b []byte) error {
	*f = ClientField[T]{Set: true}
	if bytes.Equal(b, []byte("null")) {
		f.Null = true
		return nil
	}
	if _, isDecimal := any(&f.Value).(*decimal.Decimal); isDecimal && bytes.Equal(b, []byte(`""`)) {
		// An empty limit in a form means "no limit", not a malformed number.
		f.Null = true
		return nil
	}
	if _, isDecimal := any(&f.Value).(*decimal.Decimal); isDecimal {
		// A limit must be plain decimal text, quoted or not: no exponent (1e-999999999 would
		// make rounding allocate without bound), no sign other than minus, no spaces.
		text := string(b)
		if len(b) > 0 && b[0] == '"' {
			if json.Unmarshal(b, &text) != nil {
				text = ""
			}
		}
		if !plainDecimal.MatchString(text) {
			f.bad = true
			return nil
		}
	}
	if err := json.Unmarshal(b, &f.Value); err != nil {
		var zero T
		f.Value, f.bad = zero, true
	}
	return nil
}

var plainDecimal = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// MarshalJSON writes the value, or null.
func (f ClientField[T]) MarshalJSON() ([]byte, error) {
	if !f.Set || f.Null {
		return []byte("null"), nil
	}
	return json.Marshal(f.Value)
}

// ClientFields is the input of create and update: every field of the client record a caller may
// send. On update only the fields with Set change; Null clears a nullable field.
type ClientFields struct {
	CodigoCliente  ClientField[string]          `json:"codigo_cliente"`
	CodigoEmpresa  ClientField[string]          `json:"codigo_empresa"`
	NombreCliente  ClientField[string]          `json:"nombre_cliente"`
	Identificacion ClientField[string]          `json:"identificacion"`
	Email          ClientField[string]          `json:"email"`
	Telefono1      ClientField[string]          `json:"telefono_1"`
	Telefono2      ClientField[string]          `json:"telefono_2"`
	Direccion1     ClientField[string]          `json:"direccion_1"`
	CodigoVendedor ClientField[string]          `json:"codigo_vendedor"`
	TerminoPagos   ClientField[string]          `json:"termino_pagos"`
	LimiteCredito1 ClientField[decimal.Decimal] `json:"limite_credito_1"`
	LimiteCredito2 ClientField[decimal.Decimal] `json:"limite_credito_2"`
	CodigoSucursal ClientField[string]          `json:"codigo_sucursal"`
	Localizacion   ClientField[string]          `json:"localizacion"`
	ListaPrecios   ClientField[string]          `json:"lista_precios"`
	NivelRiesgo    ClientField[string]          `json:"nivel_riesgo"`
	ExtraFields    ClientField[ExtraFields]     `json:"extra_fields"`
}

// CreditSystemFields keeps only the fields POST /clients/from-creditsystem accepts
// (codigo_empresa, nombre_cliente, identificacion, email, telefono_1, telefono_2, direccion_1,
// extra_fields); anything else the caller sent is ignored, codigo_cliente included, since it stays
// null until the manual ERP sync.
func (f ClientFields) CreditSystemFields() ClientFields {
	return ClientFields{
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

// Limits of the client record (specification "Client record"). A limit of 0 means unlimited
// length (text columns).
const (
	maxCodigoCliente  = 80
	maxCodigoEmpresa  = 20
	maxNombreCliente  = 255
	maxIdentificacion = 50
	maxEmail          = 255
	maxTelefono       = 50
	maxCodigoVendedor = 100
	maxTerminoPagos   = 100
	maxShortCode      = 50
	// MaxExtraTexto is the longest texto_n value, in characters.
	MaxExtraTexto = 32000
)

// maxLimite is the largest value of a DECIMAL(14,2) column.
var maxLimite = decimal.RequireFromString("999999999999.99")

type stringRule struct {
	name     string
	field    *ClientField[string]
	required bool // required on create, never null or blank on update
	max      int
}

func (f *ClientFields) stringRules() []stringRule {
	return []stringRule{
		{"codigo_cliente", &f.CodigoCliente, false, maxCodigoCliente},
		{"codigo_empresa", &f.CodigoEmpresa, true, maxCodigoEmpresa},
		{"nombre_cliente", &f.NombreCliente, true, maxNombreCliente},
		{"identificacion", &f.Identificacion, true, maxIdentificacion},
		{"email", &f.Email, false, maxEmail},
		{"telefono_1", &f.Telefono1, false, maxTelefono},
		{"telefono_2", &f.Telefono2, false, maxTelefono},
		{"direccion_1", &f.Direccion1, false, 0},
		{"codigo_vendedor", &f.CodigoVendedor, false, maxCodigoVendedor},
		{"termino_pagos", &f.TerminoPagos, false, maxTerminoPagos},
		{"codigo_sucursal", &f.CodigoSucursal, false, maxShortCode},
		{"localizacion", &f.Localizacion, false, maxShortCode},
		{"lista_precios", &f.ListaPrecios, false, maxShortCode},
		{"nivel_riesgo", &f.NivelRiesgo, false, maxShortCode},
	}
}

var emailValidator = validator.New()

// normalize trims the string fields and turns blank optional strings into null, so that an empty
// codigo_cliente never collides in the unique index and an empty e-mail is "no e-mail".
func (f *ClientFields) normalize() {
	for _, r := range f.stringRules() {
		if !r.field.Set || r.field.Null || r.field.bad {
			continue
		}
		r.field.Value = strings.TrimSpace(r.field.Value)
		if r.field.Value == "" && !r.required {
			r.field.Null = true
		}
	}
}

// Validate checks every field and returns a *ClientValidationError listing every problem, or nil.
// With forCreate the required fields must be present; otherwise (partial update) only the fields
// sent are checked. Validate trims string fields in place.
func (f *ClientFields) Validate(forCreate bool) error {
	f.normalize()
	var problems []string
	for _, r := range f.stringRules() {
		switch {
		case r.field.bad:
			problems = append(problems, r.name+" must be a string")
		case !r.field.Set && r.required && forCreate:
			problems = append(problems, r.name+" is required")
		case !r.field.Set:
		case r.required && (r.field.Null || r.field.Value == ""):
			problems = append(problems, r.name+" is required")
		case r.field.Null:
		case r.max > 0 && utf8.RuneCountInString(r.field.Value) > r.max:
			problems = append(problems, fmt.Sprintf("%s must be at most %d characters long", r.name, r.max))
		case r.name == "email" && emailValidator.Var(r.field.Value, "email") != nil:
			problems = append(problems, "email must be a valid e-mail address")
		}
	}
	for _, l := range []struct {
		name  string
		field ClientField[decimal.Decimal]
	}{{"limite_credito_1", f.LimiteCredito1}, {"limite_credito_2", f.LimiteCredito2}} {
		switch {
		case l.field.bad:
			problems = append(problems, l.name+" must be a numeric string")
		case !l.field.Set || l.field.Null:
		case l.field.Value.IsNegative():
			problems = append(problems, l.name+" must not be negative")
		case decimalPlaces(l.field.Value) > 2:
			problems = append(problems, l.name+" must have at most 2 decimal places")
		case l.field.Value.GreaterThan(maxLimite):
			problems = append(problems, l.name+" must be at most "+maxLimite.String())
		}
	}
	switch {
	case f.ExtraFields.bad:
		problems = append(problems, "extra_fields must be an object")
	case f.ExtraFields.Set && !f.ExtraFields.Null:
		problems = append(problems, ValidateExtraFields(f.ExtraFields.Value)...)
	}
	if len(problems) > 0 {
		return &ClientValidationError{Problems: problems}
	}
	return nil
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
func ValidateExtraFields(extra ExtraFields) []string {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var problems []string
	for _, k := range keys {
		fam := extraFamilyOf(k)
		if fam == nil {
			problems = append(problems, fmt.Sprintf("extra_fields.%s is not a known extra field", k))
			continue
		}
		raw := extra[k]
		if isJSONNull(raw) {
			continue
		}
		if want := fam.check(raw); want != "" {
			problems = append(problems, fmt.Sprintf("extra_fields.%s must be %s", k, want))
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

// MaxExtraValorDigits bounds the digits of a valor_n value: 38 is the largest precision of the
// usual SQL decimal types, so the ERP can hold any value accepted here.
const MaxExtraValorDigits = 38

// checkExtraNumber accepts a JSON number or numeric text ("7.25") written in plain decimal
// notation with at most MaxExtraValorDigits digits. An exponent is refused: "1e999999999" is 11
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
	if !plainDecimal.MatchString(text) {
		var n json.Number
		if json.Unmarshal([]byte(strconv.Quote(text)), &n) == nil {
			return extraValorShape
		}
		return "numeric"
	}
	if digits := len(text) - strings.Count(text, "-") - strings.Count(text, "."); digits > MaxExtraValorDigits {
		return extraValorShape
	}
	return ""
}

var extraValorShape = fmt.Sprintf("a number in plain decimal notation (no exponent) of at most %d digits", MaxExtraValorDigits)

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

// apply copies the fields sent onto c. It assumes Validate passed.
func (f *ClientFields) apply(c *Client) {
	setString := func(dst *string, src ClientField[string]) {
		if src.Set && !src.Null {
			*dst = src.Value
		}
	}
	setNullable := func(dst **string, src ClientField[string]) {
		switch {
		case !src.Set:
		case src.Null:
			*dst = nil
		default:
			v := src.Value
			*dst = &v
		}
	}
	setLimit := func(dst *decimal.NullDecimal, src ClientField[decimal.Decimal]) {
		switch {
		case !src.Set:
		case src.Null:
			*dst = decimal.NullDecimal{}
		default:
			*dst = decimal.NewNullDecimal(src.Value)
		}
	}
	setNullable(&c.CodigoCliente, f.CodigoCliente)
	setString(&c.CodigoEmpresa, f.CodigoEmpresa)
	setString(&c.NombreCliente, f.NombreCliente)
	setString(&c.Identificacion, f.Identificacion)
	setNullable(&c.Email, f.Email)
	setNullable(&c.Telefono1, f.Telefono1)
	setNullable(&c.Telefono2, f.Telefono2)
	setNullable(&c.Direccion1, f.Direccion1)
	setNullable(&c.CodigoVendedor, f.CodigoVendedor)
	setNullable(&c.TerminoPagos, f.TerminoPagos)
	setLimit(&c.LimiteCredito1, f.LimiteCredito1)
	setLimit(&c.LimiteCredito2, f.LimiteCredito2)
	setNullable(&c.CodigoSucursal, f.CodigoSucursal)
	setNullable(&c.Localizacion, f.Localizacion)
	setNullable(&c.ListaPrecios, f.ListaPrecios)
	setNullable(&c.NivelRiesgo, f.NivelRiesgo)
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
