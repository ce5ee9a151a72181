package httpx_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/platform/integrations/internal/httpx"
)

var errNoCard = errors.New("customer without card")

func mapper(err error) *httpx.Error {
	if errors.Is(err, errNoCard) {
		return httpx.NewError(http.StatusNotFound, "Customer has no card")
	}
	return nil
}

type pinger struct{ err error }

func (p pinger) PingContext(context.Context) error { return p.err }

type item struct {
	Cantidad *int   `json:"cantidad" validate:"required,min=1"`
	Codigo   string `json:"codigo" validate:"required,max=3"`
}

type request struct {
	CodigoEmpresa string `json:"codigo_empresa" validate:"required,max=20"`
	Monto         string `json:"monto" validate:"required,numeric_string"`
	Fecha         string `json:"fecha_factura" validate:"omitempty,date_ymd"`
	Email         string `json:"email" validate:"omitempty,email"`
	Plazo         int    `json:"plazo" validate:"omitempty,min=1"`
	Items         []item `json:"items" validate:"omitempty,dive"`
}

type testApp struct {
	app  *fiber.App
	logs *bytes.Buffer
	base string
}

func newTestApp(t *testing.T, health httpx.Pinger) testApp {
	t.Helper()
	logs := &bytes.Buffer{}
	app := httpx.New(httpx.Config{
		Service:     "test",
		Logger:      httpx.NewLogger(logs, true, slog.LevelDebug),
		BodyLimit:   256,
		Health:      health,
		ErrorMapper: mapper,
	})
	app.Post("/things", func(c *fiber.Ctx) error {
		var req request
		if err := httpx.Bind(c, &req); err != nil {
			return err
		}
		return c.Status(http.StatusCreated).JSON(req)
	})
	app.Get("/things/:id", func(c *fiber.Ctx) error { return c.SendString(c.Params("id")) })
	app.Get("/panic", func(c *fiber.Ctx) error { panic("secret internal detail") })
	app.Get("/boom", func(c *fiber.Ctx) error { return errors.New("dial tcp 10.0.0.7: password=hunter2") })
	app.Get("/bad-status", func(c *fiber.Ctx) error { return &httpx.Error{Status: 200, Message: "secret internal detail"} })
	app.Get("/nocard", func(c *fiber.Ctx) error { return errNoCard })
	app.Get("/upstream", func(c *fiber.Ctx) error {
		return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{
			Message: "The creditsystem rejected the authorization", UpstreamMessage: "Cupo insuficiente",
			Operation: "GrabarAutorizacion", UpstreamCode: "51",
		}, errors.New("lError true"))
	})
	// A real listener rather than app.Test: the body limit is enforced by the server while it
	// reads the request, which app.Test reports as an error instead of a response.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return testApp{app: app, logs: logs, base: "http://" + ln.Addr().String()}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (a testApp) do(t *testing.T, req *http.Request) response {
	t.Helper()
	u, err := url.Parse(a.base + req.URL.RequestURI())
	if err != nil {
		t.Fatal(err)
	}
	req.URL, req.RequestURI, req.Host = u, "", ""
	res, err := (&http.Client{Timeout: 2 * time.Second}).Do(req.WithContext(t.Context()))
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: body}
}

func post(body, contentType string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "/things", strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req
}

// envelope decodes an error body and checks the fixed parts of the envelope.
func envelope(t *testing.T, r response) map[string]any {
	t.Helper()
	var env map[string]any
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, r.body)
	}
	if env["status"] != "error" || env["statusCode"] != float64(r.status) {
		t.Errorf("envelope status/statusCode = %v/%v for HTTP %d: %s", env["status"], env["statusCode"], r.status, r.body)
	}
	if _, ok := env["message"]; !ok {
		t.Errorf("envelope lacks message: %s", r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q", ct)
	}
	if r.header.Get(httpx.HeaderRequestID) == "" {
		t.Error("error response without X-Request-Id")
	}
	return env
}

func errorsOf(env map[string]any) []string {
	raw, _ := env["errors"].([]any)
	out := make([]string, len(raw))
	for i, e := range raw {
		out[i], _ = e.(string)
	}
	return out
}

func TestClientErrorsGetEnvelope(t *testing.T) {
	a := newTestApp(t, nil)
	big := `{"codigo_empresa":"` + strings.Repeat("x", 400) + `","monto":"1"}`
	cases := []struct {
		name       string
		req        *http.Request
		status     int
		message    string
		wantErrors []string
	}{
		{"body over limit", post(big, "application/json"), 413, "Request Entity Too Large", nil},
		{"malformed JSON", post(`{"monto": "1",`, "application/json"), 400, httpx.ValidationMessage, []string{"request body is not valid JSON"}},
		{"not JSON at all", post(`monto=1`, "application/json"), 400, httpx.ValidationMessage, []string{"request body is not valid JSON"}},
		{"empty body", post(``, "application/json"), 400, httpx.ValidationMessage, []string{"request body is required"}},
		{"two JSON values", post(`{"codigo_empresa":"1","monto":"1"} {}`, "application/json"), 400, httpx.ValidationMessage, []string{"request body must contain a single JSON value"}},
		{"array instead of object", post(`[1,2]`, "application/json"), 400, httpx.ValidationMessage, []string{"request body must be a JSON object"}},
		{"wrong type", post(`{"codigo_empresa":"1","monto":100}`, "application/json"), 400, httpx.ValidationMessage, []string{"monto must be a string"}},
		{"wrong type and a missing field", post(`{"monto":100}`, "application/json"), 400, httpx.ValidationMessage, []string{"monto must be a string", "codigo_empresa is required"}},
		{"every wrong type", post(`{"codigo_empresa":1,"monto":true,"plazo":"x","items":[{"cantidad":"2"}]}`, "application/json"), 400, httpx.ValidationMessage, []string{
			"codigo_empresa must be a string", "monto must be a string", "plazo must be an integer", "items[0].cantidad must be an integer", "items[0].codigo is required"}},
		{"wrong type in one element, rules broken in another", post(`{"codigo_empresa":"1","monto":"1","items":[{"cantidad":"x","codigo":"A"},{}]}`, "application/json"), 400, httpx.ValidationMessage, []string{
			"items[0].cantidad must be an integer", "items[1].cantidad is required", "items[1].codigo is required"}},
		{"array member of the wrong type hides the rules below it only", post(`{"codigo_empresa":"1","monto":"1","items":["x",{}]}`, "application/json"), 400, httpx.ValidationMessage, []string{
			"items[0] must be an object", "items[1].cantidad is required", "items[1].codigo is required"}},
		{"null body", post(`null`, "application/json"), 400, httpx.ValidationMessage, []string{"request body must be a JSON object"}},
		{"a member twice", post(`{"codigo_empresa":"1","monto":"1","monto":"2"}`, "application/json"), 400, httpx.ValidationMessage, []string{"monto is given more than once"}},
		{"members differing only in case", post(`{"codigo_empresa":"1","Monto":"1","MONTO":"2"}`, "application/json"), 400, httpx.ValidationMessage, []string{
			"Monto is given more than once (as Monto and MONTO)"}},
		{"wrong type in a later array element", post(`{"codigo_empresa":"1","monto":"1","items":[{"cantidad":1,"codigo":"A"},{"cantidad":"x","codigo":"B"}]}`, "application/json"), 400, httpx.ValidationMessage, []string{
			"items[1].cantidad must be an integer"}},
		{"NUL character in a string", post(`{"codigo_empresa":"a\u0000b","monto":"1"}`, "application/json"), 400, httpx.ValidationMessage, []string{`request body must not contain the NUL character (\u0000)`}},
		{"NUL character in an ignored member", post(`{"codigo_empresa":"1","monto":"1","x":{"y":["\\\u0000"]}}`, "application/json"), 400, httpx.ValidationMessage, []string{`request body must not contain the NUL character (\u0000)`}},
		{"JSON sent as text/plain is read as JSON", post(`{"monto":"1"}`, "text/plain"), 400, httpx.ValidationMessage, []string{"codigo_empresa is required"}},
		{"form body is not JSON", post(`monto=1`, "application/x-www-form-urlencoded"), 400, httpx.ValidationMessage, []string{"request body is not valid JSON"}},
		{"multipart body is not JSON", post("--b\r\nContent-Disposition: form-data; name=\"monto\"\r\n\r\n1\r\n--b--\r\n", "multipart/form-data; boundary=b"), 400, httpx.ValidationMessage, []string{"request body is not valid JSON"}},
		{"JSON sent as multipart is read as JSON", post(`{"monto":"1"}`, "multipart/form-data; boundary=b"), 400, httpx.ValidationMessage, []string{"codigo_empresa is required"}},
		{"missing content type is read as JSON", post(`monto=1`, ""), 400, httpx.ValidationMessage, []string{"request body is not valid JSON"}},
		{"unknown route", httptest.NewRequest(http.MethodGet, "/nowhere", nil), 404, "Cannot GET /nowhere", nil},
		{"NUL in a path parameter", httptest.NewRequest(http.MethodGet, "/things/K%001", nil), 400, httpx.ValidationMessage, []string{"request URL must not contain the NUL character (%00)"}},
		{"NUL in the query", httptest.NewRequest(http.MethodGet, "/things/K1?search=a%00", nil), 400, httpx.ValidationMessage, []string{"request URL must not contain the NUL character (%00)"}},
		{"validation", post(`{"monto":"1e3","fecha_factura":"2024-02-30","email":"x","plazo":0,"items":[{"cantidad":0,"codigo":"ABCD"},{}]}`, "application/json"), 400, httpx.ValidationMessage, []string{
			"codigo_empresa is required",
			"monto must be a numeric string",
			"fecha_factura must be a date in yyyy-mm-dd format",
			"email must be a valid e-mail address",
			"items[0].cantidad must be at least 1",
			"items[0].codigo must be at most 3 characters long",
			"items[1].cantidad is required",
			"items[1].codigo is required",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do(t, tc.req)
			if r.status != tc.status {
				t.Fatalf("status = %d, want %d: %s", r.status, tc.status, r.body)
			}
			env := envelope(t, r)
			if env["message"] != tc.message {
				t.Errorf("message = %v, want %q", env["message"], tc.message)
			}
			got := errorsOf(env)
			if strings.Join(got, "|") != strings.Join(tc.wantErrors, "|") {
				t.Errorf("errors =\n  %q\nwant\n  %q", got, tc.wantErrors)
			}
			if _, present := env["errors"]; present != (tc.status == 400) {
				t.Errorf("errors present = %v on status %d", present, tc.status)
			}
		})
	}
}

func TestBindAcceptsValidBody(t *testing.T) {
	a := newTestApp(t, nil)
	r := a.do(t, post(`{"codigo_empresa":"000598","monto":"100.50","fecha_factura":"2024-02-29","unknown":"ignored","items":[{"cantidad":2,"codigo":"A1"}]}`, "application/json; charset=utf-8"))
	if r.status != http.StatusCreated {
		t.Fatalf("status = %d: %s", r.status, r.body)
	}
	var got request
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Monto != "100.50" || got.Fecha != "2024-02-29" || len(got.Items) != 1 || *got.Items[0].Cantidad != 2 {
		t.Errorf("decoded %+v", got)
	}
}

func TestCompressedBodyIsRefused(t *testing.T) {
	a := newTestApp(t, nil)
	// Well under the 256-byte limit compressed, four times over it once inflated.
	inflated := `{"codigo_empresa":"1","monto":"1","x":"` + strings.Repeat("a", 1000) + `"}`
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	if _, err := w.Write([]byte(inflated)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if gz.Len() >= 256 {
		t.Fatalf("compressed body is %d bytes, want it under the limit", gz.Len())
	}
	for _, enc := range []string{"gzip", "deflate, gzip", "br"} {
		t.Run(enc, func(t *testing.T) {
			req := post(gz.String(), "application/json")
			req.Header.Set("Content-Encoding", enc)
			r := a.do(t, req)
			if r.status != http.StatusUnsupportedMediaType {
				t.Fatalf("status = %d, want 415: %s", r.status, r.body)
			}
			if env := envelope(t, r); env["message"] != "Content-Encoding is not supported: send the body uncompressed" {
				t.Fatalf("message %v", env["message"])
			}
		})
	}
	t.Run("identity", func(t *testing.T) {
		req := post(`{"codigo_empresa":"1","monto":"1"}`, "application/json")
		req.Header.Set("Content-Encoding", "identity")
		if r := a.do(t, req); r.status != http.StatusCreated {
			t.Fatalf("status = %d: %s", r.status, r.body)
		}
	})
}

func TestBindAcceptsEscapedBackslashBeforeU0000(t *testing.T) {
	a := newTestApp(t, nil)
	// "\\u0000" is a backslash followed by the text u0000, not a NUL character.
	r := a.do(t, post(`{"codigo_empresa":"a\\u0000","monto":"1"}`, "application/json"))
	if r.status != http.StatusCreated {
		t.Fatalf("status = %d: %s", r.status, r.body)
	}
	var got request
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	if got.CodigoEmpresa != `a\u0000` {
		t.Fatalf("codigo_empresa = %q", got.CodigoEmpresa)
	}
}

func TestServerErrorsHideInternals(t *testing.T) {
	a := newTestApp(t, nil)
	cases := []struct {
		name, path, secret string
	}{
		{"panic", "/panic", "secret internal detail"},
		{"unmapped error", "/boom", "hunter2"},
		{"*Error with a non-error status", "/bad-status", "secret internal detail"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a.logs.Reset()
			r := a.do(t, httptest.NewRequest(http.MethodGet, tc.path, nil))
			if r.status != http.StatusInternalServerError {
				t.Fatalf("status = %d: %s", r.status, r.body)
			}
			env := envelope(t, r)
			if env["message"] != "Internal Server Error" || bytes.Contains(r.body, []byte(tc.secret)) {
				t.Errorf("500 body leaks internals: %s", r.body)
			}
			if !strings.Contains(a.logs.String(), `"status":500`) || !strings.Contains(a.logs.String(), `"level":"ERROR"`) {
				t.Errorf("500 not logged as an error: %s", a.logs.String())
			}
		})
	}
	a.logs.Reset()
	a.do(t, httptest.NewRequest(http.MethodGet, "/panic", nil))
	if !strings.Contains(a.logs.String(), `"stack":"goroutine`) {
		t.Errorf("panic logged without its stack: %s", a.logs.String())
	}
}

func TestMappedAndUpstreamErrors(t *testing.T) {
	a := newTestApp(t, nil)
	r := a.do(t, httptest.NewRequest(http.MethodGet, "/nocard", nil))
	if r.status != http.StatusNotFound || envelope(t, r)["message"] != "Customer has no card" {
		t.Errorf("mapped error: %d %s", r.status, r.body)
	}
	r = a.do(t, httptest.NewRequest(http.MethodGet, "/upstream", nil))
	const want = `{"status":"error","statusCode":502,"message":{"message":"The creditsystem rejected the authorization","upstreamMessage":"Cupo insuficiente","operation":"GrabarAutorizacion","upstreamCode":"51"}}`
	if r.status != http.StatusBadGateway || string(r.body) != want {
		t.Errorf("upstream error:\n got %d %s\nwant 502 %s", r.status, r.body, want)
	}
}

func TestRequestID(t *testing.T) {
	a := newTestApp(t, nil)
	cases := []struct {
		name, in string
		echo     bool
	}{
		{"taken from request", "req-42.abc_DEF", true},
		{"generated when absent", "", false},
		{"replaced when it has spaces", "bad id", false},
		{"replaced when too long", strings.Repeat("a", 200), false},
	}
	for _, tc := range cases {
		for _, path := range []string{"/things/1", "/nowhere", "/panic"} {
			t.Run(tc.name+path, func(t *testing.T) {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				if tc.in != "" {
					req.Header.Set(httpx.HeaderRequestID, tc.in)
				}
				got := a.do(t, req).header.Get(httpx.HeaderRequestID)
				if tc.echo {
					if got != tc.in {
						t.Errorf("X-Request-Id = %q, want %q", got, tc.in)
					}
					return
				}
				if _, err := uuid.Parse(got); err != nil {
					t.Errorf("X-Request-Id = %q, want a generated UUID", got)
				}
			})
		}
	}
	// The 413 is answered before any middleware runs; it still carries an id.
	r := a.do(t, post(strings.Repeat("x", 1000), "application/json"))
	if r.status != http.StatusRequestEntityTooLarge || r.header.Get(httpx.HeaderRequestID) == "" {
		t.Errorf("413 without X-Request-Id: %d %v", r.status, r.header)
	}
}

func TestUp(t *testing.T) {
	cases := []struct {
		name   string
		health httpx.Pinger
		status int
		body   string
	}{
		{"database answers", pinger{}, 200, `{"status":"ok"}`},
		{"no database configured", nil, 200, `{"status":"ok"}`},
		{"database down", pinger{err: errors.New("connection refused to db:5432")}, 503, `{"status":"error","statusCode":503,"message":"database unavailable"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newTestApp(t, tc.health)
			r := a.do(t, httptest.NewRequest(http.MethodGet, "/up", nil))
			if r.status != tc.status || string(r.body) != tc.body {
				t.Errorf("GET /up = %d %s, want %d %s", r.status, r.body, tc.status, tc.body)
			}
		})
	}
}

func TestMetrics(t *testing.T) {
	a := newTestApp(t, pinger{})
	newTestApp(t, pinger{}) // a second app in the same process must not collide on registration
	a.do(t, httptest.NewRequest(http.MethodGet, "/things/1", nil))
	a.do(t, httptest.NewRequest(http.MethodGet, "/things/2", nil))
	a.do(t, post(`{}`, "application/json"))
	a.do(t, httptest.NewRequest(http.MethodGet, "/nowhere/123", nil))
	a.do(t, httptest.NewRequest(http.MethodGet, "/panic", nil))
	a.do(t, post(strings.Repeat("x", 1000), "application/json"))
	r := a.do(t, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if r.status != 200 {
		t.Fatalf("GET /metrics = %d", r.status)
	}
	out := string(r.body)
	for _, want := range []string{
		`http_requests_total{method="GET",route="/things/:id",service="test",status="200"} 2`,
		`http_requests_total{method="POST",route="/things",service="test",status="400"} 1`,
		`http_requests_total{method="GET",route="unmatched",service="test",status="404"} 1`,
		`http_requests_total{method="GET",route="/panic",service="test",status="500"} 1`,
		`http_requests_total{method="POST",route="unmatched",service="test",status="413"} 1`,
		`http_request_duration_seconds_bucket{method="GET",route="/things/:id",service="test",status="200",le="+Inf"} 2`,
		`http_request_duration_seconds_count{method="POST",route="/things",service="test",status="400"} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(out, "/nowhere/123") {
		t.Error("raw path of an unmatched request used as a label")
	}
	if !strings.Contains(a.logs.String(), `"msg":"request refused"`) || !strings.Contains(a.logs.String(), `"status":413`) {
		t.Errorf("413 refused by the server is not logged: %s", a.logs.String())
	}
}

var logLine = regexp.MustCompile(`"request_id":"rid-1".*"method":"GET".*"route":"/things/:id".*"path":"/things/7".*"status":200.*"latency":`)

func TestRequestLog(t *testing.T) {
	a := newTestApp(t, nil)
	req := httptest.NewRequest(http.MethodGet, "/things/7", nil)
	req.Header.Set(httpx.HeaderRequestID, "rid-1")
	a.do(t, req)
	if !logLine.MatchString(a.logs.String()) {
		t.Errorf("request log line lacks fields: %s", a.logs.String())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(a.logs.String())), &rec); err != nil {
		t.Errorf("production log is not one JSON object per line: %v", err)
	}
}

func TestBodyWithoutContentTypeIsJSON(t *testing.T) {
	a := newTestApp(t, nil)
	if r := a.do(t, post(`{"codigo_empresa":"1","monto":"1"}`, "")); r.status != http.StatusCreated {
		t.Fatalf("valid JSON without Content-Type: status %d, want 201: %s", r.status, r.body)
	}
}

// The profiler is served only when asked for (DEBUG_PPROF, development only).
func TestPprofOnlyWhenEnabled(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		t.Run(fmt.Sprint(enabled), func(t *testing.T) {
			app := httpx.New(httpx.Config{Service: "test", Pprof: enabled})
			resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/debug/pprof/cmdline", nil))
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{false: 404, true: 200}[enabled]; resp.StatusCode != want {
				t.Fatalf("GET /debug/pprof/cmdline = %d, want %d", resp.StatusCode, want)
			}
		})
	}
}

// CORS (CORS_ALLOWED_ORIGINS): a preflight from a listed origin is answered with the methods and
// headers the API takes; another origin, or no configuration, gets no Allow-Origin.
func TestCORS(t *testing.T) {
	const dashboard = "https://dashboard.example.com"
	preflight := func(origin string) *http.Request {
		r := httptest.NewRequest(http.MethodOptions, "/things", nil)
		r.Header.Set("Origin", origin)
		r.Header.Set("Access-Control-Request-Method", http.MethodPost)
		r.Header.Set("Access-Control-Request-Headers", "authorization,content-type,idempotency-key")
		return r
	}
	tests := []struct {
		name      string
		origins   []string
		origin    string
		wantAllow string
	}{
		{"listed origin", []string{"http://localhost:5173", dashboard}, dashboard, dashboard},
		{"unlisted origin", []string{dashboard}, "https://evil.example.com", ""},
		{"any origin in development", []string{"*"}, "https://anything.example.com", "*"},
		{"CORS off", nil, dashboard, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			app := httpx.New(httpx.Config{Service: "test", CORSOrigins: tc.origins})
			app.Post("/things", func(c *fiber.Ctx) error { return c.SendStatus(http.StatusCreated) })
			resp, err := app.Test(preflight(tc.origin))
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tc.wantAllow {
				t.Fatalf("Access-Control-Allow-Origin = %q, want %q", got, tc.wantAllow)
			}
			if tc.wantAllow == "" {
				return
			}
			if resp.StatusCode != http.StatusNoContent {
				t.Errorf("preflight status %d, want 204", resp.StatusCode)
			}
			if m := resp.Header.Get("Access-Control-Allow-Methods"); !strings.Contains(m, "POST") || !strings.Contains(m, "PUT") {
				t.Errorf("Allow-Methods %q lacks POST or PUT", m)
			}
			h := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
			for _, want := range []string{"authorization", "content-type", "idempotency-key", "x-request-id", "x-action-token", "x-service-key"} {
				if !strings.Contains(h, want) {
					t.Errorf("Allow-Headers %q lacks %s", h, want)
				}
			}
			if resp.Header.Get("Access-Control-Allow-Credentials") != "" {
				t.Error("credentials must never be allowed")
			}
			// The actual request carries the origin and exposes the request id.
			r := httptest.NewRequest(http.MethodPost, "/things", nil)
			r.Header.Set("Origin", tc.origin)
			resp, err = app.Test(r)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusCreated || resp.Header.Get("Access-Control-Allow-Origin") != tc.wantAllow ||
				!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "X-Request-Id") {
				t.Errorf("POST from %s: %d, headers %v", tc.origin, resp.StatusCode, resp.Header)
			}
		})
	}
}
