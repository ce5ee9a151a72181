package carrier_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/upstream"
)

const (
	sprUser    = "spr-user"
	sprCompany = "1790000000001"
	// The password has every character XML escapes, so that the tests see
	// both the clear and the escaped form.
	sprPassword = `pa<ss&"w0rd'>`
	// What the password looks like on the wire, escaped by encoding/xml.
	sprPasswordEscaped = `pa&lt;ss&amp;&#34;w0rd&#39;&gt;`
)

func newServer(t *testing.T, opts ...carriertest.Option) *carriertest.Server {
	t.Helper()
	srv := carriertest.NewServer(append([]carriertest.Option{carriertest.WithCredentials(sprUser, sprPassword, sprCompany)}, opts...)...)
	t.Cleanup(srv.Close)
	return srv
}

func config(url string, timeout time.Duration) carrier.Config {
	return carrier.Config{URL: url, User: sprUser, Password: sprPassword, CompanyID: sprCompany, Timeout: timeout}
}

func newClient(t *testing.T, cfg carrier.Config, opts ...carrier.Option) *carrier.Client {
	t.Helper()
	c, err := carrier.New(cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func topup(id, subscriber string) carrier.TopupRequest {
	return carrier.TopupRequest{
		ExternalOperation:     carrier.ExternalOperationPins,
		ExternalTransactionID: id,
		OfferID:               "31",
		SubscriberID:          subscriber,
		Quantity:              1,
	}
}

func TestTopupSuccess(t *testing.T) {
	srv := newServer(t)
	c := newClient(t, config(srv.URL, 2*time.Second))
	res, err := c.Topup(t.Context(), topup("T-SUCCESS-1", "593987654321"))
	if err != nil {
		t.Fatal(err)
	}
	entry, ok := srv.Entry("T-SUCCESS-1")
	if !ok || entry.Status != carrier.StatusSuccess || entry.SubscriberID != "593987654321" || entry.OfferID != "31" || entry.Quantity != 1 {
		t.Fatalf("ledger entry = %+v, %v", entry, ok)
	}
	want := carrier.Result{Status: "SUCCESS", IDCodigo: "0", IDRecarga: entry.IDRecarga, Mensaje: carriertest.MessageApplied, SystemMessage: "OK", ResultCode: "0", Diagnostic: "OK"}
	got := *res
	got.Exchange = carrier.Exchange{}
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("Result = %+v, want %+v", got, want)
	}
	ex := res.Exchange
	if ex.Function != carrier.FunctionTopup || ex.HTTPStatus != 200 || ex.Duration <= 0 ||
		!strings.Contains(string(ex.Request), `<data name="SUBSCRIBERID">593987654321</data>`) ||
		!strings.Contains(string(ex.Response), `<data name="ID_RECARGA">`+entry.IDRecarga+`</data>`) {
		t.Errorf("Exchange = %+v\nrequest %s\nresponse %s", ex, ex.Request, ex.Response)
	}
	if n := srv.Calls(carrier.FunctionTopup); n != 1 {
		t.Errorf("fake saw %d top-ups, want 1", n)
	}
}

// TestMagicSubscribers runs the design's magic subscribers through the
// client and checks the kind of each failure.
func TestMagicSubscribers(t *testing.T) {
	tests := []struct {
		subscriber  string
		kind        upstream.Kind // 0: success
		timeout     bool
		ipForbidden bool
		code        string // ID_CODIGO of the business error
		ledger      string // the fake's ledger status afterwards, "" for none
	}{
		{subscriber: carriertest.SubscriberNoBalance, kind: upstream.Rejected, code: "1", ledger: carrier.StatusError},
		{subscriber: carriertest.SubscriberIPNotAuthorized, kind: upstream.Fault, ipForbidden: true},
		{subscriber: carriertest.SubscriberTimeout, kind: upstream.OutcomeUnknown, timeout: true},
		{subscriber: carriertest.SubscriberLateSuccess, kind: upstream.OutcomeUnknown, timeout: true, ledger: carrier.StatusSuccess},
		{subscriber: "593912345678", ledger: carrier.StatusSuccess},
		{subscriber: "593812345678", ledger: carrier.StatusSuccess},
	}
	for _, tt := range tests {
		t.Run(tt.subscriber, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			c := newClient(t, config(srv.URL, 500*time.Millisecond))
			id := "T-MAGIC-" + tt.subscriber
			res, err := c.Topup(t.Context(), topup(id, tt.subscriber))
			if got := upstream.KindOf(err); got != tt.kind || (err == nil) != (tt.kind == 0) {
				t.Fatalf("kind = %v (%v), want %v", got, err, tt.kind)
			}
			if carrier.IsTimeout(err) != tt.timeout || errors.Is(err, context.DeadlineExceeded) != tt.timeout {
				t.Errorf("IsTimeout(%v) = %v, want %v", err, carrier.IsTimeout(err), tt.timeout)
			}
			if errors.Is(err, carrier.ErrIPNotAuthorized) != tt.ipForbidden {
				t.Errorf("errors.Is(%v, ErrIPNotAuthorized) = %v", err, !tt.ipForbidden)
			}
			var be *carrier.Error
			if errors.As(err, &be) != (tt.code != "") || (be != nil && (be.Code != tt.code || be.Message != carriertest.MessageNoBalance)) {
				t.Errorf("business error = %+v, want code %q", be, tt.code)
			}
			entry, ok := srv.Entry(id)
			if ok != (tt.ledger != "") || entry.Status != tt.ledger {
				t.Errorf("ledger = %+v (%v), want status %q", entry, ok, tt.ledger)
			}
			if len(res.Exchange.Request) == 0 {
				t.Error("no audit copy of the request")
			}
			if tt.timeout != (res.Exchange.Response == nil) {
				t.Errorf("Exchange.Response = %q", res.Exchange.Response)
			}
		})
	}
}

// TestScriptedFailures covers each failure the fake can be scripted with and
// what the client makes of it, audit copy included.
func TestScriptedFailures(t *testing.T) {
	tests := []struct {
		name     string
		reaction carriertest.Reaction
		check    func(t *testing.T, err error)
		kind     upstream.Kind
		answered bool   // an HTTP answer arrived
		ledger   string // ledger status right after the call
	}{
		{
			name: "business error with a code", reaction: carriertest.BusinessError("42", "offer suspended"),
			kind: upstream.Rejected, answered: true, ledger: carrier.StatusError,
			check: func(t *testing.T, err error) {
				var be *carrier.Error
				if !errors.As(err, &be) || be.Code != "42" || be.Message != "offer suspended" || be.Op != carrier.FunctionTopup {
					t.Errorf("err = %#v", err)
				}
			},
		},
		{
			name: "fault in HTTP 500", reaction: carriertest.Fault("soap:Server", "SPR down"),
			kind: upstream.Fault, answered: true,
			check: func(t *testing.T, err error) {
				var fe *carrier.FaultError
				if !errors.As(err, &fe) || fe.Code != "soap:Server" || fe.String != "SPR down" || fe.HTTPStatus != 500 || errors.Is(err, carrier.ErrIPNotAuthorized) {
					t.Errorf("err = %#v", err)
				}
			},
		},
		{
			name: "fault 350 in HTTP 200", reaction: carriertest.Fault("350", "IP not allowed").WithStatus(200),
			kind: upstream.Fault, answered: true,
			check: func(t *testing.T, err error) {
				var fe *carrier.FaultError
				if !errors.As(err, &fe) || fe.HTTPStatus != 200 || !errors.Is(err, carrier.ErrIPNotAuthorized) {
					t.Errorf("err = %#v", err)
				}
			},
		},
		{
			name: "dropped connection", reaction: carriertest.Drop(),
			kind: upstream.OutcomeUnknown,
			check: func(t *testing.T, err error) {
				if !carrier.IsTransport(err) || carrier.IsTimeout(err) || !strings.Contains(err.Error(), carrier.FunctionTopup) {
					t.Errorf("err = %v", err)
				}
			},
		},
		{
			name: "no answer until the deadline", reaction: carriertest.Hang(),
			kind: upstream.OutcomeUnknown,
			check: func(t *testing.T, err error) {
				if !carrier.IsTimeout(err) {
					t.Errorf("err = %v, want a timeout", err)
				}
			},
		},
		{
			name: "late success", reaction: carriertest.LateSuccess(),
			kind: upstream.OutcomeUnknown, ledger: carrier.StatusSuccess,
			check: func(t *testing.T, err error) {
				if !carrier.IsTimeout(err) {
					t.Errorf("err = %v, want a timeout", err)
				}
			},
		},
		{
			name: "bad HTTP status", reaction: carriertest.Raw(503, "<html>maintenance</html>"),
			kind: upstream.OutcomeUnknown, answered: true,
			check: func(t *testing.T, err error) {
				var te *carrier.TransportError
				if !errors.As(err, &te) || te.HTTPStatus != 503 || !errors.Is(err, carrier.ErrBadStatus) {
					t.Errorf("err = %#v", err)
				}
			},
		},
		{
			name: "business error in HTTP 500",
			reaction: carriertest.Raw(500, `<umsprot version="1"><exec_rsp result="1" diagnostic="rejected">`+
				`<data name="MENSAJE">no balance</data><data name="ID_CODIGO">1</data><data name="STATUS">ERROR</data></exec_rsp></umsprot>`),
			kind: upstream.Rejected, answered: true,
			check: func(t *testing.T, err error) {
				var be *carrier.Error
				if !errors.As(err, &be) || be.Code != "1" || be.Message != "no balance" || carrier.IsTransport(err) || errors.Is(err, carrier.ErrBadStatus) {
					t.Errorf("err = %#v, want the carrier's business error", err)
				}
			},
		},
		{
			name: "garbage in HTTP 200", reaction: carriertest.Raw(200, "OK"),
			kind: upstream.OutcomeUnknown, answered: true,
			check: func(t *testing.T, err error) {
				if !errors.Is(err, carrier.ErrMalformedAnswer) || !carrier.IsTransport(err) {
					t.Errorf("err = %v", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			srv.Script(carrier.FunctionTopup, tt.reaction)
			c := newClient(t, config(srv.URL, 500*time.Millisecond))
			res, err := c.Topup(t.Context(), topup("T-SCRIPT-1", "593987654321"))
			if got := upstream.KindOf(err); got != tt.kind {
				t.Fatalf("kind = %v (%v), want %v", got, err, tt.kind)
			}
			tt.check(t, err)
			if res == nil || len(res.Exchange.Request) == 0 {
				t.Fatalf("Result %+v has no audit copy", res)
			}
			if (res.Exchange.HTTPStatus != 0) != tt.answered || (res.Exchange.Response != nil) != tt.answered {
				t.Errorf("Exchange status %d response %q, answered %v", res.Exchange.HTTPStatus, res.Exchange.Response, tt.answered)
			}
			if tt.kind != upstream.Rejected && res.Diagnostic == "" {
				t.Errorf("no diagnostic for a call of kind %v", tt.kind)
			}
			if entry, _ := srv.Entry("T-SCRIPT-1"); entry.Status != tt.ledger {
				t.Errorf("ledger status %q, want %q", entry.Status, tt.ledger)
			}
			// The next call is not scripted any more.
			if _, err := c.Topup(t.Context(), topup("T-SCRIPT-2", "593987654321")); err != nil {
				t.Errorf("unscripted call: %v", err)
			}
		})
	}
}

// A carrier slower than our deadline that still commits: the call times
// out, the ledger shows the top-up afterwards, and the query reconciles it.
func TestDelayPastTheDeadline(t *testing.T) {
	srv := newServer(t)
	srv.Script(carrier.FunctionTopup, carriertest.Process().After(700*time.Millisecond))
	c := newClient(t, config(srv.URL, 300*time.Millisecond))
	_, err := c.Topup(t.Context(), topup("T-SLOW-1", "593987654321"))
	if !carrier.IsTimeout(err) || upstream.KindOf(err) != upstream.OutcomeUnknown {
		t.Fatalf("err = %v, want a timeout, outcome unknown", err)
	}
	var entry carriertest.Entry
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if entry, _ = srv.Entry("T-SLOW-1"); entry.Status != "" {
			break
		}
	}
	if entry.Status != carrier.StatusSuccess {
		t.Fatalf("ledger = %+v, want the late SUCCESS", entry)
	}
	res, err := c.QueryRecharge(t.Context(), carrier.QueryRequest{ExternalTransactionID: "T-SLOW-1", OfferID: "31"})
	if err != nil || res.IDRecarga != entry.IDRecarga {
		t.Fatalf("query = %+v, %v", res, err)
	}
}

func TestContextDeadlineWinsWhenSooner(t *testing.T) {
	srv := newServer(t)
	c := newClient(t, config(srv.URL, 20*time.Second))
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Topup(ctx, topup("T-CTX-1", carriertest.SubscriberTimeout))
	if !carrier.IsTimeout(err) {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Errorf("waited %v: the context's 200 ms deadline was not applied", waited)
	}
}

func TestCallerCancels(t *testing.T) {
	srv := newServer(t)
	c := newClient(t, config(srv.URL, 20*time.Second))
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := c.Topup(ctx, topup("T-CANCEL-1", carriertest.SubscriberTimeout))
	if !errors.Is(err, context.Canceled) || carrier.IsTimeout(err) || upstream.KindOf(err) != upstream.OutcomeUnknown {
		t.Fatalf("err = %v, want context.Canceled, outcome unknown", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	// A key in the URL's userinfo or query never reaches the error, which is stored and shown.
	c := newClient(t, config("http://spr:url-pass@"+addr+"/spr?token=url-token", time.Second))
	res, err := c.Topup(t.Context(), topup("T-REFUSED-1", "593987654321"))
	if strings.Contains(err.Error(), "url-token") || strings.Contains(err.Error(), "url-pass") || strings.Contains(res.Diagnostic, "url-token") {
		t.Errorf("the URL's secrets reach the error: %q, diagnostic %q", err, res.Diagnostic)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) || !carrier.IsTransport(err) || carrier.IsTimeout(err) || upstream.KindOf(err) != upstream.NotSent {
		t.Fatalf("err = %v, want connection refused, not sent", err)
	}
	if !strings.Contains(err.Error(), carrier.FunctionTopup) || res.Exchange.Response != nil || len(res.Exchange.Request) == 0 {
		t.Errorf("err %q, exchange %+v", err, res.Exchange)
	}
}

// A repeated EXTERNALTRANSACTIONID does not top up twice.
func TestTopupRepeatedID(t *testing.T) {
	srv := newServer(t)
	c := newClient(t, config(srv.URL, 2*time.Second))
	before, _ := srv.Stock("31")
	first, err := c.Topup(t.Context(), topup("T-REPEAT-1", "593987654321"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Topup(t.Context(), topup("T-REPEAT-1", "593987654321"))
	if err != nil {
		t.Fatal(err)
	}
	if again.IDRecarga != first.IDRecarga || string(again.Exchange.Response) != string(first.Exchange.Response) {
		t.Errorf("repeat answered %q, first %q", again.Exchange.Response, first.Exchange.Response)
	}
	after, _ := srv.Stock("31")
	if before.Available-after.Available != 1 {
		t.Errorf("stock went from %d to %d, want one unit taken", before.Available, after.Available)
	}
	if entry, _ := srv.Entry("T-REPEAT-1"); entry.Calls != 2 || srv.Calls(carrier.FunctionTopup) != 2 {
		t.Errorf("entry calls %d, fake calls %d, want 2 and 2", entry.Calls, srv.Calls(carrier.FunctionTopup))
	}

	other := topup("T-REPEAT-1", "593912345678")
	_, err = c.Topup(t.Context(), other)
	var be *carrier.Error
	if !errors.As(err, &be) || be.Code != carriertest.CodeDuplicateID {
		t.Errorf("same id, other subscriber: err = %v, want ID_CODIGO %s", err, carriertest.CodeDuplicateID)
	}
}

func TestQueryRecharge(t *testing.T) {
	srv := newServer(t)
	// Calls that must answer get a deadline a loaded test machine never reaches;
	// the two that time out on purpose get a short one.
	c := newClient(t, config(srv.URL, 10*time.Second))
	impatient := newClient(t, config(srv.URL, 500*time.Millisecond))
	ok, err := c.Topup(t.Context(), topup("Q-OK", "593987654321"))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Topup(t.Context(), topup("Q-NO-BALANCE", carriertest.SubscriberNoBalance))
	_, _ = impatient.Topup(t.Context(), topup("Q-LATE", carriertest.SubscriberLateSuccess))
	_, _ = impatient.Topup(t.Context(), topup("Q-TIMEOUT", carriertest.SubscriberTimeout))
	wrongPassword := config(srv.URL, 10*time.Second)
	wrongPassword.Password = "guess"

	tests := []struct {
		name      string
		client    *carrier.Client
		id, offer string
		code      string // "" for success
		message   string
		idRecarga string
	}{
		{name: "successful top-up", id: "Q-OK", offer: "31", message: carriertest.MessageFound, idRecarga: ok.IDRecarga},
		{name: "late success is found", id: "Q-LATE", offer: "31", message: carriertest.MessageFound},
		{name: "unknown id", id: "Q-NEVER", offer: "31", code: "1", message: carriertest.MessageNotFound},
		{name: "timed out, never committed", id: "Q-TIMEOUT", offer: "31", code: "1", message: carriertest.MessageNotFound},
		{name: "wrong product", id: "Q-OK", offer: "30", code: "1", message: carriertest.MessageWrongProduct},
		{name: "failed top-up", id: "Q-NO-BALANCE", offer: "31", code: "1", message: carriertest.MessageNoBalance},
		{name: "invalid credentials", client: newClient(t, wrongPassword), id: "Q-OK", offer: "31", code: "1", message: carriertest.MessageInvalidCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := c
			if tt.client != nil {
				client = tt.client
			}
			res, err := client.QueryRecharge(t.Context(), carrier.QueryRequest{ExternalTransactionID: tt.id, OfferID: tt.offer})
			if tt.code == "" {
				if err != nil || res.Status != carrier.StatusSuccess || res.IDCodigo != "0" {
					t.Fatalf("got %+v, %v, want SUCCESS", res, err)
				}
				if tt.idRecarga != "" && res.IDRecarga != tt.idRecarga {
					t.Errorf("ID_RECARGA %q, want %q", res.IDRecarga, tt.idRecarga)
				}
			} else {
				var be *carrier.Error
				if !errors.As(err, &be) || be.Code != tt.code || be.Status != carrier.StatusError || be.Op != carrier.FunctionQueryRecharge {
					t.Fatalf("err = %v, want STATUS=ERROR ID_CODIGO %s", err, tt.code)
				}
			}
			if res.Mensaje != tt.message {
				t.Errorf("MENSAJE %q, want %q", res.Mensaje, tt.message)
			}
		})
	}
	if n := srv.Calls(carrier.FunctionQueryRecharge); n != len(tests) {
		t.Errorf("fake saw %d queries, want %d", n, len(tests))
	}
}

func TestInventory(t *testing.T) {
	srv := newServer(t, carriertest.WithStock("31", "Pin 3", 10))
	c := newClient(t, config(srv.URL, time.Second))
	req := topup("I-1", "593987654321")
	req.Quantity = 3
	if _, err := c.Topup(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	inv, err := c.Inventory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []carrier.InventoryItem{
		{OfferID: "31", Description: "Pin 3", Available: 7},
		{OfferID: "30", Description: "Pin 5", Available: 1000},
		{OfferID: "151", Description: "Pin 10", Available: 1000},
		{OfferID: "150", Description: "Datos", Available: 1000},
	}
	if fmt.Sprint(inv.Items) != fmt.Sprint(want) || inv.Status != carrier.StatusSuccess || inv.Exchange.Function != carrier.FunctionQueryInventory {
		t.Errorf("inventory = %+v, want items %+v", inv, want)
	}

	req = topup("I-2", "593987654321")
	req.Quantity = 8
	_, err = c.Topup(t.Context(), req)
	var be *carrier.Error
	if !errors.As(err, &be) || be.Code != carriertest.CodeOutOfStock {
		t.Errorf("top-up past the stock: err = %v, want ID_CODIGO %s", err, carriertest.CodeOutOfStock)
	}

	srv.Script(carrier.FunctionQueryInventory, carriertest.Raw(200,
		`<umsprot version="1"><exec_rsp result="0"><data name="ID_CODIGO">0</data><data name="STATUS">SUCCESS</data><data name="OFFERID">31</data></exec_rsp></umsprot>`))
	inv, err = c.Inventory(t.Context())
	if !errors.Is(err, carrier.ErrMalformedAnswer) || inv == nil || inv.Items != nil || inv.Exchange.Response == nil {
		t.Errorf("offer without CANTIDAD: %+v, %v", inv, err)
	}

	wrong := config(srv.URL, time.Second)
	wrong.CompanyID = "other"
	inv, err = newClient(t, wrong).Inventory(t.Context())
	if !errors.As(err, &be) || be.Code != "1" || be.Message != carriertest.MessageInvalidCredentials || inv == nil || inv.Items != nil {
		t.Errorf("wrong company: %+v, %v", inv, err)
	}
}

func TestInvalidRequestSendsNothing(t *testing.T) {
	srv := newServer(t)
	c := newClient(t, config(srv.URL, time.Second))
	tests := []struct {
		name string
		call func() (*carrier.Result, error)
	}{
		{"no operation", func() (*carrier.Result, error) {
			r := topup("X", "593987654321")
			r.ExternalOperation = ""
			return c.Topup(t.Context(), r)
		}},
		{"unknown operation", func() (*carrier.Result, error) {
			r := topup("X", "593987654321")
			r.ExternalOperation = "RECARGA_SALDO"
			return c.Topup(t.Context(), r)
		}},
		{"no id", func() (*carrier.Result, error) { return c.Topup(t.Context(), topup(" ", "593987654321")) }},
		{"no subscriber", func() (*carrier.Result, error) { return c.Topup(t.Context(), topup("X", "")) }},
		{"no offer", func() (*carrier.Result, error) {
			r := topup("X", "593987654321")
			r.OfferID = ""
			return c.Topup(t.Context(), r)
		}},
		{"zero quantity", func() (*carrier.Result, error) {
			r := topup("X", "593987654321")
			r.Quantity = 0
			return c.Topup(t.Context(), r)
		}},
		{"query without offer", func() (*carrier.Result, error) {
			return c.QueryRecharge(t.Context(), carrier.QueryRequest{ExternalTransactionID: "X"})
		}},
		{"query without id", func() (*carrier.Result, error) {
			return c.QueryRecharge(t.Context(), carrier.QueryRequest{OfferID: "31"})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.call()
			if !errors.Is(err, carrier.ErrInvalidRequest) || upstream.KindOf(err) != 0 {
				t.Fatalf("err = %v (kind %v), want ErrInvalidRequest, no upstream kind", err, upstream.KindOf(err))
			}
			if res == nil || res.Exchange.Request != nil {
				t.Errorf("Result = %+v, want one with no request", res)
			}
		})
	}
	if n := srv.Calls(carrier.FunctionTopup) + srv.Calls(carrier.FunctionQueryRecharge); n != 0 {
		t.Errorf("the fake received %d calls", n)
	}
}

type labelRecorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	ops  []string
}

func (l *labelRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	op, ok := carrier.OperationFromContext(r.Context())
	if !ok {
		op = "(none)"
	}
	l.mu.Lock()
	l.ops = append(l.ops, op)
	l.mu.Unlock()
	return l.base.RoundTrip(r)
}

// A RoundTripper injected for metrics sees the carrier function of every
// request, and the token requests of OAuth2 as such.
func TestOperationFromContext(t *testing.T) {
	srv := newServer(t, carriertest.WithOAuth2("cid", "csecret", time.Hour))
	rec := &labelRecorder{base: http.DefaultTransport}
	cfg := config(srv.URL, time.Second)
	cfg.OAuth2 = &carrier.OAuth2Config{TokenURL: srv.TokenURL(), ClientID: "cid", ClientSecret: "csecret"}
	c := newClient(t, cfg, carrier.WithHTTPClient(&http.Client{Transport: rec}))
	if _, err := c.Topup(t.Context(), topup("OP-1", "593987654321")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.QueryRecharge(t.Context(), carrier.QueryRequest{ExternalTransactionID: "OP-1", OfferID: "31"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Inventory(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := []string{carrier.OperationOAuth2Token, carrier.FunctionTopup, carrier.FunctionQueryRecharge, carrier.FunctionQueryInventory}
	if fmt.Sprint(rec.ops) != fmt.Sprint(want) {
		t.Errorf("labels %v, want %v", rec.ops, want)
	}
	if _, ok := carrier.OperationFromContext(t.Context()); ok {
		t.Error("a context the client never touched has an operation")
	}
}

func TestOAuth2(t *testing.T) {
	tests := []struct {
		name       string
		lifetime   time.Duration
		secret     string
		calls      int
		wantTokens int
		wantErr    bool
	}{
		// x/oauth2 renews a token 10 s before it expires, so a 5 s token is
		// expired on arrival and every call needs a new one.
		{name: "cached until it expires", lifetime: time.Hour, secret: "csecret", calls: 5, wantTokens: 1},
		{name: "renewed when expired", lifetime: 5 * time.Second, secret: "csecret", calls: 3, wantTokens: 3},
		{name: "wrong client secret", lifetime: time.Hour, secret: "wrong", calls: 1, wantTokens: 0, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, carriertest.WithOAuth2("cid", "csecret", tt.lifetime))
			cfg := config(srv.URL, time.Second)
			cfg.OAuth2 = &carrier.OAuth2Config{TokenURL: srv.TokenURL(), ClientID: "cid", ClientSecret: tt.secret}
			c := newClient(t, cfg)
			for i := range tt.calls {
				_, err := c.Topup(t.Context(), topup(fmt.Sprintf("OAUTH-%d", i), "593987654321"))
				if (err != nil) != tt.wantErr {
					t.Fatalf("call %d: err = %v, wantErr %v", i, err, tt.wantErr)
				}
				if err != nil && (!carrier.IsTransport(err) || upstream.KindOf(err) != upstream.NotSent || strings.Contains(err.Error(), tt.secret)) {
					t.Errorf("token failure: %v", err)
				}
			}
			if got := srv.TokensIssued(); got != tt.wantTokens {
				t.Errorf("tokens issued %d, want %d", got, tt.wantTokens)
			}
			if tt.wantErr && srv.Calls(carrier.FunctionTopup) != 0 {
				t.Error("a call without a token reached the SPR")
			}
		})
	}

	t.Run("SPR refuses a call without a token", func(t *testing.T) {
		srv := newServer(t, carriertest.WithOAuth2("cid", "csecret", time.Hour))
		_, err := newClient(t, config(srv.URL, time.Second)).Topup(t.Context(), topup("OAUTH-NONE", "593987654321"))
		var te *carrier.TransportError
		if !errors.As(err, &te) || te.HTTPStatus != http.StatusUnauthorized || !errors.Is(err, carrier.ErrBadStatus) {
			t.Errorf("err = %v, want HTTP 401 as a bad status", err)
		}
	})
}

// Keep-alive connections are reused: sequential calls share one TCP
// connection.
func TestConnectionReuse(t *testing.T) {
	srv := newServer(t)
	var dials atomic.Int32
	tr := http.DefaultTransport.(*http.Transport).Clone()
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dial(ctx, network, addr)
	}
	defer tr.CloseIdleConnections()
	c := newClient(t, config(srv.URL, time.Second), carrier.WithHTTPClient(&http.Client{Transport: tr}))
	for i := range 50 {
		_, err := c.Topup(t.Context(), topup(fmt.Sprintf("REUSE-%d", i), "593987654321"))
		if err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			// Error answers must leave the connection reusable too.
			_, _ = c.Topup(t.Context(), topup(fmt.Sprintf("REUSE-ERR-%d", i), carriertest.SubscriberNoBalance))
			_, _ = c.Topup(t.Context(), topup(fmt.Sprintf("REUSE-FAULT-%d", i), carriertest.SubscriberIPNotAuthorized))
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d connections opened, want 1", n)
	}
}
