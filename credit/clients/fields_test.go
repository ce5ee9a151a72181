package clients

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/shopspring/decimal"
)

func TestEveryExtraFieldNameIsAccepted(t *testing.T) {
	names := extraFieldNames()
	if len(names) != 60 {
		t.Fatalf("%d extra field names, want 6 families x 10", len(names))
	}
	extra := ExtraFields{}
	for _, n := range names {
		extra[n] = json.RawMessage("null")
	}
	if p := ValidateExtraFields(extra); p != nil {
		t.Fatalf("problems %q for the specified names", p)
	}
}

// TestFieldsValidateFromGo: a Go caller gets the domain's problems, whatever decoded the input.
func TestFieldsValidateFromGo(t *testing.T) {
	valid := Fields{CodigoEmpresa: FieldValue("000598"), NombreCliente: FieldValue("Ana"), Identificacion: FieldValue("0102030405")}
	with := func(change func(*Fields)) Fields {
		f := valid
		change(&f)
		return f
	}
	cases := []struct {
		name      string
		in        Fields
		forCreate bool
		want      []string
	}{
		{"valid", valid, true, nil},
		{"negative limit", with(func(f *Fields) { f.LimiteCredito1 = FieldValue(decimal.RequireFromString("-0.01")) }), true,
			[]string{"limite_credito_1 must not be negative"}},
		{"limit with three decimals", with(func(f *Fields) { f.LimiteCredito2 = FieldValue(decimal.RequireFromString("10.125")) }), true,
			[]string{"limite_credito_2 must have at most 2 decimal places"}},
		{"limit a decoder could not read", with(func(f *Fields) { f.LimiteCredito1 = FieldInvalid[decimal.Decimal]() }), true,
			[]string{"limite_credito_1 must be a numeric string"}},
		{"missing required on create", Fields{Email: FieldValue("ana@example.com")}, true,
			[]string{"codigo_empresa is required", "nombre_cliente is required", "identificacion is required"}},
		{"required cleared on update", Fields{NombreCliente: FieldNull[string]()}, false, []string{"nombre_cliente is required"}},
		{"bad e-mail and unknown extra field", with(func(f *Fields) {
			f.Email = FieldValue("nope")
			f.ExtraFields = FieldValue(ExtraFields{"color": json.RawMessage(`"red"`)})
		}), true, []string{"email must be a valid e-mail address", "extra_fields.color is not a known extra field"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			if err := tc.in.Validate(tc.forCreate); err != nil {
				got = err.(*ValidationError).Strings()
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("problems\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
