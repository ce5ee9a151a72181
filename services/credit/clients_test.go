package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/credit/clients"
	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

const clientsPath = "/api/v1/credigestion/clients"

func clientKeysOf(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func expectClientKeys(t testing.TB, what string, v any, want ...string) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s is %T (%v), want an object", what, v, v)
	}
	slices.Sort(want)
	if got := clientKeysOf(m); !slices.Equal(got, want) {
		t.Fatalf("%s keys\n got %v\nwant %v", what, got, want)
	}
	return m
}

func clientAnswer(t testing.TB, r response, status int) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	return r.JSON(t)
}

// clientRecordKeys are the fields of the client record (credit-service.md, "Client record").
var clientRecordKeys = []string{"id", "codigo_cliente", "codigo_empresa", "nombre_cliente", "identificacion", "email",
	"telefono_1", "telefono_2", "direccion_1", "codigo_vendedor", "termino_pagos", "limite_credito_1", "limite_credito_2",
	"codigo_sucursal", "localizacion", "lista_precios", "nivel_riesgo", "extra_fields", "erp_synced", "erp_response",
	"erp_synced_at", "source_system", "created_at", "updated_at"}

var localRecordKeys = []string{"id", "codigo_cliente", "codigo_empresa", "identificacion", "erp_synced", "source_system", "created_at", "updated_at"}

var erpClientKeys = []string{"codigo_cliente", "codigo_empresa", "nombre_cliente", "identificacion", "telefono_1", "telefono_2", "direccion_1", "inactivo"}

func newClientBody(ident string) map[string]any {
	return map[string]any{"codigo_empresa": "000598", "nombre_cliente": "Cliente " + ident, "identificacion": ident}
}

// createClient creates a client through POST /clients with a user token and returns its record.
func (e *testEnv) createClient(body map[string]any) map[string]any {
	e.t.Helper()
	r := e.do("POST", clientsPath, body, e.userToken())
	m := clientAnswer(e.t, r, http.StatusCreated)
	return m["client"].(map[string]any)
}

func (e *testEnv) clientCount() int {
	e.t.Helper()
	n, err := e.target.DB.NewSelect().Table("clients").Count(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func TestClientsAccessMatrix(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		env.createClient(map[string]any{"codigo_empresa": "000598", "nombre_cliente": "Fijo", "identificacion": "0100000001", "codigo_cliente": "C-FIJO"})
		toSync := env.createClient(newClientBody("0100000002"))

		creds := []struct {
			name, header string
			kind         string // "key", "bearer" or "" (never accepted)
		}{
			{"ServiceKey", env.serviceKey(), "key"},
			{"Bearer", env.userToken(), "bearer"},
			{"none", "", ""},
			{"wrong ServiceKey", "ServiceKey not-the-key", ""},
			{"invalid Bearer", "Bearer not.a.token", ""},
			{"other scheme", "Basic dXNlcjpwYXNz", ""},
		}
		n := 0
		routes := []struct {
			name, method string
			path         func() string
			body         func() any
			key, bearer  bool
			okStatus     int
		}{
			{"POST /clients/exists", "POST", func() string { return clientsPath + "/exists" },
				func() any { return map[string]any{"codigo_empresa": "000598", "identificacion": "0100000001"} }, true, true, 200},
			{"POST /clients", "POST", func() string { return clientsPath },
				func() any { n++; return newClientBody(fmt.Sprintf("02%08d", n)) }, true, true, 201},
			{"POST /clients/from-creditsystem", "POST", func() string { return clientsPath + "/from-creditsystem" },
				func() any { n++; return newClientBody(fmt.Sprintf("03%08d", n)) }, true, false, 201},
			{"PUT /clients/:codigo", "PUT", func() string { return clientsPath + "/C-FIJO" },
				func() any { return map[string]any{"telefono_1": "0990000000"} }, true, true, 200},
			{"GET /clients", "GET", func() string { return clientsPath }, func() any { return nil }, false, true, 200},
			{"GET /clients/:codigo", "GET", func() string { return clientsPath + "/C-FIJO" }, func() any { return nil }, false, true, 200},
			{"POST /clients/:codigo/sync-erp", "POST", func() string { return clientsPath + "/" + toSync["id"].(string) + "/sync-erp" },
				func() any { return nil }, false, true, 200},
		}
		for _, rt := range routes {
			for _, cr := range creds {
				allowed := (cr.kind == "key" && rt.key) || (cr.kind == "bearer" && rt.bearer)
				t.Run(rt.name+"/"+cr.name, func(t *testing.T) {
					before := env.clientCount()
					r := env.do(rt.method, rt.path(), rt.body(), cr.header)
					if !allowed {
						expectError(t, r, http.StatusUnauthorized)
						if env.clientCount() != before {
							t.Fatal("a refused request stored a client")
						}
						return
					}
					if r.Status != rt.okStatus {
						t.Fatalf("status %d, want %d; body %s", r.Status, rt.okStatus, r.Body)
					}
				})
			}
		}
	})
}

func TestClientsSourceSystemFromCaller(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		r := env.do("POST", clientsPath, newClientBody("0200000001"), env.serviceKey())
		if got := clientAnswer(t, r, 201)["client"].(map[string]any)["source_system"]; got != "CREDITSYSTEM" {
			t.Fatalf("source_system with ServiceKey %v, want CREDITSYSTEM", got)
		}
		body := newClientBody("0200000002")
		body["codigo_cliente"] = "C-SRC"
		r = env.do("POST", clientsPath, body, env.userToken())
		if got := clientAnswer(t, r, 201)["client"].(map[string]any)["source_system"]; got != "dashboard" {
			t.Fatalf("source_system with Bearer %v, want dashboard", got)
		}
		r = env.do("PUT", clientsPath+"/C-SRC", map[string]any{"email": "a@example.com"}, env.serviceKey())
		if got := clientAnswer(t, r, 200)["client"].(map[string]any)["source_system"]; got != "CREDITSYSTEM" {
			t.Fatalf("source_system after a ServiceKey update %v, want CREDITSYSTEM", got)
		}
		r = env.do("POST", clientsPath+"/from-creditsystem", newClientBody("0200000003"), env.serviceKey())
		if got := clientAnswer(t, r, 201)["client"].(map[string]any)["source_system"]; got != "CREDITSYSTEM" {
			t.Fatalf("source_system of from-creditsystem %v, want CREDITSYSTEM", got)
		}
	})
}

func TestCreateClientAnswersTheFullRecord(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		r := env.do("POST", clientsPath, map[string]any{
			"codigo_empresa": "000598", "nombre_cliente": "Ana Pérez", "identificacion": "0102030405",
			"codigo_cliente": "C-ANA", "email": "ana@example.com", "telefono_1": "0991", "telefono_2": "0992",
			"direccion_1": "Av. Amazonas", "codigo_vendedor": "V1", "termino_pagos": "30D",
			"limite_credito_1": "1500.50", "limite_credito_2": "999999999999.99",
			"codigo_sucursal": "S1", "localizacion": "UIO", "lista_precios": "L1", "nivel_riesgo": "BAJO",
			"extra_fields": map[string]any{"valor_1": "10.25", "fecha_1": "2026-01-31", "booleano_1": 1, "texto_1": "nota"},
		}, env.userToken())
		m := clientAnswer(t, r, 201)
		expectClientKeys(t, "answer", m, "success", "operation", "client")
		if m["success"] != true || m["operation"] != "create" {
			t.Fatalf("success %v operation %v", m["success"], m["operation"])
		}
		c := expectClientKeys(t, "client", m["client"], clientRecordKeys...)
		if _, isString := c["id"].(string); !isString {
			t.Fatalf("id %#v, want a string", c["id"])
		}
		if c["limite_credito_1"] != json.Number("1500.50") || c["limite_credito_2"] != json.Number("999999999999.99") {
			t.Fatalf("limits %#v %#v, want JSON numbers", c["limite_credito_1"], c["limite_credito_2"])
		}
		if c["erp_synced"] != false || c["erp_response"] != nil || c["erp_synced_at"] != nil {
			t.Fatalf("new client: erp_synced %v erp_response %v erp_synced_at %v", c["erp_synced"], c["erp_response"], c["erp_synced_at"])
		}
		for _, k := range []string{"created_at", "updated_at"} {
			ts, err := time.Parse(time.RFC3339, c[k].(string))
			if err != nil || !strings.HasSuffix(c[k].(string), "Z") || time.Since(ts) > time.Minute {
				t.Fatalf("%s %v: want ISO 8601 UTC, now", k, c[k])
			}
		}
		extra := c["extra_fields"].(map[string]any)
		if extra["valor_1"] != json.Number("10.25") || extra["fecha_1"] != "2026-01-31" || extra["booleano_1"] != json.Number("1") {
			t.Fatalf("extra_fields %v", extra)
		}
		got := clientAnswer(t, env.do("GET", clientsPath+"/C-ANA", nil, env.userToken()), 200)
		expectClientKeys(t, "GET answer", got, "client")
		if fmt.Sprint(got["client"]) != fmt.Sprint(c) {
			t.Fatalf("GET\n %v\ndiffers from the create answer\n %v", got["client"], c)
		}
	})
}

// A lone surrogate escape in an extra field was stored as sent: PostgreSQL's jsonb refused it (500).
func TestExtraFieldStringsAreStoredAsDecoded(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		body := `{"codigo_empresa":"000598","nombre_cliente":"Ana","identificacion":"0102030406","codigo_cliente":"C-SUR",` +
			`"extra_fields":{"texto_1":"a\ud800b","alfanumerico_1":"\udc00","lista_datos_1":"\ud83d\ude00"}}`
		c := clientAnswer(t, env.do("POST", clientsPath, body, env.userToken()), 201)["client"].(map[string]any)
		want := map[string]any{"texto_1": "a\uFFFDb", "alfanumerico_1": "\uFFFD", "lista_datos_1": "\U0001F600"}
		for _, m := range []map[string]any{c, clientAnswer(t, env.do("GET", clientsPath+"/C-SUR", nil, env.userToken()), 200)["client"].(map[string]any)} {
			if got := m["extra_fields"].(map[string]any); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("extra_fields %q, want %q", got, want)
			}
		}
	})
}

func TestClientNotFound(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		for _, tc := range []struct{ name, method, path string }{
			{"GET", "GET", clientsPath + "/NOPE"},
			{"PUT", "PUT", clientsPath + "/NOPE"},
			{"sync-erp", "POST", clientsPath + "/NOPE/sync-erp"},
			{"unknown id", "GET", clientsPath + "/424242"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var body any
				if tc.method == "PUT" {
					body = map[string]any{"email": "x@example.com"}
				}
				m := expectError(t, env.do(tc.method, tc.path, body, env.userToken()), http.StatusNotFound)
				if !strings.Contains(fmt.Sprint(m["message"]), "codigo_cliente") {
					t.Fatalf("message %v does not name the codigo", m["message"])
				}
			})
		}
		// On PostgreSQL bun dropped the NUL, so K%001 answered client K1.
		env.createClient(map[string]any{"codigo_empresa": "000598", "nombre_cliente": "K", "identificacion": "0100000001", "codigo_cliente": "K1"})
		for _, path := range []string{clientsPath + "/K%001", clientsPath + "/K1%00", clientsPath + "?search=K%00"} {
			t.Run("NUL in "+path, func(t *testing.T) {
				expectError(t, env.do("GET", path, nil, env.userToken()), http.StatusBadRequest)
			})
		}
	})
}

func TestFromCreditSystemAnswers(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		path := clientsPath + "/from-creditsystem"
		body := map[string]any{"codigo_empresa": "000598", "nombre_cliente": "Ana", "identificacion": "0400000001", "telefono_1": "0991",
			"email": "ana@example.com", "extra_fields": map[string]any{"texto_1": "desde creditsystem"}}

		t.Run("201 CREATED", func(t *testing.T) {
			m := clientAnswer(t, env.do("POST", path, body, env.serviceKey()), http.StatusCreated)
			expectClientKeys(t, "answer", m, "success", "reason", "operation", "client", "erp_pre_check")
			if m["success"] != true || m["reason"] != "CREATED" || m["operation"] != "create" {
				t.Fatalf("answer %v", m)
			}
			c := expectClientKeys(t, "client", m["client"], "id", "codigo_cliente", "codigo_empresa", "nombre_cliente", "identificacion",
				"telefono_1", "erp_synced", "source_system", "created_at", "updated_at")
			if c["codigo_cliente"] != nil || c["erp_synced"] != false || c["source_system"] != "CREDITSYSTEM" || c["telefono_1"] != "0991" {
				t.Fatalf("client %v", c)
			}
			pre := expectClientKeys(t, "erp_pre_check", m["erp_pre_check"], "checked_at", "found")
			if pre["found"] != false {
				t.Fatalf("erp_pre_check %v", pre)
			}
			if _, err := time.Parse(time.RFC3339, pre["checked_at"].(string)); err != nil {
				t.Fatalf("checked_at %v: %v", pre["checked_at"], err)
			}
		})

		t.Run("409 EXISTS_LOCAL", func(t *testing.T) {
			before := env.clientCount()
			m := clientAnswer(t, env.do("POST", path, body, env.serviceKey()), http.StatusConflict)
			expectClientKeys(t, "answer", m, "success", "reason", "erp_client", "local_record", "erp_pre_check", "message", "hint")
			if m["success"] != false || m["reason"] != "EXISTS_LOCAL" || m["erp_client"] != nil {
				t.Fatalf("answer %v", m)
			}
			local := expectClientKeys(t, "local_record", m["local_record"], localRecordKeys...)
			if local["identificacion"] != "0400000001" || local["erp_synced"] != false || local["source_system"] != "CREDITSYSTEM" {
				t.Fatalf("local_record %v", local)
			}
			if pre := expectClientKeys(t, "erp_pre_check", m["erp_pre_check"], "checked_at", "found"); pre["found"] != false {
				t.Fatalf("erp_pre_check %v", pre)
			}
			if m["message"] == "" || m["hint"] == "" {
				t.Fatalf("message %q hint %q", m["message"], m["hint"])
			}
			if env.clientCount() != before {
				t.Fatal("a repeated request created a client")
			}
		})

		t.Run("409 EXISTS_IN_ERP", func(t *testing.T) {
			in := map[string]any{"codigo_empresa": "000598", "nombre_cliente": "Otro", "identificacion": erptest.IdentificacionExisting}
			before := env.clientCount()
			m := clientAnswer(t, env.do("POST", path, in, env.serviceKey()), http.StatusConflict)
			expectClientKeys(t, "answer", m, "success", "reason", "erp_client", "local_record", "erp_pre_check", "message", "hint")
			if m["success"] != false || m["reason"] != "EXISTS_IN_ERP" || m["local_record"] != nil {
				t.Fatalf("answer %v", m)
			}
			ec := expectClientKeys(t, "erp_client", m["erp_client"], erpClientKeys...)
			if ec["codigo_cliente"] != erptest.CodigoClienteExisting || ec["identificacion"] != erptest.IdentificacionExisting || ec["inactivo"] != false {
				t.Fatalf("erp_client %v", ec)
			}
			if pre := expectClientKeys(t, "erp_pre_check", m["erp_pre_check"], "checked_at", "found"); pre["found"] != true {
				t.Fatalf("erp_pre_check %v", pre)
			}
			if env.clientCount() != before {
				t.Fatal("EXISTS_IN_ERP created a client")
			}
		})

		t.Run("nombre_cliente ERROR_API: 502 from the pre-check, nothing stored", func(t *testing.T) {
			in := map[string]any{"codigo_empresa": "000598", "nombre_cliente": erptest.NombreClienteErrorAPI, "identificacion": "0400000008"}
			before := env.clientCount()
			m := expectError(t, env.do("POST", path, in, env.serviceKey()), http.StatusBadGateway)
			msg := expectClientKeys(t, "message", m["message"], "message", "upstreamMessage", "operation", "upstreamCode")
			if !strings.Contains(msg["upstreamMessage"].(string), "ERROR_API") {
				t.Fatalf("message %v", msg)
			}
			if env.clientCount() != before {
				t.Fatal("a pre-check refused by the ERP stored a client")
			}
		})

		t.Run("ERP rejects the lookup: 502, nothing stored", func(t *testing.T) {
			env.erp.Script(erp.OpLookupClient, erptest.BusinessError("consulta externa no disponible"))
			before := env.clientCount()
			m := expectError(t, env.do("POST", path, newClientBody("0400000009"), env.serviceKey()), http.StatusBadGateway)
			msg := expectClientKeys(t, "message", m["message"], "message", "upstreamMessage", "operation", "upstreamCode")
			if msg["upstreamMessage"] != "consulta externa no disponible" {
				t.Fatalf("message %v", msg)
			}
			if env.clientCount() != before {
				t.Fatal("a failed pre-check stored a client")
			}
		})

		t.Run("ERP drops the lookup: 502 with the upstream object, nothing stored", func(t *testing.T) {
			env.erp.Script(erp.OpLookupClient, erptest.Drop())
			before := env.clientCount()
			m := expectError(t, env.do("POST", path, newClientBody("0400000010"), env.serviceKey()), http.StatusBadGateway)
			msg := expectClientKeys(t, "message", m["message"], "message", "upstreamMessage", "operation", "upstreamCode")
			if msg["upstreamMessage"] != "ERP unavailable" || msg["operation"] != erp.OpLookupClient {
				t.Fatalf("message %v", msg)
			}
			if env.clientCount() != before {
				t.Fatal("a failed pre-check stored a client")
			}
		})

		t.Run("ERP lookup times out: 504", func(t *testing.T) {
			expectError(t, env.do("POST", path, newClientBody(erptest.IdentificacionTimeout), env.serviceKey()), http.StatusGatewayTimeout)
		})
	})
}

// lookupMeeting makes the local pre-check (the SELECT of clients by identificacion) and the ERP
// lookup wait for each other: each only sees the other when both run at the same time.
type lookupMeeting struct {
	identificacion        string
	local, remote         chan struct{}
	localOnce, remoteOnce sync.Once
	localSaw, remoteSaw   atomic.Bool
}

func (m *lookupMeeting) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	if strings.HasPrefix(e.Query, "SELECT") && strings.Contains(e.Query, `"clients"`) && strings.Contains(e.Query, m.identificacion) {
		m.localOnce.Do(func() {
			close(m.local)
			select {
			case <-m.remote:
				m.localSaw.Store(true)
			case <-time.After(2 * time.Second):
			}
		})
	}
	return ctx
}

func (m *lookupMeeting) AfterQuery(context.Context, *bun.QueryEvent) {}

func (m *lookupMeeting) onLookup(_ context.Context, _, identificacion string) {
	if identificacion != m.identificacion {
		return
	}
	m.remoteOnce.Do(func() {
		close(m.remote)
		select {
		case <-m.local:
			m.remoteSaw.Store(true)
		case <-time.After(2 * time.Second):
		}
	})
}

func TestFromCreditSystemPreChecksRunInParallel(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		meet := &lookupMeeting{identificacion: "0500000001", local: make(chan struct{}), remote: make(chan struct{})}
		env := newTestEnv(t, tg, withERP(erptest.OnLookup(meet.onLookup)))
		env.db.AddQueryHook(meet)
		clientAnswer(t, env.do("POST", clientsPath+"/from-creditsystem", newClientBody("0500000001"), env.serviceKey()), http.StatusCreated)
		if !meet.localSaw.Load() || !meet.remoteSaw.Load() {
			t.Fatalf("local pre-check saw the ERP lookup in flight: %v; ERP lookup saw the local pre-check in flight: %v; "+
				"want both (they must run in parallel)", meet.localSaw.Load(), meet.remoteSaw.Load())
		}
	})
}

func TestClientsExists(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		path := clientsPath + "/exists"
		local := env.createClient(map[string]any{"codigo_empresa": "000598", "nombre_cliente": "Local", "identificacion": erptest.IdentificacionExisting})
		cases := []struct {
			name       string
			ident      string
			wantExists bool
			wantLocal  bool
		}{
			{"in the ERP and locally", erptest.IdentificacionExisting, true, true},
			{"nowhere", "0600000001", false, false},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				m := clientAnswer(t, env.do("POST", path, map[string]any{"codigo_empresa": "000598", "identificacion": tc.ident}, env.serviceKey()), 200)
				expectClientKeys(t, "answer", m, "success", "exists", "source", "criteria", "client", "local_record")
				if m["success"] != true || m["exists"] != tc.wantExists || m["source"] != "ERP_CONSULTA_EXTERNA" {
					t.Fatalf("answer %v", m)
				}
				crit := expectClientKeys(t, "criteria", m["criteria"], "codigo_empresa", "identificacion")
				if crit["codigo_empresa"] != "000598" || crit["identificacion"] != tc.ident {
					t.Fatalf("criteria %v", crit)
				}
				if tc.wantExists {
					if c := expectClientKeys(t, "client", m["client"], erpClientKeys...); c["codigo_cliente"] != erptest.CodigoClienteExisting {
						t.Fatalf("client %v", c)
					}
				} else if m["client"] != nil {
					t.Fatalf("client %v, want null", m["client"])
				}
				if tc.wantLocal {
					if l := expectClientKeys(t, "local_record", m["local_record"], localRecordKeys...); l["id"] != local["id"] {
						t.Fatalf("local_record %v", l)
					}
				} else if m["local_record"] != nil {
					t.Fatalf("local_record %v, want null", m["local_record"])
				}
			})
		}
		t.Run("bad body", func(t *testing.T) {
			m := expectError(t, env.do("POST", path, map[string]any{"codigo_empresa": "   ", "identificacion": strings.Repeat("1", 51)}, env.serviceKey()), 400)
			if errs, _ := m["errors"].([]any); len(errs) != 2 {
				t.Fatalf("errors %v, want one per field", m["errors"])
			}
		})
		t.Run("wrong types: one entry per field", func(t *testing.T) {
			m := expectError(t, env.do("POST", path, `{"codigo_empresa":598,"identificacion":["0999999999"]}`, env.serviceKey()), 400)
			want := []any{"codigo_empresa must be a string", "identificacion must be a string"}
			if !slices.Equal(m["errors"].([]any), want) {
				t.Fatalf("errors %v, want %v", m["errors"], want)
			}
		})
		t.Run("ERP rejects: 502", func(t *testing.T) {
			env.erp.Script(erp.OpLookupClient, erptest.BusinessError("no"))
			expectError(t, env.do("POST", path, map[string]any{"codigo_empresa": "000598", "identificacion": "1"}, env.serviceKey()), http.StatusBadGateway)
		})
		t.Run("ERP times out: 504", func(t *testing.T) {
			expectError(t, env.do("POST", path, map[string]any{"codigo_empresa": "000598", "identificacion": erptest.IdentificacionTimeout}, env.serviceKey()), http.StatusGatewayTimeout)
		})
	})
}

func TestUpdateChangesOnlyWhatIsSent(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		body := newClientBody("0700000001")
		body["codigo_cliente"] = "C-UPD"
		body["email"] = "old@example.com"
		body["limite_credito_1"] = "100.00"
		body["extra_fields"] = map[string]any{"texto_1": "a", "valor_1": 1}
		before := env.createClient(body)
		m := clientAnswer(t, env.do("PUT", clientsPath+"/C-UPD", map[string]any{
			"nombre_cliente": "Nuevo Nombre", "telefono_2": "0992", "extra_fields": map[string]any{"valor_1": 2},
		}, env.userToken()), 200)
		expectClientKeys(t, "answer", m, "success", "operation", "client")
		if m["success"] != true || m["operation"] != "update" {
			t.Fatalf("answer %v", m)
		}
		after := expectClientKeys(t, "client", m["client"], clientRecordKeys...)
		for _, k := range clientRecordKeys {
			switch k {
			case "nombre_cliente", "telefono_2", "extra_fields", "updated_at", "source_system":
				continue
			}
			if fmt.Sprint(after[k]) != fmt.Sprint(before[k]) {
				t.Errorf("%s changed from %v to %v although it was not sent", k, before[k], after[k])
			}
		}
		if after["nombre_cliente"] != "Nuevo Nombre" || after["telefono_2"] != "0992" {
			t.Fatalf("sent fields not applied: %v", after)
		}
		if extra := after["extra_fields"].(map[string]any); extra["valor_1"] != json.Number("2") || extra["texto_1"] != "a" {
			t.Fatalf("extra_fields %v, want valor_1 replaced and texto_1 kept", extra)
		}
	})
}

func TestSyncERPCreateThenUpdate(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		body := newClientBody("0800000001")
		body["telefono_1"] = "0991"
		body["limite_credito_1"] = "2500.75"
		body["extra_fields"] = map[string]any{"valor_2": "3.5", "booleano_1": "1"}
		created := env.createClient(body)

		m := clientAnswer(t, env.do("POST", clientsPath+"/"+created["id"].(string)+"/sync-erp", nil, env.userToken()), 200)
		expectClientKeys(t, "answer", m, "success", "operation", "operacion", "client")
		if m["success"] != true || m["operation"] != "create" || m["operacion"] != json.Number("0") {
			t.Fatalf("first sync %v, want create / operacion 0", m)
		}
		c := expectClientKeys(t, "client", m["client"], clientRecordKeys...)
		if c["erp_synced"] != true || c["codigo_cliente"] != "C-0800000001" || c["erp_synced_at"] == nil {
			t.Fatalf("after the first sync %v", c)
		}
		if resp, ok := c["erp_response"].(map[string]any); !ok || resp["codigo_cliente"] != "C-0800000001" {
			t.Fatalf("erp_response %v, want the ERP's answer", c["erp_response"])
		}
		fields, ok := env.erp.Fields("000598", "0800000001")
		if !ok || string(fields["numero_telefono_1"]) != `"0991"` || string(fields["limite_credito_1"]) != "2500.75" ||
			string(fields["valor_2"]) != "3.5" || string(fields["booleano_1"]) != "1" {
			t.Fatalf("ERP holds %v", fields)
		}

		upd := clientAnswer(t, env.do("PUT", clientsPath+"/C-0800000001", map[string]any{"telefono_1": "0999"}, env.serviceKey()), 200)
		if upd["client"].(map[string]any)["erp_synced"] != false {
			t.Fatal("PUT must set erp_synced false")
		}
		got := clientAnswer(t, env.do("GET", clientsPath+"/C-0800000001", nil, env.userToken()), 200)
		if got["client"].(map[string]any)["erp_synced"] != false {
			t.Fatal("GET after PUT: erp_synced must be false")
		}

		m = clientAnswer(t, env.do("POST", clientsPath+"/C-0800000001/sync-erp", nil, env.userToken()), 200)
		if m["operation"] != "update" || m["operacion"] != json.Number("1") || m["client"].(map[string]any)["erp_synced"] != true {
			t.Fatalf("second sync %v, want update / operacion 1 and synced", m)
		}
		if ec, _ := env.erp.Client("000598", "0800000001"); ec.Telefono1 != "0999" {
			t.Fatalf("ERP telefono after the update sync %q", ec.Telefono1)
		}
		var ops []string
		for _, r := range env.erp.Requests(erp.OpSyncClient) {
			var p map[string]json.RawMessage
			_ = json.Unmarshal(r.Body, &p)
			ops = append(ops, string(p["operacion"]))
		}
		if !slices.Equal(ops, []string{"0", "1"}) {
			t.Fatalf("operacion sent %v, want [0 1]", ops)
		}
	})
}

func TestSyncERPFailuresMarkNothing(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		cases := []struct {
			name    string
			body    map[string]any
			status  int
			message func(t *testing.T, m map[string]any)
			fault   *erptest.Reaction // scripted on the sync call, when set
		}{
			{"error_api is 502 with the upstream message", map[string]any{"codigo_empresa": "000598", "nombre_cliente": erptest.NombreClienteErrorAPI, "identificacion": "0900000001"},
				http.StatusBadGateway, func(t *testing.T, m map[string]any) {
					msg := expectClientKeys(t, "message", m["message"], "message", "upstreamMessage", "operation", "upstreamCode")
					if msg["operation"] != "create" || !strings.Contains(msg["upstreamMessage"].(string), "ERROR_API") {
						t.Fatalf("message %v", msg)
					}
				}, nil},
			{"timeout is 504", newClientBody(erptest.IdentificacionTimeout), http.StatusGatewayTimeout, func(t *testing.T, m map[string]any) {
				if !strings.Contains(fmt.Sprint(m["message"]), "create") {
					t.Fatalf("message %v does not name the operation", m["message"])
				}
			}, nil},
			// The design's 502 body is {message, upstreamMessage, operation, upstreamCode} for
			// every upstream failure; without an upstream text the service says so generically.
			{"dropped connection is 502 with the upstream object", newClientBody("0900000002"), http.StatusBadGateway, func(t *testing.T, m map[string]any) {
				msg := expectClientKeys(t, "message", m["message"], "message", "upstreamMessage", "operation", "upstreamCode")
				if msg["operation"] != "create" || msg["upstreamMessage"] != "ERP unavailable" || msg["message"] == "" {
					t.Fatalf("message %v", msg)
				}
			}, func() *erptest.Reaction { r := erptest.Drop(); return &r }()},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				c := env.createClient(tc.body)
				path := clientsPath + "/" + c["id"].(string)
				if tc.fault != nil {
					env.erp.Script(erp.OpSyncClient, *tc.fault)
				}
				tc.message(t, expectError(t, env.do("POST", path+"/sync-erp", nil, env.userToken()), tc.status))
				after := clientAnswer(t, env.do("GET", path, nil, env.userToken()), 200)["client"].(map[string]any)
				if after["erp_synced"] != false || after["erp_synced_at"] != nil || after["erp_response"] != nil || after["codigo_cliente"] != nil {
					t.Fatalf("a failed sync recorded something: %v", after)
				}
			})
		}
	})
}

func TestConcurrentIdenticalCreates(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		for _, ep := range []struct {
			name, path, auth, ident string
		}{
			{"POST /clients", clientsPath, env.userToken(), "1000000001"},
			{"POST /clients/from-creditsystem", clientsPath + "/from-creditsystem", env.serviceKey(), "1000000002"},
		} {
			t.Run(ep.name, func(t *testing.T) {
				const n = 20
				statuses := make([]int, n)
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						statuses[i] = env.do("POST", ep.path, newClientBody(ep.ident), ep.auth).Status
					}()
				}
				close(start)
				wg.Wait()
				created, conflicts := 0, 0
				for _, s := range statuses {
					switch s {
					case http.StatusCreated:
						created++
					case http.StatusConflict:
						conflicts++
					}
				}
				if created != 1 || conflicts != n-1 {
					t.Fatalf("statuses %v: %d created and %d conflicts, want 1 and %d", statuses, created, conflicts, n-1)
				}
				page := clientAnswer(t, env.do("GET", clientsPath+"?search="+ep.ident, nil, env.userToken()), 200)
				if total := page["pagination"].(map[string]any)["total_count"]; total != json.Number("1") {
					t.Fatalf("stored %v clients, want 1", total)
				}
			})
		}
	})
}

func TestClientsListPaginationAndSearch(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		store := clients.NewStore(tg.DB)
		for i := 1; i <= 45; i++ {
			c := &clients.Client{CodigoEmpresa: "000598", Identificacion: fmt.Sprintf("11%08d", i), NombreCliente: fmt.Sprintf("Cliente %02d", i), SourceSystem: "dashboard"}
			if i == 7 {
				c.NombreCliente = "María Ñusta"
			}
			if i%3 == 0 {
				codigo := fmt.Sprintf("COD-%02d", i)
				c.CodigoCliente = &codigo
			}
			if err := store.Insert(t.Context(), c); err != nil {
				t.Fatal(err)
			}
		}
		cases := []struct {
			name                    string
			query                   string
			total, pages, page, per int
			n                       int
			first                   string
		}{
			{"defaults", "", 45, 3, 1, 20, 20, "Cliente 45"},
			{"last page", "?page=3", 45, 3, 3, 20, 5, "Cliente 05"},
			{"past the end", "?page=9", 45, 3, 9, 20, 0, ""},
			{"far past the end", "?page=10000000000&per_page=2", 45, 23, 10000000000, 2, 0, ""},
			{"page beyond int64 is past the end", "?page=99999999999999999999&per_page=100", 45, 1, math.MaxInt, 100, 0, ""},
			{"negative page is the first", "?page=-99999999999999999999&per_page=100", 45, 1, 1, 100, 45, "Cliente 45"},
			{"huge per_page is clamped", "?per_page=99999999999999999999", 45, 1, 1, 100, 45, "Cliente 45"},
			{"per_page above 100 is clamped", "?per_page=1000", 45, 1, 1, 100, 45, "Cliente 45"},
			{"per_page 0 is clamped to 1", "?per_page=0", 45, 45, 1, 1, 1, "Cliente 45"},
			{"per_page 10 page 5", "?per_page=10&page=5", 45, 5, 5, 10, 5, "Cliente 05"},
			{"search by nombre, any case", "?search=MARÍA", 1, 1, 1, 20, 1, "María Ñusta"},
			{"search by identificacion", "?search=1100000012", 1, 1, 1, 20, 1, "Cliente 12"},
			{"search by codigo_cliente", "?search=cod-4", 2, 1, 1, 20, 2, "Cliente 45"},
			{"search with paging", "?search=cliente&per_page=40&page=2", 44, 2, 2, 40, 4, "Cliente 04"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				m := clientAnswer(t, env.do("GET", clientsPath+tc.query, nil, env.userToken()), 200)
				expectClientKeys(t, "answer", m, "clients", "pagination")
				p := expectClientKeys(t, "pagination", m["pagination"], "total_count", "total_pages", "current_page", "per_page")
				want := map[string]int{"total_count": tc.total, "total_pages": tc.pages, "current_page": tc.page, "per_page": tc.per}
				for k, v := range want {
					if p[k] != json.Number(fmt.Sprint(v)) {
						t.Fatalf("pagination %v, want %v", p, want)
					}
				}
				list := m["clients"].([]any)
				if len(list) != tc.n {
					t.Fatalf("%d clients, want %d", len(list), tc.n)
				}
				if tc.n > 0 {
					first := expectClientKeys(t, "clients[0]", list[0], clientRecordKeys...)
					if first["nombre_cliente"] != tc.first {
						t.Fatalf("first %v, want %s", first["nombre_cliente"], tc.first)
					}
				}
			})
		}
		t.Run("page not a number", func(t *testing.T) {
			m := expectError(t, env.do("GET", clientsPath+"?page=abc&per_page=x", nil, env.userToken()), 400)
			if errs, _ := m["errors"].([]any); len(errs) != 2 {
				t.Fatalf("errors %v, want one per parameter", m["errors"])
			}
		})
	})
}

func TestClientsBadInput(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		valid := func(extra map[string]any) map[string]any {
			b := newClientBody("1200000001")
			for k, v := range extra {
				b[k] = v
			}
			return b
		}
		cases := []struct {
			name   string
			body   any
			errors []string
			// from-creditsystem takes no limits (ignored there, like every field it does not list)
			clientsOnly bool
		}{
			{"invalid email", valid(map[string]any{"email": "no-es-un-correo"}), []string{"email must be a valid e-mail address"}, false},
			{"limit not a number", valid(map[string]any{"limite_credito_1": "mil"}), []string{"limite_credito_1 must be a numeric string"}, true},
			{"string over its maximum", valid(map[string]any{"nombre_cliente": strings.Repeat("x", 256)}), []string{"nombre_cliente must be at most 255 characters long"}, false},
			{"unknown extra field", valid(map[string]any{"extra_fields": map[string]any{"color": "rojo"}}), []string{"extra_fields.color is not a known extra field"}, false},
			{"missing required fields", map[string]any{}, []string{"codigo_empresa is required", "nombre_cliente is required", "identificacion is required"}, false},
			{"one entry per problem", map[string]any{"codigo_empresa": "000598", "identificacion": "1", "email": "x", "telefono_1": strings.Repeat("9", 51),
				"extra_fields": map[string]any{"fecha_1": "31/01/2026", "booleano_1": 2, "valor_1": "n/a"}},
				[]string{"nombre_cliente is required", "email must be a valid e-mail address", "telefono_1 must be at most 50 characters long",
					"extra_fields.booleano_1 must be 0, 1, true or false", "extra_fields.fecha_1 must be a date in yyyy-mm-dd format",
					"extra_fields.valor_1 must be numeric"}, false},
			{"limits: one entry each", valid(map[string]any{"limite_credito_1": "1.005", "limite_credito_2": true, "termino_pagos": strings.Repeat("t", 101)}),
				[]string{"termino_pagos must be at most 100 characters long", "limite_credito_1 must have at most 2 decimal places",
					"limite_credito_2 must be a numeric string"}, true},
			{"malformed JSON", `{"codigo_empresa":`, []string{"request body is not valid JSON"}, false},
			{"not an object", `[1,2]`, []string{"request body must be a JSON object"}, false},
			// "1e999999999" expanded to a billion digits on its way to the ERP; 1e200000 is out of
			// PostgreSQL's numeric range in jsonb (a 500).
			{"valor with an exponent", `{"codigo_empresa":"000598","nombre_cliente":"Ana","identificacion":"1200000001","extra_fields":{"valor_1":"1e999999999","valor_2":1e200000}}`,
				[]string{"extra_fields.valor_1 must be a number in plain decimal notation (no exponent) of at most 38 digits",
					"extra_fields.valor_2 must be a number in plain decimal notation (no exponent) of at most 38 digits"}, false},
			// PostgreSQL refuses NUL in jsonb (a 500) and bun drops it from text (stored != answered).
			{"NUL in an extra field", `{"codigo_empresa":"000598","nombre_cliente":"Ana","identificacion":"1200000001","extra_fields":{"texto_1":"a\u0000b"}}`,
				[]string{`request body must not contain the NUL character (\u0000)`}, false},
			{"NUL in a string field", `{"codigo_empresa":"000598","nombre_cliente":"A\u0000na","identificacion":"1200000001"}`,
				[]string{`request body must not contain the NUL character (\u0000)`}, false},
		}
		for _, ep := range []struct{ name, method, path, auth string }{
			{"POST /clients", "POST", clientsPath, env.userToken()},
			{"POST /clients/from-creditsystem", "POST", clientsPath + "/from-creditsystem", env.serviceKey()},
		} {
			for _, tc := range cases {
				if tc.clientsOnly && ep.path != clientsPath {
					continue
				}
				t.Run(ep.name+"/"+tc.name, func(t *testing.T) {
					m := expectError(t, env.do(ep.method, ep.path, tc.body, ep.auth), http.StatusBadRequest)
					var got []string
					for _, e := range m["errors"].([]any) {
						got = append(got, e.(string))
					}
					if !slices.Equal(got, tc.errors) {
						t.Fatalf("errors\n got %q\nwant %q", got, tc.errors)
					}
					if env.clientCount() != 0 {
						t.Fatal("a rejected request stored a client")
					}
				})
			}
		}
		t.Run("PUT with bad fields changes nothing", func(t *testing.T) {
			c := env.createClient(map[string]any{"codigo_empresa": "000598", "nombre_cliente": "Ana", "identificacion": "1200000002", "codigo_cliente": "C-BAD"})
			m := expectError(t, env.do("PUT", clientsPath+"/C-BAD", map[string]any{"nombre_cliente": "B", "email": "x", "extra_fields": map[string]any{"zzz": 1}}, env.userToken()), 400)
			if errs := m["errors"].([]any); len(errs) != 2 {
				t.Fatalf("errors %v, want 2", errs)
			}
			after := clientAnswer(t, env.do("GET", clientsPath+"/C-BAD", nil, env.userToken()), 200)["client"].(map[string]any)
			if after["nombre_cliente"] != "Ana" || after["updated_at"] != c["updated_at"] {
				t.Fatalf("a rejected update changed the client: %v", after)
			}
		})
		t.Run("PUT with a body that is not an object changes nothing", func(t *testing.T) {
			c := env.createClient(map[string]any{"codigo_empresa": "000598", "nombre_cliente": "Ana", "identificacion": "1200000005", "codigo_cliente": "C-NULL"})
			for _, body := range []string{`null`, ` null `, `[1]`, `"x"`} {
				m := expectError(t, env.do("PUT", clientsPath+"/C-NULL", body, env.serviceKey()), http.StatusBadRequest)
				if errs, _ := m["errors"].([]any); len(errs) != 1 || errs[0] != "request body must be a JSON object" {
					t.Fatalf("PUT %s: errors %v", body, m["errors"])
				}
			}
			after := clientAnswer(t, env.do("GET", clientsPath+"/C-NULL", nil, env.userToken()), 200)["client"].(map[string]any)
			if after["updated_at"] != c["updated_at"] || after["source_system"] != "dashboard" {
				t.Fatalf("a rejected update changed the client: %v", after)
			}
		})
		t.Run("a body that is not JSON is 400 whatever its Content-Type", func(t *testing.T) {
			m := expectError(t, env.do("POST", clientsPath, "codigo_empresa=1", env.userToken(), "Content-Type", "application/x-www-form-urlencoded"), http.StatusBadRequest)
			if errs, _ := m["errors"].([]any); len(errs) != 1 || errs[0] != "request body is not valid JSON" {
				t.Fatalf("errors %v", m["errors"])
			}
		})
		t.Run("a JSON body under another Content-Type is read as JSON", func(t *testing.T) {
			body, _ := json.Marshal(newClientBody("1200000004"))
			r := env.do("POST", clientsPath, body, env.userToken(), "Content-Type", "text/plain")
			if r.Status != http.StatusCreated {
				t.Fatalf("status %d, want 201: %s", r.Status, r.Body)
			}
		})
		t.Run("duplicate is 409", func(t *testing.T) {
			body := newClientBody("1200000003")
			env.createClient(body)
			expectError(t, env.do("POST", clientsPath, body, env.serviceKey()), http.StatusConflict)
		})
	})
}

// TestExtraListasAndBooleanosStored: lista_datos_n takes an array of strings as well as one
// string, booleano_n takes JSON true/false as well as 0/1; both are stored (booleano_n as 1 or
// 0), answered as stored and synced to the ERP.
func TestExtraListasAndBooleanosStored(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		env := newTestEnv(t, tg)
		cases := []struct {
			name  string
			extra map[string]any
			want  string // extra_fields as answered and stored
		}{
			{"lista array and booleano true", map[string]any{"lista_datos_1": []string{"ROJO", "AZUL"}, "booleano_1": true},
				`{"booleano_1":1,"lista_datos_1":["ROJO","AZUL"]}`},
			{"lista one value and booleano false", map[string]any{"lista_datos_2": "VERDE", "booleano_2": false},
				`{"booleano_2":0,"lista_datos_2":"VERDE"}`},
			{"empty lista and booleano string 1", map[string]any{"lista_datos_3": []string{}, "booleano_3": "1"},
				`{"booleano_3":1,"lista_datos_3":[]}`},
		}
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				body := newClientBody(fmt.Sprintf("13000000%02d", i))
				body["extra_fields"] = tc.extra
				created := env.createClient(body)
				id := created["id"].(string)
				var stored struct {
					Extra clients.ExtraFields `bun:"extra_fields"`
				}
				if err := env.target.DB.NewSelect().Table("clients").Column("extra_fields").Where("id = ?", id).Scan(t.Context(), &stored.Extra); err != nil {
					t.Fatal(err)
				}
				if got, _ := json.Marshal(stored.Extra); string(got) != tc.want {
					t.Fatalf("stored extra_fields %s, want %s", got, tc.want)
				}
				answered, _ := json.Marshal(created["extra_fields"])
				if string(answered) != tc.want {
					t.Fatalf("answered extra_fields %s, want %s", answered, tc.want)
				}
				clientAnswer(t, env.do("POST", clientsPath+"/"+id+"/sync-erp", nil, env.userToken()), 200)
			})
		}
	})
}
