package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/platform/integrations/credit/consumption"
	"github.com/platform/integrations/internal/idempotency"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// TestMoneyMovingWritesThatFail: for every money-moving route of the consumption module, the
// database refuses the write that records what the creditsystem just did. The answer still
// carries the ids, a retry with the same Idempotency-Key replays it and calls nothing, and
// reconciliation (automatic for an authorization, an operator's for the others) leaves the
// record final and correct.
func TestMoneyMovingWritesThatFail(t *testing.T) {
	cases := []struct {
		name     string
		endpoint string
		upstream string
		fault    string // the statement that records the outcome
		prepare  func(env *testEnv) (id string)
		body     func(id string) any
		want     consumption.Estado // after reconciliation
	}{
		{"autorizacion", "autorizacion", "GrabarAutorizacion", `INSERT INTO "consumos"`,
			func(*testEnv) string { return "" }, func(string) any { return autorizacionBody("300.00") }, ""},
		{"confirmar", "confirmar", "GrabarConsumo", `(?s)UPDATE "consumos".*'CONSUMIDO'`,
			func(env *testEnv) string { return env.autorizar() },
			func(id string) any { return confirmarBody(id, "F-FAULT-1") }, consumption.EstadoConsumido},
		{"reverso", "reverso", "GrabarReversoAutorizacion", `(?s)UPDATE "consumos".*'REVERSADO'`,
			func(env *testEnv) string { return env.autorizar() },
			func(id string) any { return map[string]any{"autorizacion_id": id} }, consumption.EstadoReversado},
		{"reverso-consumo", "reverso-consumo", "GrabarReversoConsumo", `(?s)UPDATE "consumos".*'CONSUMO_REVERSADO'`,
			func(env *testEnv) string {
				id := env.autorizar()
				consumoExpect(env.t.(*testing.T), env.consumo("confirmar", confirmarBody(id, "F-FAULT-2")), 200)
				return id
			},
			func(id string) any { return map[string]any{"autorizacion_id": id} }, consumption.EstadoConsumoReversado},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
				faults := &storagetest.Faults{}
				env := newTestEnv(t, tg, withFaults(faults))
				id := tc.prepare(env)
				key := "fault-" + tc.name
				post := func() response {
					return env.do(http.MethodPost, consumoPrefix+tc.endpoint, tc.body(id), env.userToken(), idempotency.Header, key)
				}
				faults.Fail(tc.fault, -1)
				first := post()
				faults.Clear()
				if faults.Hits() == 0 {
					t.Fatal("the fault never fired")
				}
				m := expectError(t, first, http.StatusInternalServerError)
				if tc.endpoint == "autorizacion" {
					id, _ = m["autorizacion_id"].(string)
				}
				if m["autorizacion_id"] != id || id == "" || m["numero_operacion"] == nil || m["operation"] != tc.upstream ||
					!strings.Contains(m["message"].(string), id) {
					t.Fatalf("answer after the creditsystem acted: %s; want the ids, the operation and what happens next", first.Body)
				}
				again := post()
				if again.Status != first.Status || !bytes.Equal(again.Body, first.Body) || again.Header.Get(idempotency.ReplayedHeader) != "true" {
					t.Fatalf("retry with the same key: %d %s, want the first answer replayed", again.Status, again.Body)
				}
				if n := env.cs.Calls(tc.upstream); n != 1 {
					t.Fatalf("%s reached the creditsystem %d times, want 1", tc.upstream, n)
				}

				if tc.endpoint == "autorizacion" {
					// Nothing was recorded; the reversal pass reverses the grant upstream, once.
					if n, _ := tg.DB.NewSelect().Model((*consumption.Consumo)(nil)).Where("autorizacion_id = ?", id).Count(t.Context()); n != 0 {
						t.Fatalf("%d records of the unrecorded authorization", n)
					}
					for range 2 {
						if _, err := env.srv.consumos.ReversarNoRegistradas(t.Context()); err != nil {
							t.Fatal(err)
						}
					}
					if n := env.cs.Calls("GrabarReversoAutorizacion"); n != 1 {
						t.Fatalf("GrabarReversoAutorizacion reached the creditsystem %d times, want 1", n)
					}
					if card, _ := env.cs.Card(testTarjeta); !card.Disponible.Equal(consumoDec("5000")) {
						t.Fatalf("the credit line is still held after the reversal: %s available", card.Disponible)
					}
					in := env.intentos("autorizacion_id = ? AND operacion = ?", id, consumption.UpstreamGrabarAutorizacion)
					if len(in) != 1 || in[0].Resultado != consumption.ResultadoRevertida {
						t.Fatalf("attempts of the grant: %+v, want one marked reversed", in)
					}
					return
				}
				// The record is held with an unknown outcome, visible, and refuses new operations.
				rec := env.do(http.MethodGet, consumoPrefix+id, nil, env.userToken())
				if rec.Status != 200 || !strings.Contains(string(rec.Body), `"resultado_desconocido":true`) {
					t.Fatalf("GET after the fault: %d %s", rec.Status, rec.Body)
				}
				expectError(t, env.consumo(tc.endpoint, tc.body(id)), http.StatusConflict)
				var out bytes.Buffer
				if err := reconcile(t.Context(), tg.DB, id, "applied", &out); err != nil {
					t.Fatal(err)
				}
				got := env.record(id)
				if got.Estado != tc.want || got.OperacionEnCurso != "" || got.ResultadoDesconocido {
					t.Fatalf("after reconciliation: estado %s marker %q unknown %v, want %s", got.Estado, got.OperacionEnCurso, got.ResultadoDesconocido, tc.want)
				}
				if tc.want == consumption.EstadoConsumido && got.NumeroFactura != "F-FAULT-1" {
					t.Fatalf("reconciled confirmation without its invoice: %q", got.NumeroFactura)
				}
				_, _ = io.Copy(io.Discard, &out)
			})
		})
	}
}

// TestDuplicateGrantNamesTheIDs: the creditsystem grants an authorization id the service has
// already recorded (here a second fake numbering from 1 again over the same database). Nothing is
// recorded and nothing is reversed automatically (the id is the recorded authorization's too),
// and the answer still carries the ids the creditsystem gave, not a bare 500.
func TestDuplicateGrantNamesTheIDs(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		id := newTestEnv(t, tg).autorizar()
		again := newTestEnv(t, tg)
		m := expectError(t, again.consumo("autorizacion", autorizacionBody("300.00")), http.StatusInternalServerError)
		msg, _ := m["message"].(string)
		if m["autorizacion_id"] != id || m["numero_operacion"] == nil || m["operation"] != consumption.UpstreamGrabarAutorizacion ||
			!strings.Contains(msg, id) || !strings.Contains(msg, "operator") {
			t.Fatalf("answer to a duplicate grant: %v; want the ids and what happens next", m)
		}
		if _, err := again.srv.consumos.ReversarNoRegistradas(t.Context()); err != nil {
			t.Fatal(err)
		}
		if n := again.cs.Calls("GrabarReversoAutorizacion"); n != 0 {
			t.Fatalf("the duplicate grant was reversed upstream %d times; the id is the recorded authorization's too", n)
		}
		if got := again.record(id); got.Estado != consumption.EstadoAutorizado {
			t.Fatalf("the recorded authorization changed: %s", got.Estado)
		}
	})
}

// TestDeadProcessLeavesAnUnknownOutcome: a record held by an operation that started longer ago
// than the creditsystem timeout belongs to a process that died during the call. It reads as held
// with an unknown outcome (GET /consumo/:autorizacion_id), refuses new operations with the
// outcome-unknown 409 rather than "in progress", and counts in the metric an operator watches.
func TestDeadProcessLeavesAnUnknownOutcome(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		id := env.autorizar()
		// What a kill -9 during GrabarConsumo leaves: the marker, no outcome.
		if _, err := tg.DB.NewUpdate().Model((*consumption.Consumo)(nil)).
			Set("operacion_en_curso = ?", consumption.UpstreamGrabarConsumo).
			Set("operacion_iniciada_at = ?", time.Now().UTC().Add(-time.Hour)).
			Where("autorizacion_id = ?", id).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		rec := env.do(http.MethodGet, consumoPrefix+id, nil, env.userToken())
		if rec.Status != 200 || !strings.Contains(string(rec.Body), `"resultado_desconocido":true`) ||
			!strings.Contains(string(rec.Body), `"operacion_en_curso":"GrabarConsumo"`) {
			t.Fatalf("GET of the held record: %d %s", rec.Status, rec.Body)
		}
		m := expectError(t, env.consumo("confirmar", confirmarBody(id, "F-DEAD")), http.StatusConflict)
		if msg, _ := m["message"].(string); !strings.Contains(msg, "may have been applied") {
			t.Fatalf("409 %q, want the outcome-unknown message", msg)
		}
		metrics := env.do(http.MethodGet, "/metrics", nil, "")
		if !strings.Contains(string(metrics.Body), "credit_consumos_outcome_unknown 1") {
			t.Fatalf("metric missing: %s", metrics.Body)
		}
		expectError(t, env.do(http.MethodGet, consumoPrefix+"NOPE", nil, env.userToken()), http.StatusNotFound)
	})
}
