package creditsystem_test

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
)

// TestAnswerMoneyKeepsItsScale pins what the package doc ("Money and dates") tells callers: an
// answer amount holds the value and the scale the creditsystem wrote (5000.00, Exponent -2),
// StringFixed(2) prints it with its cents, and String drops the trailing zeros. A change of
// the decoder or of the decimal library that broke either shows here first.
func TestAnswerMoneyKeepsItsScale(t *testing.T) {
	srv := creditsystemtest.NewServer()
	defer srv.Close()
	client, err := creditsystem.New(srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.ConsultarTarjeta(t.Context(), creditsystem.ConsultarTarjetaRequest{Identificacion: "0912345678"})
	if err != nil || len(res.Cupos) == 0 || len(res.Cupos[0].Operaciones) == 0 {
		t.Fatalf("ConsultarTarjeta: %+v, %v", res, err)
	}
	c := res.Cupos[0]
	tests := []struct {
		name          string
		amount        *decimal.Decimal
		fixed, string string
	}{
		{"nCupoAsignado", c.CupoAsignado, "5000.00", "5000"},
		{"nCupoDisponible", c.CupoDisponible, "5000.00", "5000"},
		{"nCupoUtilizado", c.CupoUtilizado, "0.00", "0"},
		{"nCupoDisponibleOpe", c.Operaciones[0].CupoDisponibleOpe, "5000.00", "5000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.amount == nil {
				t.Fatal("nil amount")
			}
			if got := tt.amount.StringFixed(2); got != tt.fixed {
				t.Errorf("StringFixed(2) = %s, want %s", got, tt.fixed)
			}
			if got := tt.amount.String(); got != tt.string {
				t.Errorf("String() = %s, want %s (the doc says String drops trailing zeros)", got, tt.string)
			}
			if tt.amount.Exponent() != -2 {
				t.Errorf("Exponent() = %d, want -2: the scale on the wire was lost", tt.amount.Exponent())
			}
		})
	}
}
