package credit

import (
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

func migrated(t *testing.T, tg storagetest.Target) {
	t.Helper()
	if _, err := storage.Migrate(t.Context(), tg.DB, MigrationsTable, Migrations); err != nil {
		t.Fatal(err)
	}
}

func nuevoConsumo(id string, now time.Time) *Consumo {
	return &Consumo{
		AutorizacionID: id, NumeroOperacion: "778899", Estado: EstadoAutorizado,
		CodigoEmpresa: "000598", Identificacion: "0912345678", NumeroTarjeta: "0912345678",
		CodigoProducto: "001", CodigoTipoCupo: "01", Monto: decimal.RequireFromString("150.75"), Plazo: 12,
		PuntoVenta: "PV-01", CreditsystemAuthResponse: json.RawMessage(`{"autorizacion":"` + id + `","cupo":null}`),
		SourceSystem: SourceSystemDefault, CreatedAt: now, UpdatedAt: now,
	}
}

func TestConsumoStoreRoundTrip(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		migrated(t, tg)
		now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
		c := nuevoConsumo("A-1", now)
		if err := insertConsumo(t.Context(), tg.DB, c); err != nil {
			t.Fatal(err)
		}
		if c.ID == 0 {
			t.Fatal("insert did not return the id")
		}
		if err := c.IniciarOperacion(OpConfirmar, now); err != nil {
			t.Fatal(err)
		}
		ok, err := guardar(t.Context(), tg.DB, c, EstadoAutorizado, "", columnasMarcador...)
		if err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		fecha, _ := ParseFecha("2026-03-01")
		f := Factura{NumeroFactura: "001-001-000000123", MontoFacturado: decimal.RequireFromString("150.75"), FechaFactura: fecha}
		if err := c.Confirmar(f, "", json.RawMessage(`{"ok":true}`), now.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		ok, err = guardar(t.Context(), tg.DB, c, EstadoAutorizado, UpstreamGrabarConsumo,
			append(columnasMarcador, "estado", "numero_factura", "monto_facturado", "fecha_factura", "numero_operacion", "creditsystem_consumo_response")...)
		if err != nil || !ok {
			t.Fatalf("complete: %v %v", ok, err)
		}
		got, err := consumoPorAutorizacion(t.Context(), tg.DB, "A-1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Estado != EstadoConsumido || got.OperacionEnCurso != "" || got.ResultadoDesconocido {
			t.Fatalf("state after completion: %+v", got)
		}
		if !got.Monto.Equal(decimal.RequireFromString("150.75")) || !got.MontoFacturado.Valid || !got.MontoFacturado.Decimal.Equal(decimal.RequireFromString("150.75")) {
			t.Fatalf("money: %s %v", got.Monto, got.MontoFacturado)
		}
		if got.FechaFactura.String() != "2026-03-01" || got.NumeroFactura != "001-001-000000123" {
			t.Fatalf("invoice: %q %q", got.FechaFactura, got.NumeroFactura)
		}
		if got.SourceSystem != "PLATFORM" || got.OTP != "" || !got.UpdatedAt.Equal(now.Add(time.Second)) || !got.CreatedAt.Equal(now) {
			t.Fatalf("fields: %+v", got)
		}
		var raw map[string]any
		if err := json.Unmarshal(got.CreditsystemAuthResponse, &raw); err != nil || raw["autorizacion"] != "A-1" {
			t.Fatalf("auth response %s: %v", got.CreditsystemAuthResponse, err)
		}
		if _, err := consumoPorAutorizacion(t.Context(), tg.DB, "nope"); !isNotFound(err) {
			t.Fatalf("unknown id: %v", err)
		}
	})
}

func isNotFound(err error) bool { _, ok := err.(*AutorizacionNotFoundError); return ok }

func TestClaimHasExactlyOneWinner(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		migrated(t, tg)
		now := time.Now().UTC()
		if err := insertConsumo(t.Context(), tg.DB, nuevoConsumo("A-2", now)); err != nil {
			t.Fatal(err)
		}
		var winners atomic.Int32
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := consumoPorAutorizacion(t.Context(), tg.DB, "A-2")
				if err != nil {
					t.Error(err)
					return
				}
				op := OpConfirmar
				if i%2 == 1 {
					op = OpReverso
				}
				if c.IniciarOperacion(op, now) != nil {
					return
				}
				ok, err := guardar(t.Context(), tg.DB, c, EstadoAutorizado, "", columnasMarcador...)
				if err != nil {
					t.Error(err)
				}
				if ok {
					winners.Add(1)
				}
			}()
		}
		wg.Wait()
		if winners.Load() != 1 {
			t.Fatalf("%d claims won, want 1", winners.Load())
		}
	})
}
