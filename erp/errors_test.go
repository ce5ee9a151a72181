package erp_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/erp/erptest/fixtures"
	"github.com/platform/integrations/upstream"
)

// testTimeout is ERP_TIMEOUT in the failure tests: the timeouts below take exactly this long.
const testTimeout = time.Second

func mockTransport() *httpmock.MockTransport { return httpmock.NewMockTransport() }

// mockERP answers every call of every operation with body and HTTP 200.
func mockERP(t *testing.T, body string) *httpmock.MockTransport {
	t.Helper()
	mt := mockTransport()
	cfg := erp.Config{BaseURL: "http://erp.test"}
	mt.RegisterResponder(http.MethodPost, fixtures.LookupURL(cfg), httpmock.NewStringResponder(200, body))
	mt.RegisterResponder(http.MethodPost, fixtures.ClientsURL(cfg), httpmock.NewStringResponder(200, body))
	mt.RegisterResponder(http.MethodPost, fixtures.PaymentsURL(cfg), httpmock.NewStringResponder(200, body))
	return mt
}

func mockClient(t *testing.T, mt *httpmock.MockTransport) *erp.Client {
	t.Helper()
	c, err := erp.New(erp.Config{BaseURL: "http://erp.test", Timeout: testTimeout}, erp.WithHTTPClient(&http.Client{Transport: mt}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// allOps are the operations every failure path is run against.
var allOps = []string{erp.OpLookupClient, erp.OpSyncClient, erp.OpHandOverPayment}

// call runs op against c the way the credit service does. A hand-over sends identificacion as
// its numero_tarjeta: the fake's magic card numbers are the magic identificaciones' digits.
func call(ctx context.Context, c *erp.Client, op, identificacion, nombre string) error {
	switch op {
	case erp.OpLookupClient:
		_, err := c.LookupClient(ctx, "000598", identificacion)
		return err
	case erp.OpHandOverPayment:
		h := samplePayment()
		h.NumeroTarjeta = identificacion
		_, err := c.HandOverPayment(ctx, h)
		return err
	}
	_, err := c.SyncClient(ctx, erp.OperationCreate, erp.ClientPayload{CodigoEmpresa: "000598", NombreCliente: nombre, Identificacion: identificacion})
	return err
}

// wantErr describes an error; its upstream kind follows: Rejected for an *erp.Error,
// NotSent when notSent, OutcomeUnknown otherwise.
type wantErr struct {
	apiStatus   int    // > 0: an *erp.Error with this HTTPStatus
	apiMessage  string // its Message
	timeout     bool   // IsTimeout and errors.Is(err, context.DeadlineExceeded)
	transport   bool   // IsTransport
	notSent     bool   // the request never left
	undecodable bool   // errors.Is(err, erp.ErrUndecodable)
}

func (w wantErr) kind() upstream.Kind {
	switch {
	case w.apiStatus > 0:
		return upstream.Rejected
	case w.notSent:
		return upstream.NotSent
	}
	return upstream.OutcomeUnknown
}

// code is the ErrorCode: the HTTP status of a refusal outside 2xx.
func (w wantErr) code() string {
	if w.apiStatus == 0 || w.apiStatus == http.StatusOK {
		return ""
	}
	return strconv.Itoa(w.apiStatus)
}

func checkErr(t *testing.T, op string, err error, want wantErr) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	if !strings.HasPrefix(err.Error(), "erp: "+op+": ") {
		t.Errorf("error %q does not name the operation %s", err, op)
	}
	var apiErr *erp.Error
	isAPI := errors.As(err, &apiErr)
	if isAPI != (want.apiStatus > 0) {
		t.Fatalf("*erp.Error = %v, want %v (err %v)", isAPI, want.apiStatus > 0, err)
	}
	if isAPI {
		if apiErr.Op != op || apiErr.HTTPStatus != want.apiStatus || apiErr.Message != want.apiMessage {
			t.Errorf("Error{Op %q, HTTPStatus %d, Message %q}, want {%q, %d, %q}",
				apiErr.Op, apiErr.HTTPStatus, apiErr.Message, op, want.apiStatus, want.apiMessage)
		}
		if len(apiErr.Body) == 0 {
			t.Error("Error.Body is empty")
		}
	}
	e, ok := upstream.As(err)
	if !ok {
		t.Fatalf("err = %v (%T), want an upstream.Error", err, err)
	}
	if e.Kind() != want.kind() || e.Operation() != op || e.ErrorCode() != want.code() || e.ErrorMessage() != want.apiMessage || e.Timeout() != want.timeout {
		t.Errorf("kind %v, operation %q, code %q, message %q, timeout %t; want %v, %q, %q, %q, %t",
			e.Kind(), e.Operation(), e.ErrorCode(), e.ErrorMessage(), e.Timeout(), want.kind(), op, want.code(), want.apiMessage, want.timeout)
	}
	if got := erp.IsTransport(err); got != want.transport {
		t.Errorf("IsTransport = %v, want %v (err %v)", got, want.transport, err)
	}
	if got := erp.IsTimeout(err); got != want.timeout {
		t.Errorf("IsTimeout = %v, want %v (err %v)", got, want.timeout, err)
	}
	if got := errors.Is(err, context.DeadlineExceeded); got != want.timeout {
		t.Errorf("errors.Is(err, context.DeadlineExceeded) = %v, want %v", got, want.timeout)
	}
	if got := errors.Is(err, erp.ErrUndecodable); got != want.undecodable {
		t.Errorf("errors.Is(err, ErrUndecodable) = %v, want %v", got, want.undecodable)
	}
}

// TestFailures runs every failure path of every operation against the fake.
func TestFailures(t *testing.T) {
	type setup func(*erptest.Server, string)
	script := func(r erptest.Reaction) setup {
		return func(s *erptest.Server, op string) { s.Script(op, r) }
	}
	cases := []struct {
		name           string
		setup          setup
		identificacion string
		nombre         string
		want           wantErr
	}{
		{"error_api answer", script(erptest.BusinessError("cliente bloqueado")), "0102030405", "ANA",
			wantErr{apiStatus: 200, apiMessage: "cliente bloqueado"}},
		{"HTTP 400", script(erptest.BusinessError("Bad Request").WithStatus(400)), "0102030405", "ANA",
			wantErr{apiStatus: 400, apiMessage: "Bad Request"}},
		{"HTTP 404 with an HTML page", script(erptest.Raw(404, "<html>not found</html>")), "0102030405", "ANA",
			wantErr{apiStatus: 404, apiMessage: "Not Found"}},
		{"HTTP 500", script(erptest.BusinessError("base de datos caida").WithStatus(500)), "0102030405", "ANA",
			wantErr{apiStatus: 500, apiMessage: "base de datos caida"}},
		{"HTTP 503 without body", script(erptest.Raw(503, " ")), "0102030405", "ANA",
			wantErr{apiStatus: 503, apiMessage: "Service Unavailable"}},
		{"magic HTTP 500", nil, erptest.IdentificacionServerError, "ANA",
			wantErr{apiStatus: 500, apiMessage: "error interno del ERP"}},
		{"timeout at the configured deadline", script(erptest.Hang()), "0102030405", "ANA",
			wantErr{timeout: true, transport: true}},
		{"magic timeout", nil, erptest.IdentificacionTimeout, "ANA",
			wantErr{timeout: true, transport: true}},
		{"answer later than the deadline", script(erptest.Process().After(testTimeout + time.Second)), "0102030405", "ANA",
			wantErr{timeout: true, transport: true}},
		{"dropped connection", script(erptest.Drop()), "0102030405", "ANA",
			wantErr{transport: true}},
		{"undecodable answer", script(erptest.Raw(http.StatusOK, "<html><body>502 Bad Gateway</body></html>")), "0102030405", "ANA",
			wantErr{transport: true, undecodable: true}},
	}
	for _, op := range allOps {
		t.Run(op, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					srv := erptest.NewServer()
					t.Cleanup(srv.Close)
					if tc.setup != nil {
						tc.setup(srv, op)
					}
					c := newClient(t, srv, testTimeout)
					start := time.Now()
					err := call(t.Context(), c, op, tc.identificacion, tc.nombre)
					checkErr(t, op, err, tc.want)
					if tc.want.timeout {
						if elapsed := time.Since(start); elapsed < testTimeout {
							t.Errorf("gave up after %v, before the configured %v", elapsed, testTimeout)
						}
					}
					if n := srv.Calls(op); n != 1 {
						t.Errorf("the ERP saw %d calls, want exactly 1 (no retry)", n)
					}
				})
			}
		})
	}
}

func TestMagicErrorAPINombre(t *testing.T) {
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	c := newClient(t, srv, testTimeout)
	err := call(t.Context(), c, erp.OpSyncClient, "0102030405", erptest.NombreClienteErrorAPI)
	checkErr(t, erp.OpSyncClient, err, wantErr{apiStatus: 200, apiMessage: "ERROR_API: el ERP rechazo el cliente"})
	if _, found := srv.Client("000598", "0102030405"); found {
		t.Error("a rejected create was stored by the ERP")
	}
}

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there any more
	c, err := erp.New(erp.Config{BaseURL: "http://" + addr, Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range allOps {
		err := call(t.Context(), c, op, "0102030405", "ANA")
		checkErr(t, op, err, wantErr{transport: true, notSent: true})
		var ne *net.OpError
		if !errors.As(err, &ne) {
			t.Errorf("%s: %v does not carry the *net.OpError", op, err)
		}
	}
}

// The ERP sends its headers in time, then stalls in the middle of the body.
// stallingAnswer is an ERP that sends the headers and the start of an answer, then holds the
// rest until the caller gives up or release closes.
func stallingAnswer(release <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"error_api":false,"encon`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
}

func TestTimeoutWhileReadingTheBody(t *testing.T) {
	done := make(chan struct{})
	srv := httptest.NewServer(stallingAnswer(done))
	t.Cleanup(func() { close(done); srv.Close() })
	c, err := erp.New(erp.Config{BaseURL: srv.URL, Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.LookupClient(t.Context(), "000598", "0102030405")
	checkErr(t, erp.OpLookupClient, err, wantErr{timeout: true, transport: true})
}

// Answers the fake never gives but a real ERP might.
func TestOddAnswers(t *testing.T) {
	cases := []struct {
		name, op, body string
		want           wantErr
	}{
		{"cliente that is not an object", erp.OpLookupClient, `{"error_api":false,"encontrado":true,"cliente":"C-1"}`,
			wantErr{transport: true, undecodable: true}},
		{"encontrado not a boolean", erp.OpLookupClient, `{"error_api":false,"encontrado":"maybe"}`,
			wantErr{transport: true, undecodable: true}},
		{"error_api as 1 with message", erp.OpLookupClient, `{"error_api":1,"message":"down"}`,
			wantErr{apiStatus: 200, apiMessage: "down"}},
		{"error_api without mensaje", erp.OpSyncClient, `{"error_api":true}`,
			wantErr{apiStatus: 200, apiMessage: "error_api without mensaje"}},
		{"sync answer that is a JSON array", erp.OpSyncClient, `[]`,
			wantErr{transport: true, undecodable: true}},
		{"empty 200", erp.OpSyncClient, ``,
			wantErr{transport: true, undecodable: true}},
		{"hand-over answer without numero_documento", erp.OpHandOverPayment, `{"error_api":false,"mensaje":"ok","duplicado":false}`,
			wantErr{transport: true, undecodable: true}},
		{"hand-over answer with numero_documento null", erp.OpHandOverPayment, `{"error_api":false,"numero_documento":null}`,
			wantErr{transport: true, undecodable: true}},
		{"hand-over answer with a blank numero_documento", erp.OpHandOverPayment, `{"error_api":false,"numero_documento":" "}`,
			wantErr{transport: true, undecodable: true}},
		{"hand-over numero_documento that is a number", erp.OpHandOverPayment, `{"error_api":false,"numero_documento":100234}`,
			wantErr{transport: true, undecodable: true}},
		{"hand-over duplicado not a boolean", erp.OpHandOverPayment, `{"error_api":false,"numero_documento":"RC-1","duplicado":"maybe"}`,
			wantErr{transport: true, undecodable: true}},
		{"hand-over error_api with a document", erp.OpHandOverPayment, `{"error_api":true,"mensaje":"tarjeta desconocida","numero_documento":"RC-1"}`,
			wantErr{apiStatus: 200, apiMessage: "tarjeta desconocida"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mockClient(t, mockERP(t, tc.body))
			checkErr(t, tc.op, call(t.Context(), c, tc.op, "0102030405", "ANA"), tc.want)
		})
	}
}

func TestLookupAcceptsZeroOneBooleans(t *testing.T) {
	c := mockClient(t, mockERP(t, `{"error_api":0,"encontrado":1,"cliente":{"codigo_cliente":"C-1","inactivo":1}}`))
	res, err := c.LookupClient(t.Context(), "000598", "1")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found || !res.Client.Inactivo {
		t.Errorf("got %+v / %+v, want found and inactivo", res, res.Client)
	}
}

func TestOversizedAnswerIsATransportError(t *testing.T) {
	mt := mockTransport()
	big := `{"error_api":false,"encontrado":false,"pad":"` + strings.Repeat("x", erp.DefaultMaxResponseBytes) + `"}`
	mt.RegisterResponder(http.MethodPost, fixtures.LookupURL(erp.Config{BaseURL: "http://erp.test"}), httpmock.NewStringResponder(200, big))
	// A deadline a loaded machine never reaches while copying 4 MiB under -race: this test is
	// about the size, and a timeout would hide it.
	c, err := erp.New(erp.Config{BaseURL: "http://erp.test", Timeout: time.Minute}, erp.WithHTTPClient(&http.Client{Transport: mt}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.LookupClient(t.Context(), "000598", "1")
	checkErr(t, erp.OpLookupClient, err, wantErr{transport: true})
}

// The httpmock scenarios behave like the fake they were recorded from.
func TestHTTPMockScenarios(t *testing.T) {
	cases := []struct {
		scenario fixtures.Scenario
		lookup   wantErr
		sync     wantErr
		handOver wantErr
	}{
		{fixtures.ScenarioErrorAPI,
			wantErr{apiStatus: 200, apiMessage: "consulta externa no disponible"},
			wantErr{apiStatus: 200, apiMessage: "ERROR_API: el ERP rechazo el cliente"},
			wantErr{apiStatus: 200, apiMessage: "el ERP no pudo emitir el documento"}},
		{fixtures.ScenarioServerError,
			wantErr{apiStatus: 500, apiMessage: "error interno del ERP"},
			wantErr{apiStatus: 500, apiMessage: "error interno del ERP"},
			wantErr{apiStatus: 500, apiMessage: "error interno del ERP"}},
		{fixtures.ScenarioUndecodable,
			wantErr{transport: true, undecodable: true}, wantErr{transport: true, undecodable: true}, wantErr{transport: true, undecodable: true}},
		{fixtures.ScenarioRefused, wantErr{transport: true}, wantErr{transport: true}, wantErr{transport: true}},
		{fixtures.ScenarioTimeout, wantErr{transport: true, timeout: true}, wantErr{transport: true, timeout: true}, wantErr{transport: true, timeout: true}},
	}
	for _, tc := range cases {
		t.Run(string(tc.scenario), func(t *testing.T) {
			t.Parallel()
			mt := mockTransport()
			fixtures.RegisterScenario(mt, erp.Config{BaseURL: "http://erp.test"}, tc.scenario)
			c := mockClient(t, mt)
			checkErr(t, erp.OpLookupClient, call(t.Context(), c, erp.OpLookupClient, "0102030405", "ANA"), tc.lookup)
			checkErr(t, erp.OpSyncClient, call(t.Context(), c, erp.OpSyncClient, "0102030405", "ANA"), tc.sync)
			checkErr(t, erp.OpHandOverPayment, call(t.Context(), c, erp.OpHandOverPayment, "0102030405", "ANA"), tc.handOver)
		})
	}
	t.Run("success", func(t *testing.T) {
		mt := mockTransport()
		fixtures.RegisterResponders(mt, erp.Config{BaseURL: "http://erp.test"})
		c := mockClient(t, mt)
		res, err := c.LookupClient(t.Context(), "000598", "0102030405")
		if err != nil || res.Found {
			t.Fatalf("lookup = %+v, %v; want not found", res, err)
		}
		p := erp.ClientPayload{CodigoEmpresa: "000598", NombreCliente: "MARIA", Identificacion: "0102030405"}
		for _, op := range []erp.Operation{erp.OperationCreate, erp.OperationUpdate} {
			sr, err := c.SyncClient(t.Context(), op, p)
			if err != nil || sr.CodigoCliente != "C-0102030405" {
				t.Fatalf("%v = %+v, %v", op, sr, err)
			}
			want := map[erp.Operation]string{erp.OperationCreate: "cliente creado", erp.OperationUpdate: "cliente actualizado"}[op]
			if sr.Message != want {
				t.Errorf("%v answered %q, want %q", op, sr.Message, want)
			}
		}
		for event, want := range map[erp.PaymentEvent]string{erp.PaymentApplied: "RC-100234", erp.PaymentReversed: "NC-100234"} {
			h := samplePayment()
			h.Event = event
			res, err := c.HandOverPayment(t.Context(), h)
			if err != nil || res.NumeroDocumento != want || res.Duplicate {
				t.Errorf("hand-over %s = %+v, %v; want %s, not a duplicate", event, res, err, want)
			}
		}
	})
	t.Run("found", func(t *testing.T) {
		mt := mockTransport()
		fixtures.RegisterScenario(mt, erp.Config{BaseURL: "http://erp.test"}, fixtures.ScenarioFound)
		res, err := mockClient(t, mt).LookupClient(t.Context(), "000598", "0999999999")
		if err != nil || !res.Found || res.Client.CodigoCliente != "C-0999999999" {
			t.Fatalf("lookup = %+v, %v; want C-0999999999", res, err)
		}
	})
}

func TestErrorMessages(t *testing.T) {
	cases := []struct {
		err  *erp.Error
		want string
	}{
		{&erp.Error{Op: "SyncClient", HTTPStatus: 200, Message: "duplicado"}, "erp: SyncClient: rejected by the ERP (error_api): duplicado"},
		{&erp.Error{Op: "LookupClient", HTTPStatus: 502, Message: "Bad Gateway"}, "erp: LookupClient: HTTP 502: Bad Gateway"},
	}
	for _, tc := range cases {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestErrorIsErrorAPI(t *testing.T) {
	for status, want := range map[int]bool{200: true, 201: true, 400: false, 500: false, 302: false} {
		if got := (&erp.Error{HTTPStatus: status}).IsErrorAPI(); got != want {
			t.Errorf("HTTPStatus %d: IsErrorAPI = %v, want %v", status, got, want)
		}
	}
}

// A redirected POST would be replayed as a GET without body; the 3xx is reported instead.
func TestRedirectIsNotFollowed(t *testing.T) {
	followed := false
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+erp.DefaultLookupPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/elsewhere")
		w.WriteHeader(http.StatusFound)
		_, _ = w.Write([]byte("moved"))
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		followed = true
		_, _ = w.Write([]byte(`{"error_api":false,"encontrado":false}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := erp.New(erp.Config{BaseURL: srv.URL, Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.LookupClient(t.Context(), "000598", "0102030405")
	checkErr(t, erp.OpLookupClient, err, wantErr{apiStatus: http.StatusFound, apiMessage: "Found"})
	if followed {
		t.Error("the redirect was followed")
	}
}

// An injected RoundTripper that reports the end of the context in its own words still gives
// a timeout callers recognise.
func TestTimeoutReportedByTheRoundTripperInItsOwnWords(t *testing.T) {
	rt := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		<-req.Context().Done()
		return nil, errors.New("stream reset by proxy")
	})
	c, err := erp.New(erp.Config{BaseURL: "http://erp.test", Timeout: testTimeout}, erp.WithHTTPClient(&http.Client{Transport: rt}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.LookupClient(t.Context(), "000598", "0102030405")
	checkErr(t, erp.OpLookupClient, err, wantErr{timeout: true, transport: true})
	if !strings.Contains(err.Error(), "stream reset by proxy") {
		t.Errorf("the original cause is lost: %v", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// netTimeout is a network timeout as a transport reports it (a dialer's or a proxy's own
// deadline): a net.Error whose Timeout is true, not context.DeadlineExceeded.
type netTimeout struct{}

func (netTimeout) Error() string   { return "i/o timeout" }
func (netTimeout) Timeout() bool   { return true }
func (netTimeout) Temporary() bool { return true }

// stallingBody gives part of an answer, then blocks until ctx ends and fails in its own words.
type stallingBody struct {
	ctx  context.Context
	sent bool
}

func (b *stallingBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, `{"error_api":false,"encon`), nil
	}
	<-b.ctx.Done()
	return 0, errors.New("stream reset by proxy")
}
func (b *stallingBody) Close() error { return nil }

// TestEveryTimeoutIsDeadlineExceeded: however the time runs out (Config.Timeout, the caller's
// deadline, the injected http.Client's Timeout, a transport's own timeout, before or after the
// headers), errors.Is(err, context.DeadlineExceeded) and IsTimeout hold and the error is still
// a *TransportError naming the operation.
func TestEveryTimeoutIsDeadlineExceeded(t *testing.T) {
	const short = 200 * time.Millisecond
	hang := func(srv *erptest.Server, op string) { srv.Script(op, erptest.Hang()) }
	// stallBody sends the headers and the start of the answer, then stalls. It reads the
	// request first, so that the server notices when the client hangs up.
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	stallBody := stallingAnswer(release)
	cases := []struct {
		name    string
		timeout time.Duration                             // Config.Timeout
		ctx     time.Duration                             // the caller's deadline, when > 0
		fake    func(*erptest.Server, string)             // scripts the fake ERP, when set
		handler http.HandlerFunc                          // a hand-written ERP, when set
		hc      func(base http.RoundTripper) *http.Client // WithHTTPClient, when set
		notSent bool                                      // the dial timed out: nothing left
	}{
		{name: "Config.Timeout before the headers", timeout: short, fake: hang},
		{name: "Config.Timeout while reading the body", timeout: short, handler: stallBody},
		{name: "caller's deadline sooner than Config.Timeout", timeout: time.Minute, ctx: short, fake: hang},
		{name: "http.Client Timeout before the headers", timeout: time.Minute, fake: hang,
			hc: func(base http.RoundTripper) *http.Client { return &http.Client{Transport: base, Timeout: short} }},
		{name: "http.Client Timeout while reading the body", timeout: time.Minute, handler: stallBody,
			hc: func(base http.RoundTripper) *http.Client { return &http.Client{Transport: base, Timeout: short} }},
		{name: "transport reports a dial timeout", timeout: time.Minute, notSent: true,
			hc: func(http.RoundTripper) *http.Client {
				return &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
					return nil, &net.OpError{Op: "dial", Net: "tcp", Err: netTimeout{}}
				})}
			}},
		{name: "transport's body fails in its own words at the deadline", timeout: short,
			hc: func(http.RoundTripper) *http.Client {
				return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
						Body: &stallingBody{ctx: r.Context()}, Request: r}, nil
				})}
			}},
	}
	for _, op := range allOps {
		for _, tc := range cases {
			t.Run(op+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				var url string
				if tc.handler != nil {
					hs := httptest.NewServer(tc.handler)
					t.Cleanup(hs.Close)
					url = hs.URL
				} else {
					srv := erptest.NewServer()
					t.Cleanup(srv.Close)
					if tc.fake != nil {
						tc.fake(srv, op)
					}
					url = srv.URL
				}
				var opts []erp.Option
				if tc.hc != nil {
					tr := http.DefaultTransport.(*http.Transport).Clone()
					t.Cleanup(tr.CloseIdleConnections)
					opts = append(opts, erp.WithHTTPClient(tc.hc(tr)))
				}
				c, err := erp.New(erp.Config{BaseURL: url, Timeout: tc.timeout}, opts...)
				if err != nil {
					t.Fatal(err)
				}
				ctx := t.Context()
				if tc.ctx > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.ctx)
					defer cancel()
				}
				err = call(ctx, c, op, "0102030405", "ANA")
				checkErr(t, op, err, wantErr{timeout: true, transport: true, notSent: tc.notSent})
				var te *erp.TransportError
				if !errors.As(err, &te) || te.Op != op {
					t.Errorf("errors.As(*TransportError) = %+v, want Op %s", te, op)
				}
			})
		}
	}
}
