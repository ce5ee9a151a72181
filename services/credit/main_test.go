package main

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/platform/integrations/credit/consumption"
	"github.com/platform/integrations/credit/payments"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

func TestReconcileCommand(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg, shortTimeout)

		applied := env.autorizar()
		env.cs.Script("GrabarConsumo", creditsystemtest.LateSuccess())
		expectTimeout504(t, env.consumo("confirmar", confirmarBody(applied, "F-CMD")), "GrabarConsumo")
		// Held: the service refuses every call on it until an operator reconciles.
		expectError(t, env.consumo("reverso", map[string]any{"autorizacion_id": applied}), 409)

		var out bytes.Buffer
		if err := reconcile(t.Context(), tg.DB, applied, "applied", &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "estado "+string(consumption.EstadoConsumido)) {
			t.Fatalf("output %q does not report CONSUMIDO", out.String())
		}
		consumoExpect(t, env.consumo("reverso-consumo", map[string]any{"autorizacion_id": applied}), 200)

		notApplied := env.autorizar()
		env.cs.Script("GrabarReversoAutorizacion", creditsystemtest.Hang())
		expectTimeout504(t, env.consumo("reverso", map[string]any{"autorizacion_id": notApplied}), "GrabarReversoAutorizacion")
		out.Reset()
		if err := reconcile(t.Context(), tg.DB, notApplied, "not-applied", &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "estado "+string(consumption.EstadoAutorizado)) {
			t.Fatalf("output %q does not report AUTORIZADO", out.String())
		}
		consumoExpect(t, env.consumo("confirmar", confirmarBody(notApplied, "F-CMD-2")), 200)

		if err := reconcile(t.Context(), tg.DB, notApplied, "maybe", &out); !errors.Is(err, errUsage) {
			t.Fatalf("outcome maybe: err %v, want the usage error", err)
		}
		if err := reconcile(t.Context(), tg.DB, "NOPE", "applied", &out); !errors.Is(err, consumption.ErrAutorizacionNotFound) {
			t.Fatalf("unknown authorization: err %v, want ErrAutorizacionNotFound", err)
		}
		err := reconcile(t.Context(), tg.DB, notApplied, "applied", &out)
		if !errors.Is(err, consumption.ErrNothingToReconcile) {
			t.Fatalf("free record: err %v, want ErrNothingToReconcile", err)
		}
		// What the command prints names it once: "credit: consumption: ...", and the usage
		// "usage: credit [...]" without a prefix.
		for _, e := range []error{err, errUsage} {
			var printed strings.Builder
			report(&printed, e)
			if n := strings.Count(printed.String(), "credit"); n != 1 {
				t.Errorf("printed %q names the command %d times, want once", printed.String(), n)
			}
		}
	})
}

// TestSettleCommand: an authorization whose outcome is unknown needs a person (it is counted in
// credit_authorizations_unrecorded); once settled by hand it leaves the count, and only attempts
// that need a person can be settled.
func TestSettleCommand(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg, shortTimeout)
		env.cs.Script("GrabarAutorizacion", creditsystemtest.Hang())
		expectTimeout504(t, env.consumo("autorizacion", autorizacionBody("300.00")), "GrabarAutorizacion")
		unrecorded := func() string {
			return "credit_authorizations_unrecorded " + env.gauge("credit_authorizations_unrecorded")
		}
		if got := unrecorded(); got != "credit_authorizations_unrecorded 1" {
			t.Fatalf("after the timeout: %q, want 1", got)
		}
		var timedOut, granted consumption.Intento
		if err := tg.DB.NewSelect().Model(&timedOut).Where("resultado = ?", consumption.ResultadoTimeout).Scan(t.Context()); err != nil {
			t.Fatal(err)
		}
		env.autorizar()
		if err := tg.DB.NewSelect().Model(&granted).Where("resultado = ?", consumption.ResultadoOK).Limit(1).Scan(t.Context()); err != nil {
			t.Fatal(err)
		}

		var out bytes.Buffer
		cfg := env.srv.cfg
		if err := settle(t.Context(), tg.DB, cfg, strconv.FormatInt(timedOut.ID, 10), "not granted: checked with the creditsystem", &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "settled") {
			t.Fatalf("output %q", out.String())
		}
		if got := unrecorded(); got != "credit_authorizations_unrecorded 0" {
			t.Fatalf("after settle: %q, want 0", got)
		}
		var audit consumption.Intento
		if err := tg.DB.NewSelect().Model(&audit).Where("resultado = ?", consumption.ResultadoAtendido).
			Where("id <> ?", timedOut.ID).Scan(t.Context()); err != nil {
			t.Fatalf("no audit of the settlement: %v", err)
		}
		if !strings.Contains(string(audit.Solicitud), "checked with the creditsystem") || !strings.Contains(string(audit.Solicitud), `"timeout"`) {
			t.Fatalf("audit %s, want the note and the earlier result", audit.Solicitud)
		}

		for name, id := range map[string]string{"settled twice": strconv.FormatInt(timedOut.ID, 10), "a granted attempt": strconv.FormatInt(granted.ID, 10)} {
			if err := settle(t.Context(), tg.DB, cfg, id, "", &out); !errors.Is(err, consumption.ErrNothingToReconcile) {
				t.Fatalf("%s: err %v, want ErrNothingToReconcile", name, err)
			}
		}
		if err := settle(t.Context(), tg.DB, cfg, "x", "", &out); !errors.Is(err, errUsage) {
			t.Fatalf("attempt x: err %v, want the usage error", err)
		}
	})
}

// TestHandOverCommand: a given-up hand-over is sent again by the running service once resent,
// and "done" records a document issued by hand.
func TestHandOverCommand(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		env.withDebt()
		a := decodePago(t, env.pagos("aplicar", aplicarBody("100.00")), 200)
		var id int64
		if err := tg.DB.NewSelect().Table("pago_entregas").Column("id").Where("evento = 'pago'").Scan(t.Context(), &id); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		hid := strconv.FormatInt(id, 10)
		if err := handover(t.Context(), tg.DB, []string{hid, "resend"}, &out); !errors.Is(err, payments.ErrEntregaState) {
			t.Fatalf("resend of a pending hand-over: %v", err)
		}
		if _, err := tg.DB.NewUpdate().Table("pago_entregas").Set("estado = 'failed'").Where("id = ?", id).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := env.gauge("credit_payment_handovers_failing"); got != "1" {
			t.Fatalf("credit_payment_handovers_failing = %s with a given-up hand-over, want 1", got)
		}
		if err := handover(t.Context(), tg.DB, []string{hid, "resend"}, &out); err != nil || !strings.Contains(out.String(), "pending") {
			t.Fatalf("resend: %v %q", err, out.String())
		}
		env.startJobs()
		deadline := time.Now().Add(15 * time.Second)
		for {
			got := decodePago(t, env.do(http.MethodGet, pagosPath+strconv.FormatInt(*a.NumeroOperacion, 10), nil, env.userToken()), 200)
			if len(got.EntregasERP) == 1 && got.EntregasERP[0].Estado == "delivered" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the resent hand-over was not delivered: %+v", got.EntregasERP)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if got := env.gauge("credit_payment_handovers_failing"); got != "0" {
			t.Fatalf("credit_payment_handovers_failing = %s after delivery, want 0", got)
		}
		if err := handover(t.Context(), tg.DB, []string{hid, "done", "RC-1"}, &out); !errors.Is(err, payments.ErrEntregaState) {
			t.Fatalf("done on a delivered hand-over: %v", err)
		}
		for _, args := range [][]string{{"x", "resend"}, {hid, "maybe"}, {hid, "done"}} {
			if err := handover(t.Context(), tg.DB, args, &out); !errors.Is(err, errUsage) {
				t.Fatalf("%v: %v, want the usage error", args, err)
			}
		}
	})
}
