package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/internal/apidoc/apitest"
	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/config"
	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// Test credentials of the harness.
const (
	testJWTSecret  = "test-jwt-secret"
	testServiceKey = "test-creditsystem-service-key"
)

// testEnv is the credit service running on a real loopback listener against the creditsystem
// and ERP fakes (wire level), on one storagetest target.
type testEnv struct {
	t      testing.TB
	target storagetest.Target
	srv    *server
	cs     *creditsystemtest.Server
	erp    *erptest.Server
	// URL is the service's base URL, e.g. http://127.0.0.1:PORT.
	URL    string
	client *http.Client
	// db is the service's own handle on the database, health the connection of GET /up.
	db     *bun.DB
	health *sql.DB
}

type envOptions struct {
	erpOpts []erptest.Option
	env     map[string]string
	faults  *storagetest.Faults
}

// withFaults runs the service on a handle of the database whose statements pass through f.
func withFaults(f *storagetest.Faults) envOption {
	return func(o *envOptions) { o.faults = f }
}

// envOption customises newTestEnv.
type envOption func(*envOptions)

// withERP passes options to the ERP fake.
func withERP(opts ...erptest.Option) envOption {
	return func(o *envOptions) { o.erpOpts = append(o.erpOpts, opts...) }
}

// withEnv overrides one environment variable of the service's configuration.
func withEnv(name, value string) envOption {
	return func(o *envOptions) { o.env[name] = value }
}

// newTestEnv migrates the target, starts both fakes and the service, and stops them all at the
// end of the test. Upstream timeouts are 1 s so timeout tests stay fast.
func newTestEnv(t testing.TB, tg storagetest.Target, opts ...envOption) *testEnv {
	t.Helper()
	o := &envOptions{env: map[string]string{}}
	for _, opt := range opts {
		opt(o)
	}
	cs := creditsystemtest.NewServer()
	t.Cleanup(cs.Close)
	erpSrv := erptest.NewServer(o.erpOpts...)
	t.Cleanup(erpSrv.Close)

	csCfg := cs.Config()
	environ := map[string]string{
		"APP_ENV":                     "development",
		"DATABASE_URL":                tg.URL,
		"JWT_SECRET":                  testJWTSecret,
		"CREDITSYSTEM_SERVICE_KEY":    testServiceKey,
		"CREDITSYSTEM_CARTERA_URL":    csCfg.CarteraURL,
		"CREDITSYSTEM_CENTRAL_URL":    csCfg.CentralURL,
		"CREDITSYSTEM_SOAP_NAMESPACE": csCfg.SOAPNamespace,
		"CREDITSYSTEM_USUARIO":        csCfg.Usuario,
		"CREDITSYSTEM_TERMINAL":       csCfg.Terminal,
		"CREDITSYSTEM_OTP_BYPASS":     csCfg.OTPBypass,
		"CREDITSYSTEM_TIMEOUT":        "1",
		"ERP_URL":                     erpSrv.URL,
		"ERP_TIMEOUT":                 "1",
	}
	for k, v := range o.env {
		environ[k] = v
	}
	cfg, err := config.ParseCredit(environ)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	if err := migrate(t.Context(), tg.DB); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// The service opens its own handle on the database, as run does.
	dbOpts := []storage.Option{storage.WithStatementTimeout(cfg.RequestTimeout)}
	if o.faults != nil {
		dbOpts = append(dbOpts, o.faults.Option())
	}
	db, err := storage.Open(t.Context(), tg.URL, dbOpts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	health, err := storage.OpenHealth(t.Context(), tg.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = health.Close() })
	srv, err := newServer(t.Context(), cfg, deps{DB: db, Health: health, Logger: log})
	if err != nil {
		t.Fatalf("newServer: %v", err)
	}
	t.Cleanup(srv.close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.app.Listener(ln) }()
	t.Cleanup(func() { _ = srv.app.ShutdownWithTimeout(5 * time.Second) })
	return &testEnv{
		t: t, target: tg, srv: srv, cs: cs, erp: erpSrv,
		URL:    "http://" + ln.Addr().String(),
		client: &http.Client{Timeout: 30 * time.Second, Transport: contractOf(t).Transport(t, nil)},
		db:     db, health: health,
	}
}

// contract is the service's OpenAPI document, loaded and validated once; every request of the
// harness's client is checked against it (internal/apidoc/apitest).
var contract = sync.OnceValues(func() (*apitest.Contract, error) { return apitest.Load(openapiYAML) })

func contractOf(t testing.TB) *apitest.Contract {
	t.Helper()
	c, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// userToken returns "Bearer <token>" for a dashboard user with the given permissions.
func (e *testEnv) userToken(perms ...string) string {
	e.t.Helper()
	tok, err := auth.SignUserToken([]byte(testJWTSecret), auth.Claims{
		Subject: "user-1", Username: "operador", Email: "operador@example.com",
		Permissions: perms, ExpiresAt: time.Now().Add(time.Hour),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return "Bearer " + tok
}

// serviceKey returns the Authorization value of the creditsystem's ServiceKey scheme.
func (e *testEnv) serviceKey() string { return "ServiceKey " + testServiceKey }

// response is an answer of the service.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map (numbers kept as json.Number).
func (r response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %d answer %q: %v", r.Status, r.Body, err)
	}
	return m
}

// do sends a request; body is JSON-encoded unless it is a string or []byte (sent as is).
// authorization is the Authorization header value ("" for none).
func (e *testEnv) do(method, path string, body any, authorization string, headers ...string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(e.t.Context(), method, e.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// expectError checks the error envelope of the specification and returns it.
func expectError(t *testing.T, r response, status int) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	m := r.JSON(t)
	if m["status"] != "error" {
		t.Fatalf("envelope status %v, want \"error\"; body %s", m["status"], r.Body)
	}
	if code, _ := m["statusCode"].(json.Number); code.String() != strconv.Itoa(status) {
		t.Fatalf("envelope statusCode %v, want %d; body %s", m["statusCode"], status, r.Body)
	}
	if _, ok := m["message"]; !ok {
		t.Fatalf("envelope without message: %s", r.Body)
	}
	return m
}

// startJobs works the service's job queue (the ERP hand-overs of payments) until the test ends.
func (e *testEnv) startJobs() {
	e.t.Helper()
	if err := e.srv.queue.Start(e.t.Context()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.srv.queue.Stop(ctx)
	})
}
