package payments

import (
	"errors"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/internal/validation"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func cashOf(v string) FormaPago { return FormaPago{Codigo: FormaEfectivo, Valor: dec(v)} }

func chequeOf(v string) FormaPago {
	return FormaPago{Codigo: FormaCheque, Valor: dec(v), InstitucionFinanciera: "BANCO", NumeroDocumento: "1",
		NumeroCuenta: "2", IdentCuentaCorrentista: "0912345678", NombreCuentaCorrentista: "MARIA"}
}

func pagoInput(valor string, formas ...FormaPago) PagoInput {
	return PagoInput{NumeroTarjeta: "4000123412341234", ValorPago: dec(valor), FechaPago: creditsystem.NewDate(2026, 1, 20), FormasPago: formas}
}

func TestPagoInputValidate(t *testing.T) {
	cases := []struct {
		name string
		in   PagoInput
		want []string // problems, as the service answers them
	}{
		{"valid", pagoInput("10.00", cashOf("10.00")), nil},
		{"nothing", PagoInput{}, []string{"numeroTarjeta is required", "valorPago must be greater than zero", "fechaPago is required", "formasPago must list at least one payment method"}},
		{"long card", func() PagoInput {
			p := pagoInput("1", cashOf("1"))
			p.NumeroTarjeta = strings.Repeat("4", 21)
			return p
		}(), []string{"numeroTarjeta must be at most 20 characters long"}},
		{"three decimals", pagoInput("1.005", cashOf("1.005")), []string{"valorPago must have at most 2 decimal places", "formasPago[0].valor must have at most 2 decimal places"}},
		{"negative method", pagoInput("1", cashOf("-1")), []string{"formasPago[0].valor must be greater than zero"}},
		{"unknown code", pagoInput("1", FormaPago{Codigo: "009", Valor: dec("1")}), []string{"formasPago[0].codigo must be 001 (cash) or 002 (cheque)"}},
		{"missing code", pagoInput("1", FormaPago{Valor: dec("1")}), []string{"formasPago[0].codigo is required"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.in.Validate()
			var ve *validation.Error
			if c.want == nil {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
				return
			}
			if !errors.As(err, &ve) || strings.Join(ve.Strings(), "|") != strings.Join(c.want, "|") {
				t.Fatalf("Validate = %v, want %q", err, c.want)
			}
		})
	}
}

func TestPagoInputRules(t *testing.T) {
	cashWithBank := cashOf("10.00")
	cashWithBank.NumeroCuenta = "123"
	chequeWithout := chequeOf("10.00")
	chequeWithout.NombreCuentaCorrentista, chequeWithout.NumeroDocumento = "", " "
	cases := []struct {
		name string
		in   PagoInput
		want string // the rule broken, "" for none
	}{
		{"exact in decimals", pagoInput("0.30", cashOf("0.10"), cashOf("0.20")), ""},
		{"cash and cheque", pagoInput("30.00", cashOf("10.00"), chequeOf("20.00")), ""},
		{"short by a cent", pagoInput("30.00", cashOf("10.00"), cashOf("19.99")), "the formasPago add up to 29.99, not to valorPago 30.00"},
		{"over", pagoInput("30.00", cashOf("30.01")), "the formasPago add up to 30.01, not to valorPago 30.00"},
		{"cash with bank data", pagoInput("10.00", cashWithBank), "formasPago[0] is cash (001) and must not carry bank data (numeroCuenta)"},
		{"cheque without bank data", pagoInput("10.00", chequeWithout), "formasPago[0] is a cheque (002) and needs all its bank data (missing numeroDocumento, nombreCuentaCorrentista)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.in.Rules()
			if c.want == "" {
				if err != nil {
					t.Fatalf("Rules = %v", err)
				}
				return
			}
			var re *RuleError
			if !errors.As(err, &re) || !errors.Is(err, ErrRule) || re.Error() != c.want {
				t.Fatalf("Rules = %v, want %q", err, c.want)
			}
		})
	}
}

func TestReversoInputValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		in   ReversoInput
		want string
	}{
		{"valid", ReversoInput{NumeroOperacion: 100001, Motivo: "cheque devuelto"}, ""},
		{"zero", ReversoInput{}, "numeroOperacion must be at least 1"},
		{"above numeric 9", ReversoInput{NumeroOperacion: 1_000_000_000}, "numeroOperacion must be at most 999999999"},
		{"long reason", ReversoInput{NumeroOperacion: 1, Motivo: strings.Repeat("x", 251)}, "motivo must be at most 250 characters long"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.in.Validate()
			var ve *validation.Error
			if c.want == "" && err != nil || c.want != "" && (!errors.As(err, &ve) || ve.Strings()[0] != c.want) {
				t.Fatalf("Validate = %v, want %q", err, c.want)
			}
		})
	}
}
