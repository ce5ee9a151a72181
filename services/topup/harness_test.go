package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/internal/apidoc/apitest"
	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/config"
	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
	"github.com/platform/integrations/topup"
)

const (
	testJWTSecret    = "test-jwt-secret"
	testActionSecret = "test-action-secret"
	testServiceKey   = "test-service-key"
	testPassword     = "Carrier-PASSWORD-s3cr3t"
	testOperations   = "ops@example.com"
)

// clock is a settable clock shared by a test's instances.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// stack is one test's world: a fake SPR on loopback and one or more service instances on one
// database, each listening on a loopback port.
type stack struct {
	t         testing.TB
	tg        storagetest.Target
	spr       *carriertest.Server
	clock     *clock
	instances []*instance
	answers   answerLog
	logs      logBuffer
	// faults, when set, sits between every instance and the database.
	faults *storagetest.Faults
	// outbox receives the development e-mails (no SMTP_HOST).
	outbox string
	// sender, when set, replaces the e-mail sender of every instance.
	sender topup.Sender
}

// logBuffer keeps what every instance logged (debug level), for the PASSWORD check.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

type instance struct {
	srv *server
	url string
}

// answerLog keeps every response body, for the PASSWORD check.
type answerLog struct {
	mu     sync.Mutex
	bodies []string
}

func (l *answerLog) add(s string) { l.mu.Lock(); l.bodies = append(l.bodies, s); l.mu.Unlock() }

func newStack(t testing.TB, tg storagetest.Target, env map[string]string, sprOpts ...carriertest.Option) *stack {
	t.Helper()
	return startStack(t, tg, env, nil, sprOpts...)
}

// newFaultyStack is newStack with the database behind faults.
func newFaultyStack(t testing.TB, tg storagetest.Target, faults *storagetest.Faults) *stack {
	t.Helper()
	return startStack(t, tg, nil, faults)
}

func startStack(t testing.TB, tg storagetest.Target, env map[string]string, faults *storagetest.Faults, sprOpts ...carriertest.Option) *stack {
	t.Helper()
	s := &stack{t: t, tg: tg, clock: &clock{now: time.Now()}, faults: faults, outbox: t.TempDir()}
	s.spr = carriertest.NewServer(append([]carriertest.Option{carriertest.WithCredentials("spr-user", testPassword, "COMP1")}, sprOpts...)...)
	t.Cleanup(s.spr.Close)
	s.addInstance(env)
	return s
}

// addInstance starts one more service instance on the stack's database (a second process).
func (s *stack) addInstance(extra map[string]string) *instance {
	t := s.t
	t.Helper()
	env := map[string]string{
		"APP_ENV":                     "development",
		"DATABASE_URL":                s.tg.URL,
		"PORT":                        "3004",
		"JWT_SECRET":                  testJWTSecret,
		"ACTION_TOKEN_SECRET":         testActionSecret,
		"TOPUP_SERVICE_KEY":           testServiceKey,
		"CARRIER_SPR_URL":             s.spr.URL,
		"CARRIER_USER":                "spr-user",
		"CARRIER_PASSWORD":            testPassword,
		"CARRIER_COMPANY_ID":          "COMP1",
		"CARRIER_TIMEOUT":             "0.5",
		"OPERATIONS_EMAIL":            testOperations,
		"RECARGAS_RECONCILE_INTERVAL": "0", // tests run the passes themselves
	}
	for k, v := range extra {
		env[k] = v
	}
	cfg, err := config.ParseTopup(env)
	if err != nil {
		t.Fatal(err)
	}
	// Tests keep the logs for the PASSWORD check; benchmarks measure the service without them.
	logger := slog.New(slog.NewTextHandler(&s.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if _, bench := t.(*testing.B); bench {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// Each instance opens the database as run does (a process of its own); the test's
	// tg.DB stays the test's.
	opts := []storage.Option{storage.WithStatementTimeout(cfg.RequestTimeout)}
	if s.faults != nil {
		opts = append(opts, s.faults.Option())
	}
	db, err := storage.Open(ctx, cfg.DatabaseURL.Reveal(), opts...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := migrate(ctx, db); err != nil {
		cancel()
		t.Fatal(err)
	}
	health, err := storage.OpenHealth(ctx, cfg.DatabaseURL.Reveal())
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = health.Close() })
	srv, err := newServer(ctx, cfg, deps{
		DB: db, Health: health, Logger: logger, OutboxDir: s.outbox, Sender: s.sender,
		ServiceOptions: []topup.Option{topup.WithClock(s.clock.Now)},
	})
	if err != nil {
		cancel()
		_ = db.Close()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		srv.close()
		_ = db.Close()
	})
	in := &instance{srv: srv, url: "http://" + ln.Addr().String()}
	s.instances = append(s.instances, in)
	return in
}

func (s *stack) svc() *topup.Service { return s.instances[0].srv.service }

// user is a token holder.
type user struct {
	sub, username, email string
	perms                []string
}

func newUser(sub string, perms ...string) user {
	return user{sub: sub, username: "name-" + sub, email: sub + "@example.com", perms: perms}
}

func (u user) token(t *testing.T) string {
	t.Helper()
	tok, err := auth.SignUserToken([]byte(testJWTSecret), auth.Claims{
		Subject: u.sub, Username: u.username, Email: u.email, Permissions: u.perms, ExpiresAt: time.Now().Add(time.Hour),
	})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (u user) actionToken(t *testing.T) string {
	t.Helper()
	a, err := auth.NewActionTokens([]byte(testActionSecret))
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := a.Mint(u.sub)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

func serviceKey() map[string]string { return map[string]string{"x-service-key": testServiceKey} }

func (u user) recharge(t *testing.T) map[string]string {
	h := bearer(u.token(t))
	h["X-Action-Token"] = u.actionToken(t)
	return h
}

type answer struct {
	status int
	body   map[string]any
	raw    string
	header http.Header
}

// contract is the service's OpenAPI document, loaded and validated once; every exchange of
// doOn is checked against it (internal/apidoc/apitest).
var contract = sync.OnceValues(func() (*apitest.Contract, error) { return apitest.Load(openapiYAML) })

var httpClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// do sends a request to the stack's first instance.
func (s *stack) do(method, path string, body any, headers map[string]string) answer {
	return s.doOn(s.instances[0], method, path, body, headers)
}

func (s *stack) doOn(in *instance, method, path string, body any, headers map[string]string) answer {
	var reqBody []byte
	switch b := body.(type) {
	case nil:
	case string:
		reqBody = []byte(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			panic(err)
		}
		reqBody = j
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(reqBody)
	}
	req, err := http.NewRequest(method, in.url+path, rd)
	if err != nil {
		panic(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		s.t.Errorf("%s %s: %v", method, path, err)
		return answer{}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	s.answers.add(string(raw))
	if c, err := contract(); err != nil {
		s.t.Errorf("contract: %v", err)
	} else if err := c.Check(req, reqBody, apitest.Answer{Status: resp.StatusCode, Header: resp.Header, Body: raw}); err != nil {
		s.t.Errorf("contract (OpenAPI document): %v", err)
	}
	a := answer{status: resp.StatusCode, raw: string(raw), header: resp.Header}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

func (a answer) str(key string) string {
	v, _ := a.body[key].(string)
	return v
}

func (a answer) obj(key string) map[string]any {
	v, _ := a.body[key].(map[string]any)
	return v
}

func (a answer) expect(t *testing.T, status int) answer {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d: %s", a.status, status, a.raw)
	}
	return a
}

func rechargeBodyFor(subscriber string) map[string]any {
	return map[string]any{"subscriber_id": subscriber, "offer_id": "31", "quantity": 1, "external_operation": "RECARGA_PINES", "canton": "1701"}
}

var invoiceSeq atomic.Int64

func sha(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

// invoice is a valid webhook body with a fresh source_xml_hash.
func invoice(product string, amount any, subscriber string) map[string]any {
	n := invoiceSeq.Add(1)
	return map[string]any{
		"invoice_number":     fmt.Sprintf("001-001-%09d", n),
		"invoice_code":       fmt.Sprintf("FAC-%d", n),
		"product_code":       product,
		"subscriber_id":      subscriber,
		"amount":             amount,
		"notification_email": "branch@example.com",
		"source_xml_hash":    sha(fmt.Sprintf("<factura n=%d t=%d/>", n, time.Now().UnixNano())),
	}
}

// transaction reads a record through GET /transactions/:id.
func (s *stack) transaction(t *testing.T, id string) map[string]any {
	t.Helper()
	a := s.do("GET", "/api/v1/recargas/transactions/"+id, nil, bearer(newUser("viewer", PermView).token(t)))
	a.expect(t, http.StatusOK)
	return a.body
}

// assertNoPassword checks every answer the stack gave, everything it logged and every text
// column the service wrote for the carrier PASSWORD.
func (s *stack) assertNoPassword(t *testing.T) {
	t.Helper()
	logs := s.logs.String()
	if !strings.Contains(logs, "carrier call") {
		t.Fatal("no carrier call logged: the log check proved nothing")
	}
	if strings.Contains(logs, testPassword) {
		t.Fatal("the logs hold the carrier PASSWORD")
	}
	s.answers.mu.Lock()
	n := len(s.answers.bodies)
	for _, b := range s.answers.bodies {
		if strings.Contains(b, testPassword) {
			t.Fatalf("an answer holds the carrier PASSWORD: %s", b)
		}
	}
	s.answers.mu.Unlock()
	if n == 0 {
		t.Fatal("no answers recorded: the check proved nothing")
	}
	rows := 0
	for _, table := range []string{"topup_transactions", "topup_carrier_calls", "river_job"} {
		r, err := s.tg.DB.QueryContext(context.Background(), "SELECT * FROM "+table)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := r.Columns()
		for r.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := r.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if fmt.Sprint(v) != "" && (strings.Contains(fmt.Sprint(v), testPassword) || strings.Contains(fmt.Sprintf("%s", v), testPassword)) {
					t.Fatalf("%s.%s holds the carrier PASSWORD", table, cols[i])
				}
			}
			rows++
		}
		r.Close()
	}
	if rows == 0 {
		t.Fatal("no stored rows: the check proved nothing")
	}
}

func signExpired(u user) (string, error) {
	return auth.SignUserToken([]byte(testJWTSecret), auth.Claims{Subject: u.sub, Permissions: u.perms, ExpiresAt: time.Now().Add(-time.Minute)})
}

func expiredActionToken(t *testing.T, sub string) string {
	t.Helper()
	a, err := auth.NewActionTokens([]byte(testActionSecret), auth.WithActionClock(func() time.Time { return time.Now().Add(-time.Hour) }))
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := a.Mint(sub)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
