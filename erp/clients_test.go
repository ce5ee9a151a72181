package erp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/erp/erptest/fixtures"
	"github.com/platform/integrations/upstream"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden compares got with testdata/golden/name, rewriting the file under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("request body differs from %s\ngot:  %s\nwant: %s", path, got, want)
	}
}

func newClient(t *testing.T, srv *erptest.Server, timeout time.Duration) *erp.Client {
	t.Helper()
	c, err := erp.New(srv.Config(timeout))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func dec(t *testing.T, s string) *decimal.Decimal {
	t.Helper()
	d, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatal(err)
	}
	return &d
}

// fullPayload uses every field, so the golden file shows the whole mapping.
func fullPayload(t *testing.T) erp.ClientPayload {
	return erp.ClientPayload{
		CodigoEmpresa:  "000598",
		NombreCliente:  "Pérez & Hijos <Cía>",
		Identificacion: "0102030405001",
		Email:          "compras@perez.ec",
		Telefono1:      "0991234567",
		Telefono2:      "022345678",
		Direccion1:     "Av. 10 de Agosto N24-10",
		CodigoVendedor: "V-07",
		TerminoPagos:   "30 DIAS",
		LimiteCredito1: dec(t, "1500.50"),
		LimiteCredito2: dec(t, "12345678901234567.89"),
		CodigoSucursal: "UIO-01",
		Localizacion:   "PICHINCHA",
		ListaPrecios:   "MAYORISTA",
		NivelRiesgo:    "BAJO",
		ExtraFields: json.RawMessage(`{"valor_1": 0.1000000000000000055511151231257827, "fecha_1": "2024-02-29",
			"booleano_1": 1, "lista_datos_1": ["A","B"], "alfanumerico_1": "X-1", "texto_1": "línea"}`),
	}
}

func TestLookupClientRequestGolden(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	if _, err := newClient(t, srv, 2*time.Second).LookupClient(t.Context(), "000598", "0102030405"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests(erp.OpLookupClient)
	if len(reqs) != 1 {
		t.Fatalf("fake saw %d lookups, want 1", len(reqs))
	}
	if ct := reqs[0].Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	golden(t, "lookup_request.json", reqs[0].Body)
}

func TestSyncClientRequestGolden(t *testing.T) {
	cases := []struct {
		name string
		op   erp.Operation
		p    func(*testing.T) erp.ClientPayload
	}{
		{"sync_create_request.json", erp.OperationCreate, fullPayload},
		{"sync_update_request.json", erp.OperationUpdate, func(t *testing.T) erp.ClientPayload {
			p := fullPayload(t)
			p.CodigoCliente = "C-0102030405001"
			return p
		}},
		{"sync_create_minimal_request.json", erp.OperationCreate, func(*testing.T) erp.ClientPayload {
			return erp.ClientPayload{CodigoEmpresa: "000598", NombreCliente: "ANA", Identificacion: "0911111111"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := erptest.NewServer()
			t.Cleanup(srv.Close)
			p := tc.p(t)
			if tc.op == erp.OperationUpdate {
				create := p
				create.CodigoCliente = ""
				if _, err := newClient(t, srv, 2*time.Second).SyncClient(t.Context(), erp.OperationCreate, create); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := newClient(t, srv, 2*time.Second).SyncClient(t.Context(), tc.op, p); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests(erp.OpSyncClient)
			golden(t, tc.name, reqs[len(reqs)-1].Body)
		})
	}
}

func TestSyncClientMapping(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	c := newClient(t, srv, 2*time.Second)
	if _, err := c.SyncClient(t.Context(), erp.OperationCreate, fullPayload(t)); err != nil {
		t.Fatal(err)
	}
	var sent map[string]json.RawMessage
	if err := json.Unmarshal(srv.Requests(erp.OpSyncClient)[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		// renamed by the specification
		"numero_telefono_1": `"0991234567"`,
		"numero_telefono_2": `"022345678"`,
		// identical names
		"codigo_empresa": `"000598"`, "identificacion": `"0102030405001"`, "email": `"compras@perez.ec"`,
		"nombre_cliente": `"Pérez & Hijos <Cía>"`, "direccion_1": `"Av. 10 de Agosto N24-10"`,
		"codigo_vendedor": `"V-07"`, "termino_pagos": `"30 DIAS"`, "codigo_sucursal": `"UIO-01"`,
		"localizacion": `"PICHINCHA"`, "lista_precios": `"MAYORISTA"`, "nivel_riesgo": `"BAJO"`,
		// assigned by the service
		"operacion": `0`,
		// exact decimal numbers, not strings and not float64-rounded
		"limite_credito_1": `1500.50`,
		"limite_credito_2": `12345678901234567.89`,
		// extra_fields at the top level, values unchanged
		"valor_1":        `0.1000000000000000055511151231257827`,
		"fecha_1":        `"2024-02-29"`,
		"booleano_1":     `1`,
		"lista_datos_1":  `["A","B"]`,
		"alfanumerico_1": `"X-1"`,
		"texto_1":        `"línea"`,
	}
	for k, v := range want {
		if got := string(sent[k]); got != v {
			t.Errorf("%s = %s, want %s", k, got, v)
		}
	}
	for k := range sent {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected member %s = %s", k, sent[k])
		}
	}
	for _, absent := range []string{"telefono_1", "telefono_2", "extra_fields", "codigo_cliente"} {
		if _, ok := sent[absent]; ok {
			t.Errorf("payload carries %s", absent)
		}
	}
}

// TestInvalidRequestIsRefusedBeforeAnyCall: arguments that cannot make a valid request give an
// error wrapping ErrInvalidRequest, a plain sentinel rather than an upstream.Error, naming the
// operation, and nothing reaches the ERP.
func TestInvalidRequestIsRefusedBeforeAnyCall(t *testing.T) {
	valid := erp.ClientPayload{CodigoEmpresa: "000598", NombreCliente: "ANA", Identificacion: "0911111111"}
	with := func(f func(*erp.ClientPayload)) erp.ClientPayload { p := valid; f(&p); return p }
	sync := func(op erp.Operation, p erp.ClientPayload) func(context.Context, *erp.Client) error {
		return func(ctx context.Context, c *erp.Client) error { _, err := c.SyncClient(ctx, op, p); return err }
	}
	lookup := func(empresa, identificacion string) func(context.Context, *erp.Client) error {
		return func(ctx context.Context, c *erp.Client) error {
			_, err := c.LookupClient(ctx, empresa, identificacion)
			return err
		}
	}
	cases := []struct {
		name string
		op   string
		call func(context.Context, *erp.Client) error
		want string
	}{
		{"lookup without codigo_empresa", erp.OpLookupClient, lookup("", "0911111111"), "codigo_empresa and identificacion are required"},
		{"lookup with a blank identificacion", erp.OpLookupClient, lookup("000598", " \t"), "codigo_empresa and identificacion are required"},
		{"sync operacion 2", erp.OpSyncClient, sync(erp.Operation(2), valid), "operacion must be 0 (create) or 1 (update)"},
		{"sync missing every required field", erp.OpSyncClient, sync(erp.OperationCreate, erp.ClientPayload{Email: "a@b.ec"}), "codigo_empresa, identificacion, nombre_cliente required"},
		{"sync missing codigo_empresa", erp.OpSyncClient, sync(erp.OperationCreate, with(func(p *erp.ClientPayload) { p.CodigoEmpresa = "" })), "codigo_empresa required"},
		{"sync missing identificacion", erp.OpSyncClient, sync(erp.OperationUpdate, with(func(p *erp.ClientPayload) { p.Identificacion = "" })), "identificacion required"},
		{"sync blank nombre", erp.OpSyncClient, sync(erp.OperationUpdate, with(func(p *erp.ClientPayload) { p.NombreCliente = "  " })), "nombre_cliente required"},
		{"extra_fields not an object", erp.OpSyncClient, sync(erp.OperationCreate, with(func(p *erp.ClientPayload) { p.ExtraFields = json.RawMessage(`[1]`) })), "extra_fields must be a JSON object"},
		{"extra_fields overrides a field", erp.OpSyncClient, sync(erp.OperationCreate, with(func(p *erp.ClientPayload) { p.ExtraFields = json.RawMessage(`{"nombre_cliente":"X"}`) })), `"nombre_cliente" collides`},
		{"extra_fields sets operacion", erp.OpSyncClient, sync(erp.OperationCreate, with(func(p *erp.ClientPayload) { p.ExtraFields = json.RawMessage(`{"operacion":1}`) })), `"operacion" collides`},
		{"extra_fields uses a public phone name", erp.OpSyncClient, sync(erp.OperationCreate, with(func(p *erp.ClientPayload) { p.ExtraFields = json.RawMessage(`{"telefono_1":"1"}`) })), `"telefono_1" collides`},
	}
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	c := newClient(t, srv, 2*time.Second)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call(t.Context(), c)
			if !errors.Is(err, erp.ErrInvalidRequest) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrInvalidRequest containing %q", err, tc.want)
			}
			if erp.IsTransport(err) || erp.IsTimeout(err) || upstream.KindOf(err) != 0 {
				t.Errorf("%v looks like a failed call", err)
			}
			if !strings.HasPrefix(err.Error(), "erp: "+tc.op+": ") {
				t.Errorf("error does not name the operation %s: %v", tc.op, err)
			}
		})
	}
	if n := srv.Calls(erp.OpSyncClient) + srv.Calls(erp.OpLookupClient); n != 0 {
		t.Errorf("bad input reached the ERP %d times", n)
	}
}

func TestExtraFieldsNullOrEmptyAreNotSent(t *testing.T) {
	for _, extra := range []string{"", "null", " ", "{}"} {
		srv := erptest.NewServer()
		c := newClient(t, srv, 2*time.Second)
		p := erp.ClientPayload{CodigoEmpresa: "1", NombreCliente: "N", Identificacion: "I", ExtraFields: json.RawMessage(extra)}
		if _, err := c.SyncClient(t.Context(), erp.OperationCreate, p); err != nil {
			t.Errorf("extra_fields %q: %v", extra, err)
		}
		want := `{"codigo_empresa":"1","identificacion":"I","nombre_cliente":"N","operacion":0}`
		if got := string(srv.Requests(erp.OpSyncClient)[0].Body); got != want {
			t.Errorf("extra_fields %q: sent %s, want %s", extra, got, want)
		}
		srv.Close()
	}
}

func TestLookupClient(t *testing.T) {
	srv := erptest.NewServer(erptest.WithClients(erp.ClientRecord{
		CodigoCliente: "C-77", CodigoEmpresa: "000598", NombreCliente: "INACTIVO SA",
		Identificacion: "1790000000001", Telefono1: "021", Telefono2: "022", Direccion1: "Quito", Inactivo: true,
	}))
	t.Cleanup(srv.Close)
	c := newClient(t, srv, 2*time.Second)

	cases := []struct {
		name                          string
		codigoEmpresa, identificacion string
		want                          *erp.ClientRecord
	}{
		{"magic existing client", "000598", "0999999999", &erp.ClientRecord{
			CodigoCliente: "C-0999999999", CodigoEmpresa: "000598", NombreCliente: "CLIENTE EXISTENTE ERP",
			Identificacion: "0999999999", Telefono1: "0990000001", Direccion1: "AV. AMAZONAS N1-23, QUITO",
		}},
		{"magic existing client under another company", "000001", "0999999999", &erp.ClientRecord{
			CodigoCliente: "C-0999999999", CodigoEmpresa: "000001", NombreCliente: "CLIENTE EXISTENTE ERP",
			Identificacion: "0999999999", Telefono1: "0990000001", Direccion1: "AV. AMAZONAS N1-23, QUITO",
		}},
		{"seeded inactive client, phones mapped back", "000598", "1790000000001", &erp.ClientRecord{
			CodigoCliente: "C-77", CodigoEmpresa: "000598", NombreCliente: "INACTIVO SA",
			Identificacion: "1790000000001", Telefono1: "021", Telefono2: "022", Direccion1: "Quito", Inactivo: true,
		}},
		{"same identificacion, other company", "000599", "1790000000001", nil},
		{"unknown", "000598", "0102030405", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.LookupClient(t.Context(), tc.codigoEmpresa, tc.identificacion)
			if err != nil {
				t.Fatal(err)
			}
			if res.Found != (tc.want != nil) {
				t.Fatalf("Found = %v, want %v", res.Found, tc.want != nil)
			}
			if tc.want == nil {
				if res.Client != nil {
					t.Errorf("Client = %+v, want nil", res.Client)
				}
			} else if res.Client == nil || *res.Client != *tc.want {
				t.Errorf("Client = %+v\nwant     %+v", res.Client, tc.want)
			}
			if !json.Valid(res.Raw) || !bytes.Contains(res.Raw, []byte(`"error_api":false`)) {
				t.Errorf("Raw = %s, want the ERP answer", res.Raw)
			}
		})
	}
}

// The client object of POST /clients/exists comes straight from ClientRecord's JSON.
func TestClientRecordJSONUsesPublicNames(t *testing.T) {
	b, err := json.Marshal(erp.ClientRecord{CodigoCliente: "C-1", CodigoEmpresa: "E", NombreCliente: "N",
		Identificacion: "I", Telefono1: "T1", Telefono2: "T2", Direccion1: "D", Inactivo: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"codigo_cliente":"C-1","codigo_empresa":"E","nombre_cliente":"N","identificacion":"I","telefono_1":"T1","telefono_2":"T2","direccion_1":"D","inactivo":true}`
	if string(b) != want {
		t.Errorf("JSON = %s\nwant   %s", b, want)
	}
}

func TestSyncCreateThenUpdate(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	c := newClient(t, srv, 2*time.Second)
	ctx := t.Context()

	p := erp.ClientPayload{CodigoEmpresa: "000598", NombreCliente: "MARIA PEREZ", Identificacion: "0102030405",
		Telefono1: "0991234567", LimiteCredito1: dec(t, "2500.00")}
	created, err := c.SyncClient(ctx, erp.OperationCreate, p)
	if err != nil {
		t.Fatal(err)
	}
	if created.CodigoCliente != "C-0102030405" {
		t.Errorf("assigned codigo_cliente = %q, want C-0102030405", created.CodigoCliente)
	}
	if want := fixtures.Fixture(fixtures.FixtureSyncCreated); !bytes.Equal(created.Raw, want) {
		t.Errorf("Raw = %s, want the answer as received %s", created.Raw, want)
	}
	if created.Message != "cliente creado" {
		t.Errorf("Message = %q", created.Message)
	}

	p.CodigoCliente = created.CodigoCliente
	p.NombreCliente = "MARIA PEREZ LOPEZ"
	p.Telefono2 = "022222222"
	updated, err := c.SyncClient(ctx, erp.OperationUpdate, p)
	if err != nil {
		t.Fatal(err)
	}
	if updated.CodigoCliente != "C-0102030405" {
		t.Errorf("update codigo_cliente = %q", updated.CodigoCliente)
	}

	res, err := c.LookupClient(ctx, "000598", "0102030405")
	if err != nil {
		t.Fatal(err)
	}
	want := erp.ClientRecord{CodigoCliente: "C-0102030405", CodigoEmpresa: "000598", NombreCliente: "MARIA PEREZ LOPEZ",
		Identificacion: "0102030405", Telefono1: "0991234567", Telefono2: "022222222"}
	if !res.Found || *res.Client != want {
		t.Errorf("after update the ERP has %+v, want %+v", res.Client, want)
	}
	fields, _ := srv.Fields("000598", "0102030405")
	if got := string(fields["limite_credito_1"]); got != "2500.00" {
		t.Errorf("ERP holds limite_credito_1 = %s, want the number 2500.00", got)
	}

	// Creating it again is the ERP's business rejection.
	p.CodigoCliente = ""
	_, err = c.SyncClient(ctx, erp.OperationCreate, p)
	var apiErr *erp.Error
	if !errors.As(err, &apiErr) || apiErr.HTTPStatus != http.StatusOK {
		t.Errorf("second create: %v, want an error_api rejection", err)
	}
}

func TestSyncUpdateWithoutCodigoInAnswerKeepsThePayloadCodigo(t *testing.T) {
	mt := mockERP(t, `{"error_api":false,"mensaje":"ok"}`)
	c := mockClient(t, mt)
	p := erp.ClientPayload{CodigoCliente: "C-9", CodigoEmpresa: "1", NombreCliente: "N", Identificacion: "I"}
	res, err := c.SyncClient(t.Context(), erp.OperationUpdate, p)
	if err != nil || res.CodigoCliente != "C-9" {
		t.Fatalf("SyncClient = %+v, %v; want codigo C-9", res, err)
	}
	if _, err := c.SyncClient(t.Context(), erp.OperationCreate, p); !errors.Is(err, erp.ErrUndecodable) {
		t.Errorf("create answered without codigo_cliente: %v, want ErrUndecodable", err)
	}
}

func TestLateSuccessIsATimeoutThatTheLookupResolves(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	srv.Script(erp.OpSyncClient, erptest.LateSuccess())
	c := newClient(t, srv, time.Second)
	p := erp.ClientPayload{CodigoEmpresa: "000598", NombreCliente: "LATE", Identificacion: "0200000000"}
	if _, err := c.SyncClient(t.Context(), erp.OperationCreate, p); !erp.IsTimeout(err) {
		t.Fatalf("SyncClient = %v, want a timeout", err)
	}
	res, err := c.LookupClient(t.Context(), "000598", "0200000000")
	if err != nil || !res.Found || res.Client.CodigoCliente != "C-0200000000" {
		t.Fatalf("lookup after the late success = %+v, %v; want the client created", res, err)
	}
}

func TestContextOfOutgoingRequests(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	rt := &recordingTransport{next: http.DefaultTransport}
	const timeout = 1500 * time.Millisecond
	c, err := erp.New(srv.Config(timeout), erp.WithHTTPClient(&http.Client{Transport: rt}))
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if _, err := c.LookupClient(t.Context(), "000598", "0999999999"); err != nil {
		t.Fatal(err)
	}
	p := erp.ClientPayload{CodigoEmpresa: "000598", NombreCliente: "A", Identificacion: "0300000000"}
	if _, err := c.SyncClient(t.Context(), erp.OperationCreate, p); err != nil {
		t.Fatal(err)
	}
	if _, err := c.HandOverPayment(t.Context(), samplePayment()); err != nil {
		t.Fatal(err)
	}
	after := time.Now()

	if len(rt.seen) != 3 || rt.seen[0].op != erp.OpLookupClient || rt.seen[1].op != erp.OpSyncClient || rt.seen[2].op != erp.OpHandOverPayment {
		t.Fatalf("operations seen by the RoundTripper = %+v, want LookupClient, SyncClient, HandOverPayment", rt.seen)
	}
	for _, s := range rt.seen {
		// Each call runs under Config.Timeout, not the 30 s default nor no deadline at all.
		if !s.hasDeadline || s.deadline.Before(before.Add(timeout)) || s.deadline.After(after.Add(timeout)) {
			t.Errorf("%s deadline = %v (set %v), want about now + %v", s.op, s.deadline, s.hasDeadline, timeout)
		}
	}
	if _, ok := erp.OperationFromContext(t.Context()); ok {
		t.Error("OperationFromContext reports an operation on a plain context")
	}
}

type seenRequest struct {
	op          string
	deadline    time.Time
	hasDeadline bool
}

type recordingTransport struct {
	next http.RoundTripper
	seen []seenRequest
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	op, _ := erp.OperationFromContext(req.Context())
	d, ok := req.Context().Deadline()
	r.seen = append(r.seen, seenRequest{op, d, ok})
	return r.next.RoundTrip(req)
}

func TestAPIKeyIsSentAndNeverLeaks(t *testing.T) {
	const secret = "k-3f9a-very-secret"
	srv := erptest.NewServer(erptest.WithAPIKey("X-API-Key", secret))
	t.Cleanup(srv.Close)
	cfg := srv.Config(2 * time.Second)
	cfg.APIKey = secret
	c, err := erp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.LookupClient(t.Context(), "000598", "0999999999"); err != nil {
		t.Fatalf("with the right key: %v", err)
	}

	// An ERP that echoes the key back in its error must not make us print it.
	srv.Script(erp.OpLookupClient, erptest.Raw(http.StatusUnauthorized, `{"error_api":true,"mensaje":"clave `+secret+` no autorizada"}`))
	_, err = c.LookupClient(t.Context(), "000598", "0999999999")
	var apiErr *erp.Error
	if !errors.As(err, &apiErr) || apiErr.HTTPStatus != http.StatusUnauthorized {
		t.Fatalf("err = %v, want a 401 erp.Error", err)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(apiErr.Message, secret) || bytes.Contains(apiErr.Body, []byte(secret)) {
		t.Errorf("the key leaks: %v / %s", err, apiErr.Body)
	}

	// Without the key the fake refuses: the header really is what authenticates.
	noKey := newClient(t, srv, 2*time.Second)
	if _, err := noKey.LookupClient(t.Context(), "000598", "0999999999"); !errors.As(err, &apiErr) || apiErr.HTTPStatus != http.StatusUnauthorized {
		t.Errorf("without key: %v, want 401", err)
	}
}

func TestCustomPaths(t *testing.T) {
	mt := mockTransport()
	cfg := erp.Config{BaseURL: "http://erp.test/base", LookupPath: "/q/clientes", ClientsPath: "/w/clientes", PaymentsPath: "/w/pagos", Timeout: time.Second}
	fixtures.RegisterScenario(mt, cfg, fixtures.ScenarioFound)
	c, err := erp.New(cfg, erp.WithHTTPClient(&http.Client{Transport: mt}))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.LookupClient(t.Context(), "000598", "0999999999"); err != nil || !res.Found {
		t.Fatalf("lookup = %+v, %v", res, err)
	}
	p := erp.ClientPayload{CodigoEmpresa: "1", NombreCliente: "N", Identificacion: "I"}
	if _, err := c.SyncClient(t.Context(), erp.OperationCreate, p); err != nil {
		t.Fatal(err)
	}
	if _, err := c.HandOverPayment(t.Context(), samplePayment()); err != nil {
		t.Fatal(err)
	}
	calls := mt.GetCallCountInfo()
	if calls["POST http://erp.test/base/q/clientes"] != 1 || calls["POST http://erp.test/base/w/clientes"] != 1 || calls["POST http://erp.test/base/w/pagos"] != 1 {
		t.Errorf("calls = %v, want one to each configured path", calls)
	}
}

// canceled by the caller is a transport error but not a timeout.
func TestCallerCancellation(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	srv.Script(erp.OpLookupClient, erptest.Hang())
	c := newClient(t, srv, 2*time.Second)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for srv.Calls(erp.OpLookupClient) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err := c.LookupClient(ctx, "000598", "0102030405")
	if !errors.Is(err, context.Canceled) || !erp.IsTransport(err) || erp.IsTimeout(err) {
		t.Fatalf("err = %v, want a transport error wrapping context.Canceled, not a timeout", err)
	}
}

// TestLookupFoundNeedsEncontradoAndACliente: Found only when the ERP says encontrado AND sends a
// client with a codigo_cliente; every other combination is not found with no client at all.
func TestLookupFoundNeedsEncontradoAndACliente(t *testing.T) {
	const client = `{"codigo_cliente":"C-1","codigo_empresa":"000598","nombre_cliente":"ANA","identificacion":"0102030405"}`
	cases := []struct {
		name      string
		body      string
		wantFound bool
	}{
		{"encontrado true with a cliente", `{"error_api":false,"encontrado":true,"cliente":` + client + `}`, true},
		{"encontrado 1 with a cliente", `{"error_api":0,"encontrado":1,"cliente":` + client + `}`, true},
		{"encontrado true, cliente null", `{"error_api":false,"encontrado":true,"cliente":null}`, false},
		{"encontrado true, cliente missing", `{"error_api":false,"encontrado":true}`, false},
		{"encontrado true, empty cliente", `{"error_api":false,"encontrado":true,"cliente":{}}`, false},
		{"encontrado true, cliente without codigo_cliente", `{"error_api":false,"encontrado":true,"cliente":{"nombre_cliente":"ANA"}}`, false},
		{"encontrado true, blank codigo_cliente", `{"error_api":false,"encontrado":true,"cliente":{"codigo_cliente":"  ","nombre_cliente":"ANA"}}`, false},
		{"encontrado false with a cliente", `{"error_api":false,"encontrado":false,"cliente":` + client + `}`, false},
		{"encontrado missing with a cliente", `{"error_api":false,"cliente":` + client + `}`, false},
		{"encontrado false, cliente null", `{"error_api":false,"encontrado":false,"cliente":null}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mockClient(t, mockERP(t, tc.body))
			res, err := c.LookupClient(t.Context(), "000598", "0102030405")
			if err != nil {
				t.Fatalf("err = %v, want a result", err)
			}
			if res.Found != tc.wantFound {
				t.Errorf("Found = %v, want %v", res.Found, tc.wantFound)
			}
			if tc.wantFound != (res.Client != nil) {
				t.Errorf("Client = %+v with Found %v", res.Client, res.Found)
			}
			if tc.wantFound && (res.Client.CodigoCliente != "C-1" || res.Client.NombreCliente != "ANA") {
				t.Errorf("Client = %+v", res.Client)
			}
			if string(res.Raw) != tc.body {
				t.Errorf("Raw = %s, want the answer as received", res.Raw)
			}
		})
	}
}

// TestNullStringsDecodeAsEmpty: the ERP writes null for a string it does not have; every string
// field reads it as "" without an error, in both operations and in rejections.
func TestNullStringsDecodeAsEmpty(t *testing.T) {
	type want struct {
		found   *erp.ClientRecord // lookup: the client read
		codigo  string            // sync: CodigoCliente
		message string            // sync: Message, or Error.Message when apiErr
		apiErr  bool
		errText string // an error containing this text
	}
	cases := []struct {
		name string
		op   erp.Operation // -1 for a lookup
		body string
		want want
	}{
		{"lookup: every optional string null", -1,
			`{"error_api":false,"mensaje":null,"message":null,"encontrado":true,"cliente":{"codigo_cliente":"C-1","codigo_empresa":null,` +
				`"nombre_cliente":null,"identificacion":null,"numero_telefono_1":null,"numero_telefono_2":null,"direccion_1":null,"inactivo":null}}`,
			want{found: &erp.ClientRecord{CodigoCliente: "C-1"}}},
		{"lookup: codigo_cliente null is not found", -1,
			`{"error_api":false,"encontrado":true,"cliente":{"codigo_cliente":null,"nombre_cliente":"ANA"}}`,
			want{}},
		{"create: mensaje null", erp.OperationCreate,
			`{"error_api":false,"mensaje":null,"codigo_cliente":"C-9"}`,
			want{codigo: "C-9"}},
		{"update: codigo_cliente and mensaje null keep the payload's codigo", erp.OperationUpdate,
			`{"error_api":false,"mensaje":null,"codigo_cliente":null}`,
			want{codigo: "C-PAYLOAD"}},
		{"create: codigo_cliente null is still missing", erp.OperationCreate,
			`{"error_api":false,"mensaje":"ok","codigo_cliente":null}`,
			want{errText: "without codigo_cliente"}},
		{"rejection: mensaje and message null", erp.OperationCreate,
			`{"error_api":true,"mensaje":null,"message":null}`,
			want{apiErr: true, message: "error_api without mensaje"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mockClient(t, mockERP(t, tc.body))
			if tc.op < 0 {
				res, err := c.LookupClient(t.Context(), "000598", "0102030405")
				if err != nil {
					t.Fatalf("err = %v, want null read as empty", err)
				}
				if (res.Client != nil) != (tc.want.found != nil) || (res.Client != nil && *res.Client != *tc.want.found) {
					t.Errorf("Client = %+v, want %+v", res.Client, tc.want.found)
				}
				return
			}
			res, err := c.SyncClient(t.Context(), tc.op, erp.ClientPayload{CodigoCliente: "C-PAYLOAD",
				CodigoEmpresa: "000598", NombreCliente: "ANA", Identificacion: "0102030405"})
			var apiErr *erp.Error
			switch {
			case tc.want.apiErr:
				if !errors.As(err, &apiErr) || apiErr.Message != tc.want.message {
					t.Fatalf("err = %v, want an erp.Error with message %q", err, tc.want.message)
				}
			case tc.want.errText != "":
				if err == nil || !strings.Contains(err.Error(), tc.want.errText) {
					t.Fatalf("err = %v, want one containing %q", err, tc.want.errText)
				}
			default:
				if err != nil {
					t.Fatalf("err = %v, want null read as empty", err)
				}
				if res.CodigoCliente != tc.want.codigo || res.Message != tc.want.message {
					t.Errorf("SyncResult = %+v, want codigo %q message %q", res, tc.want.codigo, tc.want.message)
				}
			}
		})
	}
}

// TestLookupWithNameRequestGolden: Lookup sends nombre_cliente when it is set, and the fake's
// ERROR_API magic value then rejects the query (HTTP 200, error_api true) as an *erp.Error.
func TestLookupWithNameRequestGolden(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	c := newClient(t, srv, 2*time.Second)
	res, err := c.Lookup(t.Context(), erp.LookupQuery{CodigoEmpresa: "000598", Identificacion: "0102030405", NombreCliente: "ANA"})
	if err != nil || res.Found {
		t.Fatalf("Lookup = %+v, %v", res, err)
	}
	golden(t, "lookup_request_with_name.json", srv.Requests(erp.OpLookupClient)[0].Body)

	_, err = c.Lookup(t.Context(), erp.LookupQuery{CodigoEmpresa: "000598", Identificacion: "0102030405", NombreCliente: erptest.NombreClienteErrorAPI})
	var apiErr *erp.Error
	if !errors.As(err, &apiErr) || apiErr.Op != erp.OpLookupClient || apiErr.HTTPStatus != 200 {
		t.Fatalf("Lookup with nombre ERROR_API = %v, want an *erp.Error of LookupClient with status 200", err)
	}
}
