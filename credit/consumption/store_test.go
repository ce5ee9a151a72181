package consumption

import (
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// migrated applies this package's migrations (credit.Migrations holds them too; importing it
// here would be a cycle).
func migrated(t *testing.T, tg storagetest.Target) *Store {
	t.Helper()
	if _, err := storage.Migrate(t.Context(), tg.DB, "credit_migrations", storage.NewMigrations(Migrations...)); err != nil {
		t.Fatal(err)
	}
	return NewStore(tg.DB)
}

// insertar stores c as a granted authorization, with its audited attempt.
func insertar(t *testing.T, s *Store, c *Consumo) {
	t.Helper()
	in := &Intento{Operacion: UpstreamGrabarAutorizacion, Solicitud: json.RawMessage(`{}`), Resultado: ResultadoPendiente, IniciadoAt: c.CreatedAt}
	if err := s.StartIntento(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	in.Resultado, in.TerminadoAt = ResultadoOK, c.CreatedAt
	if err := s.InsertAutorizado(t.Context(), c, in); err != nil {
		t.Fatal(err)
	}
}

// claimFor is the claim closure of op.
func claimFor(op Operacion, now time.Time) func(*Consumo) (*Intento, error) {
	return func(c *Consumo) (*Intento, error) {
		if err := c.IniciarOperacion(op, now); err != nil {
			return nil, err
		}
		return &Intento{Operacion: c.OperacionEnCurso, Solicitud: json.RawMessage(`{}`), Resultado: ResultadoPendiente, IniciadoAt: now}, nil
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
		s := migrated(t, tg)
		now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
		c := nuevoConsumo("A-1", now)
		insertar(t, s, c)
		if c.ID == 0 {
			t.Fatal("insert did not return the id")
		}
		claim, err := s.Claim(t.Context(), "A-1", claimFor(OpConfirmar, now))
		if err != nil {
			t.Fatalf("claim: %v", err)
		}
		fecha, _ := ParseFecha("2026-03-01")
		f := Factura{NumeroFactura: "001-001-000000123", MontoFacturado: decimal.RequireFromString("150.75"), FechaFactura: fecha}
		claim.Intento.Resultado, claim.Intento.TerminadoAt = ResultadoOK, now.Add(time.Second)
		if _, err := s.Settle(t.Context(), claim, func(c *Consumo) error {
			return c.Confirmar(f, "", json.RawMessage(`{"ok":true}`), now.Add(time.Second))
		}); err != nil {
			t.Fatalf("complete: %v", err)
		}
		got, err := s.ByAutorizacion(t.Context(), "A-1")
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
		if _, err := s.ByAutorizacion(t.Context(), "nope"); !isNotFound(err) {
			t.Fatalf("unknown id: %v", err)
		}
	})
}

func isNotFound(err error) bool { _, ok := err.(*AutorizacionNotFoundError); return ok }

func TestClaimHasExactlyOneWinner(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := migrated(t, tg)
		now := time.Now().UTC()
		insertar(t, s, nuevoConsumo("A-2", now))
		var winners atomic.Int32
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				op := OpConfirmar
				if i%2 == 1 {
					op = OpReverso
				}
				_, err := s.Claim(t.Context(), "A-2", claimFor(op, now))
				switch {
				case err == nil:
					winners.Add(1)
				case !errors.Is(err, ErrInFlight):
					t.Errorf("a losing claim: %v, want ErrInFlight", err)
				}
			}()
		}
		wg.Wait()
		if winners.Load() != 1 {
			t.Fatalf("%d claims won, want 1", winners.Load())
		}
	})
}

// Concurrent updates of one record are compare-and-set on its version: none is lost, each runs
// on the record as the previous one left it, and the settlement of a claim whose record moved
// meanwhile decides on the stored record.
func TestUpdatesAreCompareAndSet(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := migrated(t, tg)
		now := time.Now().UTC()
		insertar(t, s, nuevoConsumo("A-3", now))
		const writers = 4
		var wg sync.WaitGroup
		for range writers {
			wg.Go(func() {
				if _, err := s.Update(t.Context(), "A-3", func(c *Consumo) error { c.ImagenQR += "x"; return nil }); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		got, err := s.ByAutorizacion(t.Context(), "A-3")
		if err != nil || got.ImagenQR != "xxxx" || got.Version != writers {
			t.Fatalf("after %d concurrent updates: %q at version %d (%v), want xxxx at %d", writers, got.ImagenQR, got.Version, err, writers)
		}

		cl, err := s.Claim(t.Context(), "A-3", claimFor(OpConfirmar, now))
		if err != nil {
			t.Fatal(err)
		}
		// Another write between the claim and its settlement (here a note on the record).
		if _, err := s.Update(t.Context(), "A-3", func(c *Consumo) error { c.ImagenQR = "moved"; return nil }); err != nil {
			t.Fatal(err)
		}
		var seen []string
		cl.Intento.Resultado, cl.Intento.TerminadoAt = ResultadoOK, now
		out, err := s.Settle(t.Context(), cl, func(c *Consumo) error {
			seen = append(seen, c.ImagenQR)
			c.LiberarOperacion(now)
			return nil
		})
		got, _ = s.ByAutorizacion(t.Context(), "A-3")
		if err != nil || len(seen) != 2 || seen[1] != "moved" || got.ImagenQR != "moved" || got.OperacionEnCurso != "" || out.Version != got.Version {
			t.Fatalf("settle after a write: %v, fn saw %v, stored %q held by %q v%d (answer v%d)", err, seen, got.ImagenQR, got.OperacionEnCurso, got.Version, out.Version)
		}
	})
}

// TestMoneyKeepsEveryDigit: the largest amounts of DECIMAL(18,2) columns come back exactly on both
// engines (SQLite's NUMERIC kept 15 digits: 9999999999999999.99 read 10000000000000000).
func TestMoneyKeepsEveryDigit(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := migrated(t, tg)
		now := time.Now().UTC().Truncate(time.Microsecond)
		c := nuevoConsumo("A-BIG", now)
		c.Monto = decimal.RequireFromString("9999999999999999.99")
		c.MontoFacturado = decimal.NewNullDecimal(decimal.RequireFromString("1234567890123456.78"))
		insertar(t, s, c)
		got, err := s.ByAutorizacion(t.Context(), "A-BIG")
		if err != nil {
			t.Fatal(err)
		}
		if !got.Monto.Equal(c.Monto) || !got.MontoFacturado.Decimal.Equal(c.MontoFacturado.Decimal) {
			t.Fatalf("amounts read back %s and %s, want %s and %s", got.Monto, got.MontoFacturado.Decimal, c.Monto, c.MontoFacturado.Decimal)
		}
	})
}
