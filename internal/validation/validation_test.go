package validation_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/internal/validation"
)

func TestAmount(t *testing.T) {
	cases := []struct {
		name string
		in   string
		sign validation.Sign
		want string // "" when accepted
	}{
		{"positive", "10.25", validation.Positive, ""},
		{"zero is not positive", "0.00", validation.Positive, "monto must be greater than zero"},
		{"negative is not positive", "-1", validation.Positive, "monto must be greater than zero"},
		{"positive with three decimals", "1.005", validation.Positive, "monto must have at most 2 decimal places"},
		{"zero", "0", validation.NonNegative, ""},
		{"zero with decimals", "0.00", validation.NonNegative, ""},
		{"minus zero", "-0", validation.NonNegative, ""},
		{"two decimals", "12.34", validation.NonNegative, ""},
		{"sixteen integer digits", "9999999999999999.99", validation.NonNegative, ""},
		{"leading zeros do not count", "00009999999999999999", validation.NonNegative, ""},
		{"negative", "-0.01", validation.NonNegative, "monto must not be negative"},
		{"three decimals", "1.001", validation.NonNegative, "monto must have at most 2 decimal places"},
		{"trailing zeros as written count", "10.100", validation.NonNegative, "monto must have at most 2 decimal places"},
		{"seventeen integer digits", "10000000000000000", validation.NonNegative, "monto must have at most 16 digits before the decimal point"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p validation.Problems
			ok := p.Amount("monto", decimal.RequireFromString(tc.in), tc.sign, 2, 16)
			got := ""
			if err := p.Err(); err != nil {
				got = strings.Join(err.(*validation.Error).Strings(), "|")
			}
			if got != tc.want || ok != (tc.want == "") {
				t.Fatalf("Amount(%s) = %v, problems %q; want %q", tc.in, ok, got, tc.want)
			}
		})
	}
}

func TestTextAndBetween(t *testing.T) {
	var p validation.Problems
	p.Text("codigo_empresa", "  ", true, 20)
	p.Text("nombre", "ñandú y más", false, 5)
	p.Text("optional", "", false, 5)
	p.Text("exact", "ñandú", true, 5)
	p.Between("plazo", 0, 1, 10)
	p.Between("cantidad", 11, 1, 10)
	p.Between("ok", 5, 1, 10)
	want := []string{"codigo_empresa is required", "nombre must be at most 5 characters long", "plazo must be at least 1", "cantidad must be at most 10"}
	var ve *validation.Error
	if !errors.As(p.Err(), &ve) || strings.Join(ve.Strings(), "|") != strings.Join(want, "|") {
		t.Fatalf("problems %v, want %q", p, want)
	}
	if !strings.Contains(ve.Error(), "invalid input: codigo_empresa is required; nombre") {
		t.Fatalf("Error() = %q", ve.Error())
	}
	if (validation.Problems{}).Err() != nil {
		t.Fatal("no problems must be a nil error")
	}
}

func TestPlainDecimal(t *testing.T) {
	for in, want := range map[string]bool{
		"1": true, "-1.50": true, "0.00": true, "000123": true,
		"": false, "-": false, "1.": false, ".5": false, "+1": false, "1e3": false, " 1": false, "1,000": false, "1.2.3": false,
	} {
		if got := validation.PlainDecimal(in); got != want {
			t.Errorf("PlainDecimal(%q) = %v, want %v", in, got, want)
		}
	}
}
