package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/platform/integrations/credit/consumption"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// What a dashboard and operations read (issue 19, point 2): after a 504 the answer names the
// record, and GET /consumo/:autorizacion_id shows its unknown outcome, so that nobody opens the
// database; every GET route refuses a query parameter it does not take.

// heldAnswer is the body of a 504 (or of the 502 of a lost connection) on an existing
// authorization: the envelope and the record it left held.
type heldAnswer struct {
	Status               string          `json:"status"`
	StatusCode           int             `json:"statusCode"`
	Message              json.RawMessage `json:"message"`
	AutorizacionID       string          `json:"autorizacion_id"`
	NumeroOperacion      json.Number     `json:"numero_operacion"`
	Estado               string          `json:"estado"`
	OperacionEnCurso     *string         `json:"operacion_en_curso"`
	ResultadoDesconocido bool            `json:"resultado_desconocido"`
}

// consumoAnswer is what the test reads of GET /consumo/:autorizacion_id.
type consumoAnswer struct {
	AutorizacionID       string      `json:"autorizacion_id"`
	NumeroOperacion      json.Number `json:"numero_operacion"`
	Estado               string      `json:"estado"`
	Monto                json.Number `json:"monto"`
	Plazo                int         `json:"plazo"`
	NumeroFactura        *string     `json:"numero_factura"`
	OperacionEnCurso     *string     `json:"operacion_en_curso"`
	OperacionIniciadaAt  *string     `json:"operacion_iniciada_at"`
	ResultadoDesconocido bool        `json:"resultado_desconocido"`
	Intentos             []struct {
		Operacion   string  `json:"operacion"`
		Resultado   string  `json:"resultado"`
		RequestID   *string `json:"request_id"`
		TerminadoAt *string `json:"terminado_at"`
	} `json:"intentos"`
}

func TestConsumoGetAfterTimeoutShowsUnknownOutcome(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg) // CREDITSYSTEM_TIMEOUT=1

		t.Run("timed-out authorization (504.04): a 504 without autorizacion_id, none exists", func(t *testing.T) {
			// The creditsystem never named the authorization, so there is no record to show: the
			// answer carries no id, and the attempt is found by the request id (README, "When
			// something fails").
			r := env.do(http.MethodPost, consumoPrefix+"autorizacion", autorizacionBody(creditsystemtest.MontoTimeout.StringFixed(2)),
				env.userToken(), "X-Request-Id", "req-aut-504")
			m := expectError(t, r, http.StatusGatewayTimeout)
			if _, ok := m["autorizacion_id"]; ok {
				t.Fatalf("504 of a timed-out authorization names an autorizacion_id: %s", r.Body)
			}
			in := env.intentos("request_id = ?", "req-aut-504")
			if len(in) != 1 || in[0].Resultado != consumption.ResultadoTimeout || in[0].AutorizacionID != "" {
				t.Fatalf("audit of the timed-out authorization %+v, want one timeout attempt without an id", in)
			}
		})

		for _, tc := range []struct {
			name      string
			endpoint  string
			operation string
			prepare   []string
			reaction  creditsystemtest.Reaction
			status    int
			estado    consumption.Estado
			resultado consumption.Resultado
		}{
			{"confirmar times out", "confirmar", consumption.UpstreamGrabarConsumo, nil,
				creditsystemtest.Hang(), http.StatusGatewayTimeout, consumption.EstadoAutorizado, consumption.ResultadoTimeout},
			{"confirmar after OTP, applied but never answered", "confirmar", consumption.UpstreamGrabarConsumo, []string{"otp"},
				creditsystemtest.LateSuccess(), http.StatusGatewayTimeout, consumption.EstadoOTPRecibido, consumption.ResultadoTimeout},
			{"reverso times out", "reverso", consumption.UpstreamGrabarReversoAutorizacion, nil,
				creditsystemtest.Hang(), http.StatusGatewayTimeout, consumption.EstadoAutorizado, consumption.ResultadoTimeout},
			{"reverso-consumo times out", "reverso-consumo", consumption.UpstreamGrabarReversoConsumo, []string{"confirmar"},
				creditsystemtest.Hang(), http.StatusGatewayTimeout, consumption.EstadoConsumido, consumption.ResultadoTimeout},
			{"confirmar loses its connection", "confirmar", consumption.UpstreamGrabarConsumo, nil,
				creditsystemtest.Drop(), http.StatusBadGateway, consumption.EstadoAutorizado, consumption.ResultadoTransporte},
		} {
			t.Run(tc.name, func(t *testing.T) {
				id := env.autorizar()
				for i, p := range tc.prepare {
					consumoExpect(t, env.consumo(p, consumoBody(p, id, i)), http.StatusOK)
				}
				env.cs.Script(tc.operation, tc.reaction)
				reqID := "req-held-" + strings.ReplaceAll(tc.name, " ", "-")
				r := env.do(http.MethodPost, consumoPrefix+tc.endpoint, consumoBody(tc.endpoint, id, 9), env.userToken(), "X-Request-Id", reqID)
				expectError(t, r, tc.status)

				// The answer names the record it left held.
				var held heldAnswer
				if err := json.Unmarshal(r.Body, &held); err != nil {
					t.Fatal(err)
				}
				if held.AutorizacionID != id || held.NumeroOperacion == "" || held.Estado != string(tc.estado) ||
					held.OperacionEnCurso == nil || *held.OperacionEnCurso != tc.operation || !held.ResultadoDesconocido {
					t.Fatalf("%d answer %s; want autorizacion_id %s, numero_operacion, estado %s, operacion_en_curso %s, resultado_desconocido true",
						tc.status, r.Body, id, tc.estado, tc.operation)
				}
				if tc.status == http.StatusGatewayTimeout && !strings.Contains(string(held.Message), tc.operation) {
					t.Fatalf("504 message %s must name %s", held.Message, tc.operation)
				}

				// GET with the id from that answer shows the unknown outcome and the attempts.
				got := consumoExpect(t, env.do(http.MethodGet, consumoPrefix+held.AutorizacionID, nil, env.userToken()), http.StatusOK)
				raw, _ := json.Marshal(got)
				var rec consumoAnswer
				if err := json.Unmarshal(raw, &rec); err != nil {
					t.Fatal(err)
				}
				if rec.AutorizacionID != id || rec.Estado != string(tc.estado) || rec.NumeroOperacion != held.NumeroOperacion ||
					rec.Monto != "300.00" || rec.Plazo != 3 || !rec.ResultadoDesconocido ||
					rec.OperacionEnCurso == nil || *rec.OperacionEnCurso != tc.operation || rec.OperacionIniciadaAt == nil {
					t.Fatalf("GET %s after the %d: %s; want estado %s, the amounts, held by %s with an unknown outcome",
						id, tc.status, raw, tc.estado, tc.operation)
				}
				var ops []string
				for _, in := range rec.Intentos {
					ops = append(ops, in.Operacion+":"+in.Resultado)
				}
				if len(rec.Intentos) < 2 || rec.Intentos[0].Operacion != consumption.UpstreamGrabarAutorizacion || rec.Intentos[0].Resultado != "ok" {
					t.Fatalf("attempts %v, want the authorization first", ops)
				}
				last := rec.Intentos[len(rec.Intentos)-1]
				if last.Operacion != tc.operation || last.Resultado != string(tc.resultado) ||
					last.RequestID == nil || *last.RequestID != reqID || last.TerminadoAt == nil {
					t.Fatalf("attempts %v; last %+v, want %s:%s of request %s, finished", ops, last, tc.operation, tc.resultado, reqID)
				}
				// The held record refuses the next operation until an operator reconciles it.
				expectError(t, env.consumo(tc.endpoint, consumoBody(tc.endpoint, id, 10)), http.StatusConflict)
			})
		}

		t.Run("a rejection holds nothing: the plain 502", func(t *testing.T) {
			id := env.autorizar()
			env.cs.Script(consumption.UpstreamGrabarReversoAutorizacion, creditsystemtest.BusinessError(21, "Autorización bloqueada"))
			r := env.consumo("reverso", map[string]any{"autorizacion_id": id})
			expectUpstream502(t, r, consumption.UpstreamGrabarReversoAutorizacion, "21")
			if m := r.JSON(t); m["autorizacion_id"] != nil || m["resultado_desconocido"] != nil {
				t.Fatalf("502 of a rejection carries the held-record members: %s", r.Body)
			}
			if rec := env.record(id); rec.OperacionEnCurso != "" || rec.ResultadoDesconocido {
				t.Fatalf("record after a rejection: %+v", rec)
			}
		})
	})
}

// TestUnknownQueryParameters: every GET route of the service answers a query parameter it does
// not take, misspelt or in another case, with a 400 in the validation envelope naming it; the
// parameters it takes (the aliases included) still work.
func TestUnknownQueryParameters(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		body := newClientBody("0200000777")
		body["codigo_cliente"] = "C-QUERY"
		env.createClient(body)
		env.withDebt()
		pago := decodePago(t, env.pagos("aplicar", aplicarBody("100.00")), http.StatusOK)
		op := strconv.FormatInt(*pago.NumeroOperacion, 10)
		id := env.autorizar()

		const apiPagos = "/api/v1/credigestion/pagos"
		for _, tc := range []struct {
			name, path string
			status     int
			// problems are the 400's errors; perPage is the per_page a list answered with.
			problems []string
			perPage  int
		}{
			{"GET /clients with its parameters", clientsPath + "?page=1&per_page=1&search=cliente", 200, nil, 1},
			{"GET /clients with an empty search", clientsPath + "?search=", 200, nil, 20},
			{"GET /clients misspelt per_page", clientsPath + "?perpage=5", 400, []string{"unknown query parameter(s): perpage"}, 0},
			{"GET /clients another case", clientsPath + "?Page=2&SEARCH=x", 400, []string{"unknown query parameter(s): Page, SEARCH"}, 0},
			{"GET /clients perPage (the payments' alias only)", clientsPath + "?perPage=5", 400, []string{"unknown query parameter(s): perPage"}, 0},
			{"GET /clients unknown beside an invalid page", clientsPath + "?sort=name&page=x&order=asc", 400,
				[]string{"unknown query parameter(s): sort, order", "page must be an integer"}, 0},
			{"GET /clients/:codigo", clientsPath + "/C-QUERY", 200, nil, 0},
			{"GET /clients/:codigo with a parameter", clientsPath + "/C-QUERY?expand=erp", 400, []string{"unknown query parameter(s): expand"}, 0},
			{"GET /consumo/:autorizacion_id", consumoPrefix + id, 200, nil, 0},
			{"GET /consumo/:autorizacion_id with parameters", consumoPrefix + id + "?intentos=false&verbose", 400,
				[]string{"unknown query parameter(s): intentos, verbose"}, 0},
			{"GET /consumo/:autorizacion_id unknown id and a parameter", consumoPrefix + "NOPE?x=1", 400, []string{"unknown query parameter(s): x"}, 0},
		} {
			t.Run(tc.name, func(t *testing.T) { checkQueryCase(t, env, tc.path, tc.status, tc.problems, tc.perPage) })
		}
		// The payments routes, under both prefixes.
		for _, prefix := range []string{"/credigestion/pagos", apiPagos} {
			for _, tc := range []struct {
				name, path string
				status     int
				problems   []string
				perPage    int
			}{
				{"list with its parameters", "?numeroTarjeta=" + testTarjeta + "&page=1&per_page=2", 200, nil, 2},
				{"list with the perPage alias", "?perPage=3", 200, nil, 3},
				{"list misspelt numeroTarjeta", "?numerotarjeta=" + testTarjeta, 400, []string{"unknown query parameter(s): numerotarjeta"}, 0},
				{"list filter it does not have", "?estado=APLICADO&per_page=5", 400, []string{"unknown query parameter(s): estado"}, 0},
				{"list unknown beside a long card", "?perpage=5&numeroTarjeta=" + strings.Repeat("9", 21), 400,
					[]string{"unknown query parameter(s): perpage", "numeroTarjeta must be at most 20 characters long"}, 0},
				{"detail", "/" + op, 200, nil, 0},
				{"detail with a parameter", "/" + op + "?entregas=0", 400, []string{"unknown query parameter(s): entregas"}, 0},
			} {
				t.Run("GET "+prefix+" "+tc.name, func(t *testing.T) { checkQueryCase(t, env, prefix+tc.path, tc.status, tc.problems, tc.perPage) })
			}
		}
		t.Run("the credentials come first: 401, not 400", func(t *testing.T) {
			expectError(t, env.do(http.MethodGet, consumoPrefix+id+"?verbose=1", nil, ""), http.StatusUnauthorized)
			expectError(t, env.do(http.MethodGet, clientsPath+"?perpage=1", nil, ""), http.StatusUnauthorized)
		})
	})
}

func checkQueryCase(t *testing.T, env *testEnv, path string, status int, problems []string, perPage int) {
	t.Helper()
	r := env.do(http.MethodGet, path, nil, env.userToken())
	if status == http.StatusBadRequest {
		m := expectError(t, r, status)
		var got []string
		for _, e := range m["errors"].([]any) {
			got = append(got, e.(string))
		}
		if m["message"] != "Validation failed" || !slices.Equal(got, problems) {
			t.Fatalf("GET %s: %s; want the validation envelope with %q", path, r.Body, problems)
		}
		return
	}
	m := consumoExpect(t, r, status)
	if perPage == 0 {
		return
	}
	pg, _ := m["pagination"].(map[string]any)
	if n, _ := pg["per_page"].(json.Number); n.String() != strconv.Itoa(perPage) {
		t.Fatalf("GET %s: pagination %v, want per_page %d", path, pg, perPage)
	}
}

// A confirmation that times out and whose settlement the database then refuses: the answer still
// names the record the claim left held, with the outcome unknown.
func TestTimeoutWhoseSettlementFailsNamesTheRecord(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		faults := &storagetest.Faults{}
		env := newTestEnv(t, tg, withFaults(faults)) // CREDITSYSTEM_TIMEOUT=1
		id := env.autorizar()
		env.cs.Script(consumption.UpstreamGrabarConsumo, creditsystemtest.Hang())
		faults.Fail(`(?s)UPDATE "consumos".*"resultado_desconocido"`, -1)
		r := env.consumo("confirmar", confirmarBody(id, "F-SETTLE-FAULT"))
		faults.Clear()
		if faults.Hits() == 0 {
			t.Fatal("the fault never fired")
		}
		expectError(t, r, http.StatusGatewayTimeout)
		var held heldAnswer
		if err := json.Unmarshal(r.Body, &held); err != nil {
			t.Fatal(err)
		}
		if held.AutorizacionID != id || held.NumeroOperacion == "" || held.OperacionEnCurso == nil ||
			*held.OperacionEnCurso != consumption.UpstreamGrabarConsumo || !held.ResultadoDesconocido {
			t.Fatalf("504 after a timeout whose settlement failed: %s; want the held record's ids and resultado_desconocido true", r.Body)
		}
		// The record stays held: nothing else reaches the creditsystem for it.
		expectError(t, env.consumo("confirmar", confirmarBody(id, "F-SETTLE-FAULT")), http.StatusConflict)
		if n := env.cs.Calls(consumption.UpstreamGrabarConsumo); n != 1 {
			t.Fatalf("GrabarConsumo reached the creditsystem %d times, want 1", n)
		}
	})
}
