package erptest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
)

func client(t *testing.T, srv *erptest.Server) *erp.Client {
	t.Helper()
	c, err := erp.New(srv.Config(2 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// post sends a raw body, as a plain HTTP client of the development service would.
func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestPayloadChecks(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	cases := []struct {
		name, body string
		wantStatus int
		wantBody   string
	}{
		{"public phone name", `{"operacion":0,"codigo_empresa":"1","identificacion":"2","nombre_cliente":"N","telefono_1":"099"}`,
			400, `{"error_api":true,"mensaje":"campo desconocido: telefono_1"}` + "\n"},
		{"extra field outside the families", `{"operacion":0,"codigo_empresa":"1","identificacion":"2","nombre_cliente":"N","valor_11":1}`,
			400, `{"error_api":true,"mensaje":"campo desconocido: valor_11"}` + "\n"},
		{"limit as a string", `{"operacion":0,"codigo_empresa":"1","identificacion":"2","nombre_cliente":"N","limite_credito_1":"10.00"}`,
			400, `{"error_api":true,"mensaje":"valor no numerico: limite_credito_1"}` + "\n"},
		{"valor_n as a string", `{"operacion":0,"codigo_empresa":"1","identificacion":"2","nombre_cliente":"N","valor_3":"1"}`,
			400, `{"error_api":true,"mensaje":"valor no numerico: valor_3"}` + "\n"},
		{"operacion 2", `{"operacion":2,"codigo_empresa":"1","identificacion":"2","nombre_cliente":"N"}`,
			400, `{"error_api":true,"mensaje":"operacion debe ser 0 o 1"}` + "\n"},
		{"create without nombre", `{"operacion":0,"codigo_empresa":"1","identificacion":"2"}`,
			400, `{"error_api":true,"mensaje":"falta nombre_cliente"}` + "\n"},
		{"not JSON", `operacion=0`, 400, `{"error_api":true,"mensaje":"cuerpo JSON invalido"}` + "\n"},
		{"update of an unknown client", `{"operacion":1,"codigo_empresa":"1","identificacion":"2","nombre_cliente":"N"}`,
			200, `{"error_api":true,"mensaje":"el cliente no existe"}` + "\n"},
		{"create of the magic existing client", `{"operacion":0,"codigo_empresa":"9","identificacion":"0999999999","nombre_cliente":"N"}`,
			200, `{"error_api":true,"mensaje":"el cliente ya existe con codigo C-0999999999"}` + "\n"},
		{"every family accepted", `{"operacion":0,"codigo_empresa":"1","identificacion":"3","nombre_cliente":"N","lista_datos_10":["a"],"alfanumerico_1":"a","valor_1":1.5,"fecha_1":"2024-01-01","booleano_1":0,"texto_10":"t","limite_credito_2":0}`,
			200, `{"error_api":false,"mensaje":"cliente creado","codigo_cliente":"C-3","operacion":0}` + "\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(t, srv.URL+erp.DefaultClientsPath, tc.body)
			if status != tc.wantStatus || body != tc.wantBody {
				t.Errorf("got %d %s\nwant %d %s", status, body, tc.wantStatus, tc.wantBody)
			}
		})
	}
	if status, _ := post(t, srv.URL+erp.DefaultLookupPath, `{"codigo_empresa":"1"}`); status != 400 {
		t.Errorf("lookup without identificacion: %d, want 400", status)
	}
}

func TestCreateHonoursAGivenCodigoAndRefusesATakenOne(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	c := client(t, srv)
	res, err := c.SyncClient(t.Context(), erp.OperationCreate,
		erp.ClientPayload{CodigoCliente: "LOCAL-7", CodigoEmpresa: "1", NombreCliente: "N", Identificacion: "A"})
	if err != nil || res.CodigoCliente != "LOCAL-7" {
		t.Fatalf("create with codigo = %+v, %v", res, err)
	}
	_, err = c.SyncClient(t.Context(), erp.OperationCreate,
		erp.ClientPayload{CodigoCliente: "LOCAL-7", CodigoEmpresa: "1", NombreCliente: "N", Identificacion: "B"})
	var apiErr *erp.Error
	if !errors.As(err, &apiErr) || apiErr.Message != "codigo_cliente ya asignado: LOCAL-7" {
		t.Fatalf("second create with the same codigo: %v", err)
	}
	_, err = c.SyncClient(t.Context(), erp.OperationUpdate,
		erp.ClientPayload{CodigoCliente: "OTHER", CodigoEmpresa: "1", NombreCliente: "N", Identificacion: "A"})
	if !errors.As(err, &apiErr) {
		t.Fatalf("update naming another codigo: %v, want error_api", err)
	}
}

func TestMagicErrorAPIOnUpdateLeavesTheClientUnchanged(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	c := client(t, srv)
	p := erp.ClientPayload{CodigoEmpresa: "1", NombreCliente: "ANTES", Identificacion: "A"}
	if _, err := c.SyncClient(t.Context(), erp.OperationCreate, p); err != nil {
		t.Fatal(err)
	}
	p.NombreCliente = erptest.NombreClienteErrorAPI
	if _, err := c.SyncClient(t.Context(), erp.OperationUpdate, p); err == nil {
		t.Fatal("update with nombre ERROR_API succeeded")
	}
	if got, _ := srv.Client("1", "A"); got.NombreCliente != "ANTES" {
		t.Errorf("nombre after a rejected update = %q", got.NombreCliente)
	}
}

func TestScriptIsAQueue(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	srv.Script(erp.OpLookupClient, erptest.BusinessError("uno"), erptest.BusinessError("dos").WithStatus(http.StatusBadGateway))
	c := client(t, srv)
	var apiErr *erp.Error
	for i, want := range []int{200, 502} {
		_, err := c.LookupClient(t.Context(), "1", "A")
		if !errors.As(err, &apiErr) || apiErr.HTTPStatus != want {
			t.Fatalf("call %d: %v, want an erp.Error with HTTP %d", i+1, err, want)
		}
	}
	if _, err := c.LookupClient(t.Context(), "1", "A"); err != nil {
		t.Fatalf("third call, queue empty: %v", err)
	}
	// Scripts are per operation: the sync queue was never touched.
	if _, err := c.SyncClient(t.Context(), erp.OperationCreate, erp.ClientPayload{CodigoEmpresa: "1", NombreCliente: "N", Identificacion: "A"}); err != nil {
		t.Fatal(err)
	}
	if got := [2]int{srv.Calls(erp.OpLookupClient), srv.Calls(erp.OpSyncClient)}; got != [2]int{3, 1} {
		t.Errorf("Calls = %v, want [3 1]", got)
	}
}

// barrier returns an OnLookup hook that holds each lookup until n lookups have arrived.
func barrier(n int) func(ctx context.Context, _, _ string) {
	var arrived sync.WaitGroup
	arrived.Add(n)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	return func(ctx context.Context, _, _ string) {
		arrived.Done()
		select {
		case <-all:
		case <-ctx.Done():
		}
	}
}

// The pattern a service test uses to prove its ERP lookup runs alongside other work: a hook
// holds the lookup until the other work has started. Here the other work is a second lookup.
func TestOnLookupProvesOverlap(t *testing.T) {
	t.Run("concurrent lookups pass the barrier", func(t *testing.T) {
		srv := erptest.NewServer(erptest.OnLookup(barrier(2)))
		t.Cleanup(srv.Close)
		c := client(t, srv)
		errs := make(chan error, 2)
		for _, id := range []string{"A", "B"} {
			go func() { _, err := c.LookupClient(t.Context(), "1", id); errs <- err }()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("lookups did not overlap: %v", err)
			}
		}
	})
	t.Run("sequential lookups time out at the barrier", func(t *testing.T) {
		srv := erptest.NewServer(erptest.OnLookup(barrier(2)))
		t.Cleanup(srv.Close)
		c, err := erp.New(srv.Config(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.LookupClient(t.Context(), "1", "A"); !erp.IsTimeout(err) {
			t.Fatalf("first of two sequential lookups: %v, want a timeout", err)
		}
	})
}

func TestLookupDelay(t *testing.T) {
	const d = 50 * time.Millisecond
	srv := erptest.NewServer(erptest.WithLookupDelay(d))
	t.Cleanup(srv.Close)
	start := time.Now()
	if _, err := client(t, srv).LookupClient(t.Context(), "1", "A"); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < d {
		t.Errorf("answered after %v, before the %v delay", elapsed, d)
	}
}

func TestHandlerOnARealListener(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fake := erptest.NewFake()
	hs := &http.Server{Handler: fake, ReadHeaderTimeout: time.Second}
	go func() { _ = hs.Serve(l) }()
	t.Cleanup(func() { fake.Close(); _ = hs.Close() })

	c, err := erp.New(erp.Config{BaseURL: "http://" + l.Addr().String(), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.LookupClient(t.Context(), "000598", erptest.IdentificacionExisting)
	if err != nil || !res.Found || res.Client.CodigoCliente != erptest.CodigoClienteExisting {
		t.Fatalf("lookup = %+v, %v", res, err)
	}
}

func TestCloseReleasesHeldRequests(t *testing.T) {
	srv := erptest.NewServer()
	srv.Script(erp.OpLookupClient, erptest.Hang())
	c, err := erp.New(srv.Config(time.Minute)) // only Close can end this call in time
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 1)
	go func() { _, err := c.LookupClient(t.Context(), "1", "A"); errs <- err }()
	for srv.Calls(erp.OpLookupClient) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	srv.Close()
	select {
	case err := <-errs:
		if !erp.IsTransport(err) || erp.IsTimeout(err) {
			t.Errorf("held call ended with %v, want a dropped connection", err)
		}
	case <-t.Context().Done():
		t.Fatal("Close did not release the held request")
	}
}

func TestRequestsRecordHeadersAndBodies(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	cfg := srv.Config(2 * time.Second)
	cfg.APIKey = "k"
	c, err := erp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.LookupClient(t.Context(), "000598", "A"); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests(erp.OpLookupClient)
	if len(r) != 1 || r[0].Header.Get("X-API-Key") != "k" || string(r[0].Body) != `{"codigo_empresa":"000598","identificacion":"A"}` {
		t.Fatalf("Requests = %+v", r)
	}
}

// Twenty concurrent creates of the same client: the ERP accepts exactly one.
func TestConcurrentCreates(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	c := client(t, srv)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, rejected := 0, 0
	for range 20 {
		wg.Go(func() {
			_, err := c.SyncClient(t.Context(), erp.OperationCreate, erp.ClientPayload{CodigoEmpresa: "1", NombreCliente: "N", Identificacion: "DUP"})
			var apiErr *erp.Error
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.As(err, &apiErr) && apiErr.HTTPStatus == 200:
				rejected++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		})
	}
	wg.Wait()
	if ok != 1 || rejected != 19 {
		t.Errorf("%d created, %d rejected; want 1 and 19", ok, rejected)
	}
}

func TestFieldsHoldWhatWasSent(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	p := erp.ClientPayload{CodigoEmpresa: "1", NombreCliente: "N", Identificacion: "A", Telefono2: "02",
		ExtraFields: json.RawMessage(`{"valor_2": 99999999999999999.99}`)}
	if _, err := client(t, srv).SyncClient(t.Context(), erp.OperationCreate, p); err != nil {
		t.Fatal(err)
	}
	f, ok := srv.Fields("1", "A")
	if !ok || string(f["valor_2"]) != "99999999999999999.99" || string(f["numero_telefono_2"]) != `"02"` {
		t.Errorf("Fields = %s", f)
	}
}

// TestMagicErrorAPINombre: nombre_cliente ERROR_API, where it is sent (create, update, and a
// lookup that carries the name), gets HTTP 200 with error_api true and changes nothing. A
// lookup by key alone is not affected, not even for a client whose stored name is ERROR_API.
// The value matches exactly, and the magic identificaciones come first.
func TestMagicErrorAPINombre(t *testing.T) {
	const rejected = `{"error_api":true,"mensaje":"ERROR_API: el ERP rechazo el cliente"}` + "\n"
	seeded := erp.ClientRecord{CodigoCliente: "C-SEED", CodigoEmpresa: "1", NombreCliente: erptest.NombreClienteErrorAPI, Identificacion: "SEED"}
	cases := []struct {
		name       string
		path       string
		body       string
		wantStatus int
		wantBody   string // exact answer, when set
		wantErrAPI bool   // the answer has error_api true
		stored     string // identificacion that must (or, with "!", must not) be held afterwards
		wantNombre string // nombre_cliente held for stored, when set
	}{
		{name: "create", path: erp.DefaultClientsPath,
			body:       `{"operacion":0,"codigo_empresa":"1","identificacion":"NEW","nombre_cliente":"ERROR_API"}`,
			wantStatus: 200, wantBody: rejected, wantErrAPI: true, stored: "!NEW"},
		{name: "update of a known client", path: erp.DefaultClientsPath,
			body:       `{"operacion":1,"codigo_empresa":"1","identificacion":"KNOWN","nombre_cliente":"ERROR_API"}`,
			wantStatus: 200, wantBody: rejected, wantErrAPI: true, stored: "KNOWN", wantNombre: "ANTES"},
		{name: "update of an unknown client", path: erp.DefaultClientsPath,
			body:       `{"operacion":1,"codigo_empresa":"1","identificacion":"NOBODY","nombre_cliente":"ERROR_API"}`,
			wantStatus: 200, wantBody: rejected, wantErrAPI: true, stored: "!NOBODY"},
		{name: "update without nombre_cliente of a client stored as ERROR_API", path: erp.DefaultClientsPath,
			body:       `{"operacion":1,"codigo_empresa":"1","identificacion":"SEED","direccion_1":"QUITO"}`,
			wantStatus: 200, wantBody: `{"error_api":false,"mensaje":"cliente actualizado","codigo_cliente":"C-SEED","operacion":1}` + "\n",
			stored: "SEED", wantNombre: erptest.NombreClienteErrorAPI},
		{name: "lowercase is not magic", path: erp.DefaultClientsPath,
			body:       `{"operacion":0,"codigo_empresa":"1","identificacion":"LOWER","nombre_cliente":"error_api"}`,
			wantStatus: 200, wantBody: `{"error_api":false,"mensaje":"cliente creado","codigo_cliente":"C-LOWER","operacion":0}` + "\n",
			stored: "LOWER", wantNombre: "error_api"},
		{name: "magic HTTP 500 identificacion wins", path: erp.DefaultClientsPath,
			body:       `{"operacion":0,"codigo_empresa":"1","identificacion":"` + erptest.IdentificacionServerError + `","nombre_cliente":"ERROR_API"}`,
			wantStatus: 500, wantErrAPI: true},
		{name: "lookup of a client stored as ERROR_API answers it", path: erp.DefaultLookupPath,
			body:       `{"codigo_empresa":"1","identificacion":"SEED"}`,
			wantStatus: 200, wantBody: `{"error_api":false,"mensaje":"cliente encontrado","encontrado":true,"cliente":{"codigo_cliente":"C-SEED",` +
				`"codigo_empresa":"1","nombre_cliente":"ERROR_API","identificacion":"SEED","numero_telefono_1":null,"numero_telefono_2":null,"direccion_1":null,"inactivo":false}}` + "\n"},
		{name: "lookup sending nombre_cliente ERROR_API", path: erp.DefaultLookupPath,
			body:       `{"codigo_empresa":"1","identificacion":"NEW","nombre_cliente":"ERROR_API"}`,
			wantStatus: 200, wantBody: rejected, wantErrAPI: true, stored: "!NEW"},
		{name: "lookup sending another nombre_cliente answers by the key", path: erp.DefaultLookupPath,
			body:       `{"codigo_empresa":"1","identificacion":"KNOWN","nombre_cliente":"OTRO"}`,
			wantStatus: 200, wantBody: `{"error_api":false,"mensaje":"cliente encontrado","encontrado":true,"cliente":{"codigo_cliente":"C-KNOWN",` +
				`"codigo_empresa":"1","nombre_cliente":"ANTES","identificacion":"KNOWN","numero_telefono_1":null,"numero_telefono_2":null,"direccion_1":null,"inactivo":false}}` + "\n"},
		{name: "lookup with an unknown member", path: erp.DefaultLookupPath,
			body:       `{"codigo_empresa":"1","identificacion":"KNOWN","telefono_1":"09"}`,
			wantStatus: 400, wantBody: `{"error_api":true,"mensaje":"campo desconocido: telefono_1"}` + "\n", wantErrAPI: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := erptest.NewServer(erptest.WithClients(seeded,
				erp.ClientRecord{CodigoCliente: "C-KNOWN", CodigoEmpresa: "1", NombreCliente: "ANTES", Identificacion: "KNOWN"}))
			t.Cleanup(srv.Close)
			status, body := post(t, srv.URL+tc.path, tc.body)
			if status != tc.wantStatus || (tc.wantBody != "" && body != tc.wantBody) {
				t.Fatalf("got %d %s\nwant %d %s", status, body, tc.wantStatus, tc.wantBody)
			}
			var env struct {
				ErrorAPI bool `json:"error_api"`
			}
			if err := json.Unmarshal([]byte(body), &env); err != nil || env.ErrorAPI != tc.wantErrAPI {
				t.Errorf("error_api = %v (%v), want %v", env.ErrorAPI, err, tc.wantErrAPI)
			}
			if tc.stored == "" {
				return
			}
			if id, absent := strings.CutPrefix(tc.stored, "!"); absent {
				if _, found := srv.Client("1", id); found {
					t.Errorf("the ERP holds %s after a rejection", id)
				}
				return
			}
			got, found := srv.Client("1", tc.stored)
			if !found || got.NombreCliente != tc.wantNombre {
				t.Errorf("held %+v (found %v), want nombre %q", got, found, tc.wantNombre)
			}
		})
	}
}

// A nil Option is ignored and the others still apply, as erp.New does with its options.
func TestNilOptionIgnored(t *testing.T) {
	f := erptest.NewFake(nil, erptest.WithClients(erp.ClientRecord{CodigoCliente: "C-1", CodigoEmpresa: "000598", Identificacion: "0911111111"}), nil)
	defer f.Close()
	if c, ok := f.Client("000598", "0911111111"); !ok || c.CodigoCliente != "C-1" {
		t.Errorf("Client = %+v, %t", c, ok)
	}
}
