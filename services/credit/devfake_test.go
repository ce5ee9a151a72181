package main

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/platform/integrations/internal/storage/storagetest"
)

// newDevEnv is the service with no creditsystem URL configured, so that in development mode it
// runs against its own built-in fake, wired as `make run` wires it (server.go), not against the
// harness's fake.
func newDevEnv(t *testing.T, tg storagetest.Target) *testEnv {
	t.Helper()
	env := newTestEnv(t, tg,
		withEnv("CREDITSYSTEM_CARTERA_URL", ""),
		withEnv("CREDITSYSTEM_CENTRAL_URL", ""),
		withEnv("CREDITSYSTEM_SOAP_NAMESPACE", ""))
	if env.srv.csFake == nil {
		t.Fatal("the service did not start its built-in creditsystem fake")
	}
	return env
}

func cupoDisponibleOf(t *testing.T, env *testEnv) string {
	t.Helper()
	r := env.consumo("cupo", map[string]any{"codigo_empresa": "000598", "identificacion": testIdentificacion, "numero_tarjeta": testTarjeta})
	m := consumoExpect(t, r, http.StatusOK)
	return jsonNum(t, m["nCupoDisponible"])
}

// DESIGN.md, Fakes and magic values: "any other card → a card with 5000.00 available". External
// test suites reuse one card number for many operations, so the development fake never consumes
// a line: 3 × 3000.00 on a 5000.00 line all pass and /consumo/cupo still shows 5000.00.
func TestDevFakeLineIsNeverConsumed(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newDevEnv(t, tg)
		if got := cupoDisponibleOf(t, env); got != "5000.00" {
			t.Fatalf("nCupoDisponible before any authorization = %s, want 5000.00", got)
		}
		var ids []string
		for i := range 3 {
			r := env.consumo("autorizacion", autorizacionBody("3000.00"))
			m := consumoExpect(t, r, http.StatusOK)
			if m["codigo_seguridad_enviado"] != true {
				t.Errorf("authorization %d: codigo_seguridad_enviado = %v, want true", i+1, m["codigo_seguridad_enviado"])
			}
			ids = append(ids, m["autorizacion_id"].(string))
			if got := cupoDisponibleOf(t, env); got != "5000.00" {
				t.Fatalf("nCupoDisponible after authorization %d of 3000.00 = %s, want 5000.00", i+1, got)
			}
		}

		// A confirmation reports the line minus its own invoice (300.00), not minus 9000.00.
		r := env.consumo("confirmar", confirmarBody(ids[0], "F-DEV-1"))
		m := consumoExpect(t, r, http.StatusOK)
		var cupos []map[string]json.RawMessage
		raw, _ := json.Marshal(m["cupos_afectados"])
		if err := json.Unmarshal(raw, &cupos); err != nil || len(cupos) != 1 {
			t.Fatalf("cupos_afectados = %s", raw)
		}
		if got := string(cupos[0]["nCupoDisponible"]); got != "4700.00" {
			t.Errorf("cupos_afectados nCupoDisponible = %s, want 4700.00", got)
		}
		if got := cupoDisponibleOf(t, env); got != "5000.00" {
			t.Errorf("nCupoDisponible after the confirmation = %s, want 5000.00", got)
		}

		// Above the line, and the magic amount, are still insufficient credit.
		for _, monto := range []string{"5000.01", "666.66"} {
			t.Run("monto "+monto, func(t *testing.T) {
				expectUpstream502(t, env.consumo("autorizacion", autorizacionBody(monto)), "GrabarAutorizacion", "51")
			})
		}
	})
}

// A term the service accepts (integer, min 1) but the fake caps at 360 installments is answered
// at once: the fake never builds a table of millions of rows inside the service process.
func TestDevFakePlazoCap(t *testing.T) {
	env := newDevEnv(t, storagetest.SQLite(t))
	cases := []struct {
		name         string
		plazo        int
		upstreamCode string // "": authorized and confirmed
	}{
		{"plazo 360 is authorized and confirmed", 360, ""},
		{"plazo 361 is rejected upstream", 361, "30"},
		{"plazo 2147483647 is rejected upstream", 2147483647, "30"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := autorizacionBody("1000.00")
			body["plazo"] = tc.plazo
			r := env.consumo("autorizacion", body)
			if tc.upstreamCode != "" {
				expectUpstream502(t, r, "GrabarAutorizacion", tc.upstreamCode)
			} else {
				m := consumoExpect(t, r, http.StatusOK)
				c := consumoExpect(t, env.consumo("confirmar", confirmarBody(m["autorizacion_id"].(string), "F-PLAZO-360")), http.StatusOK)
				if tabla, _ := c["tabla_amortizacion"].([]any); len(tabla) != 360 {
					t.Errorf("tabla_amortizacion has %d rows, want 360", len(tabla))
				}
			}
		})
	}
}
