package payments

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

const card = "4000123412341234"

// clock is a settable clock for the service.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type env struct {
	svc   *Service
	store *Store
	cs    *creditsystemtest.Server
	erp   *erptest.Server
	cli   *creditsystem.Client
	clock *clock
}

// newEnv migrates the target and builds the service against both fakes; the card has a debt of
// 300.00 invoiced today.
func newEnv(t *testing.T, tg storagetest.Target, timeout time.Duration) *env {
	t.Helper()
	if _, err := storage.Migrate(t.Context(), tg.DB, "credit_migrations", storage.NewMigrations(Migrations...)); err != nil {
		t.Fatal(err)
	}
	if err := jobs.Migrate(t.Context(), tg.DB); err != nil {
		t.Fatal(err)
	}
	q, err := jobs.New(tg.DB, nil, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cs := creditsystemtest.NewServer()
	t.Cleanup(cs.Close)
	cfg := cs.Config()
	cfg.Timeout = timeout
	cli, err := creditsystem.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	erpSrv := erptest.NewServer()
	t.Cleanup(erpSrv.Close)
	erpCli, err := erp.New(erpSrv.Config(2 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{now: time.Now()}
	store := NewStore(tg.DB, q)
	svc, err := NewService(store, cli, WithClock(c.Now), WithCallTimeout(timeout), WithERP(erpCli))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{svc: svc, store: store, cs: cs, erp: erpSrv, cli: cli, clock: c}
	a, err := cli.GrabarAutorizacion(t.Context(), creditsystem.GrabarAutorizacionRequest{
		Identificacion: "0912345678", NumeroTarjeta: card, CodigoProducto: "001", Plazo: 3, Monto: dec("300.00"), PuntoVenta: "PV-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.GrabarConsumo(t.Context(), creditsystem.GrabarConsumoRequest{NumeroAutorizacion: *a.NumeroAutorizacion,
		NumeroTarjeta: card, Identificacion: "0912345678", NumeroFactura: "F-1", MontoFacturado: dec("300.00"), Monto: dec("300.00"),
		Plazo: 3, FechaFactura: creditsystem.DateOf(time.Now())}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) pagar(t *testing.T, valor string) *Pago {
	t.Helper()
	p, err := e.svc.Aplicar(t.Context(), pagoInput(valor, cashOf(valor)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A process that died during GrabarPagoTarjeta left the payment PENDIENTE with the reading it
// was to be judged against: it holds the card, reads as unknown once past the call timeout, and
// a later debt query settles it (here: not applied) and frees the card.
func TestDeadProcessPaymentSettledByADebtQuery(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, time.Second)
		now := e.clock.Now()
		dead := &Pago{NumeroTarjeta: card, Estado: EstadoPendiente, ValorPago: dec("100.00"), FechaPago: "2026-01-20",
			FormasPago: []FormaPago{cashOf("100.00")}, PagoContadoAntes: decimal.NewNullDecimal(dec("300.00")), CreatedAt: now, UpdatedAt: now}
		if err := e.store.Open(t.Context(), dead, e.svc.staleBefore()); err != nil {
			t.Fatal(err)
		}
		_, err := e.svc.Aplicar(t.Context(), pagoInput("10.00", cashOf("10.00")))
		var ce *ConflictError
		if !errors.As(err, &ce) || !errors.Is(err, ErrInFlight) {
			t.Fatalf("payment while another is in flight: %v, want ErrInFlight", err)
		}
		// Too early: the call may still be running; a debt query does not judge it.
		if d, err := e.svc.ConsultarDeuda(t.Context(), DeudaInput{NumeroTarjeta: card}); err != nil || len(d.Conciliados) != 0 {
			t.Fatalf("early debt query settled %v (%v)", d, err)
		}
		e.clock.Add(time.Minute)
		if _, err := e.svc.Aplicar(t.Context(), pagoInput("10.00", cashOf("10.00"))); !errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("payment after the dead one went stale: %v, want ErrOutcomeUnknown", err)
		}
		if unknown, _, err := e.svc.Pendientes(t.Context()); err != nil || unknown != 1 {
			t.Fatalf("Pendientes = %d, %v; want 1 unknown", unknown, err)
		}
		d, err := e.svc.ConsultarDeuda(t.Context(), DeudaInput{NumeroTarjeta: card})
		if err != nil || len(d.Conciliados) != 1 || d.Conciliados[0].Estado != EstadoNoAplicado ||
			d.Conciliados[0].Conciliacion == nil || d.Conciliados[0].Conciliacion.Aplicada {
			t.Fatalf("debt query: %+v, %v; want the dead payment NO_APLICADO", d, err)
		}
		if p := e.pagar(t, "10.00"); p.Estado != EstadoAplicado {
			t.Fatalf("payment after the settlement: %+v", p)
		}
	})
}

// A payment applied upstream whose answer never came is found applied by a debt query made by
// identification; its receipt cannot be handed over without the operation number, so the
// hand-over is recorded failed for a person and counted.
func TestLatePaymentFoundAppliedByIdentification(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, 500*time.Millisecond)
		e.cs.Script("GrabarPagoTarjeta", creditsystemtest.LateSuccess())
		p, err := e.svc.Aplicar(t.Context(), pagoInput("100.00", cashOf("100.00")))
		var re *RecordedError
		if !creditsystem.IsTimeout(err) || !errors.As(err, &re) || p == nil || p.Estado != EstadoDesconocido {
			t.Fatalf("Aplicar = %+v, %v; want DESCONOCIDO after a timeout", p, err)
		}
		e.clock.Add(time.Second)
		d, err := e.svc.ConsultarDeuda(t.Context(), DeudaInput{NumeroIdentificacion: "0912345678"})
		if err != nil || len(d.Conciliados) != 1 || d.Conciliados[0].Estado != EstadoAplicado {
			t.Fatalf("debt query: %+v, %v", d, err)
		}
		list, err := e.store.Entregas(t.Context(), p.ID)
		if err != nil || len(list[p.ID]) != 1 || list[p.ID][0].Estado != EntregaFallida || list[p.ID][0].UltimoError == "" {
			t.Fatalf("hand-over of a payment without operation number: %+v, %v", list[p.ID], err)
		}
		if _, handOvers, err := e.svc.Pendientes(t.Context()); err != nil || handOvers != 1 {
			t.Fatalf("Pendientes hand-overs = %d, %v; want 1", handOvers, err)
		}
	})
}

// A reversal that timed out holds the payment; a debt query settles it from the evidence (here:
// reversed, with the payment's invoices and rubros, and its hand-over enqueued). A reversal the
// creditsystem refused releases the payment.
func TestReversalOutcomes(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, 500*time.Millisecond)
		p := e.pagar(t, "100.00")
		n := *p.NumeroOperacion

		_, err := e.svc.Reversar(t.Context(), ReversoInput{NumeroOperacion: n, Motivo: creditsystemtest.MotivoReversoFault})
		var fe *creditsystem.FaultError
		if !errors.As(err, &fe) {
			t.Fatalf("reversal with a fault: %v", err)
		}
		if got, _, _ := e.svc.Pago(t.Context(), n); got.Estado != EstadoAplicado || got.OperacionEnCurso != "" {
			t.Fatalf("after a refused reversal: %+v", got)
		}

		e.cs.Script("GrabarReversoPagoTarjeta", creditsystemtest.LateSuccess())
		if _, err := e.svc.Reversar(t.Context(), ReversoInput{NumeroOperacion: n}); !creditsystem.IsTimeout(err) {
			t.Fatalf("reversal: %v, want a timeout", err)
		}
		if _, err := e.svc.Reversar(t.Context(), ReversoInput{NumeroOperacion: n}); !errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("second reversal: %v, want ErrOutcomeUnknown", err)
		}
		if _, err := e.svc.Aplicar(t.Context(), pagoInput("10.00", cashOf("10.00"))); !errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("payment of the held card: %v, want ErrOutcomeUnknown", err)
		}
		if n := e.cs.Calls("GrabarReversoPagoTarjeta"); n != 2 {
			t.Fatalf("GrabarReversoPagoTarjeta reached the fake %d times, want 2", n)
		}
		e.clock.Add(time.Second)
		d, err := e.svc.ConsultarDeuda(t.Context(), DeudaInput{NumeroTarjeta: card})
		if err != nil || len(d.Conciliados) != 1 {
			t.Fatalf("debt query: %+v, %v", d, err)
		}
		got, entregas, err := e.svc.Pago(t.Context(), n)
		if err != nil || got.Estado != EstadoReversado || len(got.RubrosRevertidos) == 0 || got.Conciliacion == nil || !got.Conciliacion.Aplicada {
			t.Fatalf("after the debt query: %+v, %v", got, err)
		}
		if len(entregas) != 2 || entregas[1].Evento != EventoReverso || entregas[1].Estado != EntregaPendiente {
			t.Fatalf("hand-overs: %+v", entregas)
		}
	})
}

// Entregar hands an event over once: a failed attempt is written and returned (the queue
// retries), a delivered one is never sent again, and the last failed attempt leaves it failed.
func TestEntregar(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, 2*time.Second)
		p := e.pagar(t, "100.00")
		list, err := e.store.Entregas(t.Context(), p.ID)
		if err != nil || len(list[p.ID]) != 1 {
			t.Fatalf("hand-overs of an applied payment: %+v, %v", list, err)
		}
		id := list[p.ID][0].ID
		e.erp.Script(erp.OpHandOverPayment, erptest.BusinessError("ERP en mantenimiento"))
		if err := e.svc.Entregar(t.Context(), id, false); err == nil {
			t.Fatal("a rejected hand-over reported no error")
		}
		got, _, _ := e.store.Entrega(t.Context(), id)
		if got.Estado != EntregaFallando || got.Intentos != 1 || got.UltimoError == "" {
			t.Fatalf("after a failed attempt: %+v", got)
		}
		for range 2 {
			if err := e.svc.Entregar(t.Context(), id, false); err != nil {
				t.Fatal(err)
			}
		}
		got, _, _ = e.store.Entrega(t.Context(), id)
		if got.Estado != EntregaEntregada || got.Intentos != 2 || got.NumeroDocumento != "RC-"+itoa(*p.NumeroOperacion) {
			t.Fatalf("after delivery: %+v", got)
		}
		if calls := e.erp.Calls(erp.OpHandOverPayment); calls != 2 {
			t.Fatalf("%d calls reached the ERP, want 2", calls)
		}

		q := e.pagar(t, "50.00")
		list, _ = e.store.Entregas(t.Context(), q.ID)
		e.erp.Script(erp.OpHandOverPayment, erptest.BusinessError("ERP en mantenimiento"))
		if err := e.svc.Entregar(t.Context(), list[q.ID][0].ID, true); err == nil {
			t.Fatal("the last failed attempt reported no error")
		}
		if got, _, _ := e.store.Entrega(t.Context(), list[q.ID][0].ID); got.Estado != EntregaFallida {
			t.Fatalf("after the last attempt: %+v", got)
		}
		if _, handOvers, _ := e.svc.Pendientes(t.Context()); handOvers != 1 {
			t.Fatalf("hand-overs needing a person: %d, want 1", handOvers)
		}
		// Once the ERP is back, an operator sends it again: a new job, then delivered.
		failed := list[q.ID][0].ID
		if _, err := e.svc.Reenviar(t.Context(), id); !errors.Is(err, ErrEntregaState) {
			t.Fatalf("resending a delivered hand-over: %v", err)
		}
		if got, err := e.svc.Reenviar(t.Context(), failed); err != nil || got.Estado != EntregaPendiente {
			t.Fatalf("Reenviar = %+v, %v", got, err)
		}
		var jobs int
		if err := tg.DB.NewSelect().Table("river_job").ColumnExpr("count(*)").Where("kind = ?", HandOverArgs{}.Kind()).Scan(t.Context(), &jobs); err != nil || jobs != 3 {
			t.Fatalf("hand-over jobs: %d, %v; want 3 (two payments, one resend)", jobs, err)
		}
		if err := e.svc.Entregar(t.Context(), failed, false); err != nil {
			t.Fatal(err)
		}
		if _, handOvers, _ := e.svc.Pendientes(t.Context()); handOvers != 0 {
			t.Fatalf("hand-overs needing a person after the resend: %d", handOvers)
		}
	})
}

// A hand-over that cannot be sent (a payment found applied without its operation number) is
// closed by hand with the document a person issued.
func TestCerrarEntrega(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		e := newEnv(t, tg, 500*time.Millisecond)
		e.cs.Script("GrabarPagoTarjeta", creditsystemtest.LateSuccess())
		p, _ := e.svc.Aplicar(t.Context(), pagoInput("100.00", cashOf("100.00")))
		e.clock.Add(time.Second)
		if _, err := e.svc.ConsultarDeuda(t.Context(), DeudaInput{NumeroTarjeta: card}); err != nil {
			t.Fatal(err)
		}
		list, _ := e.store.Entregas(t.Context(), p.ID)
		id := list[p.ID][0].ID
		if _, err := e.svc.Reenviar(t.Context(), id); !errors.Is(err, ErrEntregaState) {
			t.Fatalf("resending a hand-over without operation number: %v", err)
		}
		if _, err := e.svc.Cerrar(t.Context(), id, " "); !errors.Is(err, ErrEntregaState) {
			t.Fatalf("closing without a document: %v", err)
		}
		got, err := e.svc.Cerrar(t.Context(), id, "RC-MANUAL-1")
		if err != nil || got.Estado != EntregaEntregada || got.NumeroDocumento != "RC-MANUAL-1" {
			t.Fatalf("Cerrar = %+v, %v", got, err)
		}
		if _, err := e.svc.Cerrar(t.Context(), id, "RC-MANUAL-2"); !errors.Is(err, ErrEntregaState) {
			t.Fatalf("closing twice: %v", err)
		}
		if _, err := e.svc.Cerrar(t.Context(), 999, "X"); !errors.Is(err, ErrEntregaNotFound) {
			t.Fatalf("unknown hand-over: %v", err)
		}
		if _, handOvers, _ := e.svc.Pendientes(t.Context()); handOvers != 0 {
			t.Fatalf("hand-overs needing a person after closing: %d", handOvers)
		}
	})
}

func itoa(n int64) string { return decimal.NewFromInt(n).String() }
