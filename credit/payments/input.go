package payments

import (
	"fmt"
	"iter"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/internal/validation"
)

// Money rules: at most two decimals and 16 digits before the point (numeric 18,2 upstream).
const (
	moneyDecimals  = 2
	moneyIntDigits = 16
)

// MaxNumeroOperacion is the largest operation number (numeric 9 upstream).
const MaxNumeroOperacion = 999_999_999

// DeudaInput asks for a card's debt: NumeroTarjeta, or NumeroIdentificacion in its place.
type DeudaInput struct {
	NumeroTarjeta        string
	NumeroIdentificacion string
	RequestID            string
}

// Validate checks that one identifier is given (text 20 each).
func (in DeudaInput) Validate() error {
	var p validation.Problems
	if strings.TrimSpace(in.NumeroTarjeta) == "" && strings.TrimSpace(in.NumeroIdentificacion) == "" {
		p.Add("numeroTarjeta", "or numeroIdentificacion is required")
	}
	p.Text("numeroTarjeta", in.NumeroTarjeta, false, 20)
	p.Text("numeroIdentificacion", in.NumeroIdentificacion, false, 20)
	return p.Err()
}

// PagoInput applies a payment. SolicitadoPor (the caller) and RequestID go to the ledger.
type PagoInput struct {
	NumeroTarjeta string
	ValorPago     decimal.Decimal
	FechaPago     creditsystem.Date
	FormasPago    []FormaPago
	SolicitadoPor string
	RequestID     string
}

// Validate checks the shape of the request (400): numeroTarjeta (text 20), valorPago (greater
// than zero, two decimals), fechaPago, at least one formasPago item with a known codigo, a valor
// greater than zero and bank fields of at most 100 characters.
func (in PagoInput) Validate() error {
	var p validation.Problems
	p.Text("numeroTarjeta", in.NumeroTarjeta, true, 20)
	p.Amount("valorPago", in.ValorPago, validation.Positive, moneyDecimals, moneyIntDigits)
	if in.FechaPago.IsZero() {
		p.Add("fechaPago", "is required")
	}
	if len(in.FormasPago) == 0 {
		p.Add("formasPago", "must list at least one payment method")
	}
	for i, f := range in.FormasPago {
		field := func(name string) string { return fmt.Sprintf("formasPago[%d].%s", i, name) }
		if p.Text(field("codigo"), f.Codigo, true, 3) && f.Codigo != FormaEfectivo && f.Codigo != FormaCheque {
			p.Add(field("codigo"), "must be 001 (cash) or 002 (cheque)")
		}
		p.Amount(field("valor"), f.Valor, validation.Positive, moneyDecimals, moneyIntDigits)
		for name, v := range f.bankFields() {
			p.Text(field(name), v, false, 100)
		}
	}
	return p.Err()
}

// Rules checks the payment rules that need no upstream answer (422): the formasPago add up to
// valorPago exactly (rule 2), cash carries no bank data and a cheque all of it (rule 3). Rule 1
// (not above pagoContado) is checked by Aplicar against the debt it reads.
func (in PagoInput) Rules() error {
	var rules []string
	suma := decimal.Zero
	for i, f := range in.FormasPago {
		suma = suma.Add(f.Valor)
		var filled, missing []string
		for name, v := range f.bankFields() {
			if strings.TrimSpace(v) == "" {
				missing = append(missing, name)
			} else {
				filled = append(filled, name)
			}
		}
		switch {
		case f.Codigo == FormaEfectivo && len(filled) > 0:
			rules = append(rules, fmt.Sprintf("formasPago[%d] is cash (001) and must not carry bank data (%s)", i, strings.Join(filled, ", ")))
		case f.Codigo == FormaCheque && len(missing) > 0:
			rules = append(rules, fmt.Sprintf("formasPago[%d] is a cheque (002) and needs all its bank data (missing %s)", i, strings.Join(missing, ", ")))
		}
	}
	if !suma.Equal(in.ValorPago) {
		rules = append(rules, fmt.Sprintf("the formasPago add up to %s, not to valorPago %s", suma.StringFixed(2), in.ValorPago.StringFixed(2)))
	}
	if len(rules) > 0 {
		return &RuleError{Rules: rules}
	}
	return nil
}

// bankFields are a method's bank fields by JSON name, in the specification's order.
func (f FormaPago) bankFields() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for _, kv := range [][2]string{
			{"institucionFinanciera", f.InstitucionFinanciera}, {"numeroDocumento", f.NumeroDocumento},
			{"numeroCuenta", f.NumeroCuenta}, {"identCuentaCorrentista", f.IdentCuentaCorrentista},
			{"nombreCuentaCorrentista", f.NombreCuentaCorrentista},
		} {
			if !yield(kv[0], kv[1]) {
				return
			}
		}
	}
}

// ReversoInput reverses an applied payment.
type ReversoInput struct {
	NumeroOperacion int64
	Motivo          string // optional, text 250
	SolicitadoPor   string
	RequestID       string
}

// Validate checks numeroOperacion (1..MaxNumeroOperacion) and motivo (text 250).
func (in ReversoInput) Validate() error {
	var p validation.Problems
	p.Between("numeroOperacion", in.NumeroOperacion, 1, MaxNumeroOperacion)
	p.Text("motivo", in.Motivo, false, 250)
	return p.Err()
}

// ListQuery selects a page of the ledger, newest first.
type ListQuery struct {
	NumeroTarjeta string // optional filter
	Page, PerPage int
}

// Paging of the ledger list, like the client list.
const (
	DefaultPerPage = 20
	MaxPerPage     = 100
)
