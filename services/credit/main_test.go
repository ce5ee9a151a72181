package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/platform/integrations/credit/consumption"
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
		if err := reconcile(t.Context(), tg.DB, notApplied, "applied", &out); !errors.Is(err, consumption.ErrNothingToReconcile) {
			t.Fatalf("free record: err %v, want ErrNothingToReconcile", err)
		}
	})
}
