package carrier_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/upstream"
)

// wireTap keeps the bodies that really went out.
type wireTap struct {
	base   http.RoundTripper
	mu     sync.Mutex
	bodies [][]byte
}

func (w *wireTap) RoundTrip(r *http.Request) (*http.Response, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body.Close()
	w.mu.Lock()
	w.bodies = append(w.bodies, b)
	w.mu.Unlock()
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(b))
	return w.base.RoundTrip(r)
}

// The PASSWORD value exists only on the wire: never in the audit copies,
// the Result, the errors or the logs, whatever the SPR answers, even an SPR
// that echoes it.
func TestPasswordNeverLeaks(t *testing.T) {
	srv := newServer(t)
	tap := &wireTap{base: http.DefaultTransport}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := newClient(t, config(srv.URL, 300*time.Millisecond), carrier.WithHTTPClient(&http.Client{Transport: tap}), carrier.WithLogger(logger))

	query := func(id string) func() (*carrier.Result, error) {
		return func() (*carrier.Result, error) {
			return c.QueryRecharge(t.Context(), carrier.QueryRequest{ExternalTransactionID: id, OfferID: "31"})
		}
	}
	if _, err := c.Topup(t.Context(), topup("PW-1", "593987654321")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		script carriertest.Reaction
		call   func() (*carrier.Result, error)
	}{
		{name: "query success", call: query("PW-1")},
		{name: "query not found", call: query("PW-404")},
		{name: "inventory", call: func() (*carrier.Result, error) {
			inv, err := c.Inventory(t.Context())
			return &inv.Result, err
		}},
		{name: "echoed in MENSAJE", script: carriertest.BusinessError("1", "bad PASSWORD "+sprPassword), call: query("PW-1")},
		{name: "echoed escaped in a fault", script: carriertest.Fault("soap:Client", "PASSWORD="+sprPassword), call: query("PW-1")},
		{name: "echoed in a bad status", script: carriertest.Raw(500, "denied for "+sprPassword), call: query("PW-1")},
		{name: "echoed in garbage", script: carriertest.Raw(200, "<umsprot><exec_rsp>"+sprPasswordEscaped), call: query("PW-1")},
		{name: "echoed in a malformed answer", script: carriertest.Raw(200, `<umsprot version="1"><exec_rsp diagnostic="`+sprPasswordEscaped+`"><data name="STATUS">MAYBE `+sprPasswordEscaped+`</data></exec_rsp></umsprot>`), call: query("PW-1")},
		{name: "timeout", script: carriertest.Hang(), call: query("PW-1")},
		{name: "dropped", script: carriertest.Drop(), call: query("PW-1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.script != (carriertest.Reaction{}) {
				srv.Script(carrier.FunctionQueryRecharge, tt.script)
			}
			res, err := tt.call()
			if res == nil || len(res.Exchange.Request) == 0 {
				t.Fatalf("no audit copy: %+v", res)
			}
			if !bytes.Contains(res.Exchange.Request, []byte(`<data name="PASSWORD">********</data>`)) {
				t.Errorf("audit request does not show the masked PASSWORD:\n%s", res.Exchange.Request)
			}
			texts := map[string]string{
				"request":  string(res.Exchange.Request),
				"response": string(res.Exchange.Response),
				"result":   fmt.Sprintf("%+v", *res),
			}
			if err != nil {
				var be *carrier.Error
				var fe *carrier.FaultError
				var te *carrier.TransportError
				texts["error"] = err.Error()
				switch {
				case errors.As(err, &be):
					texts["error fields"] = fmt.Sprintf("%#v", *be)
				case errors.As(err, &fe):
					texts["error fields"] = fmt.Sprintf("%#v", *fe)
				case errors.As(err, &te):
					texts["error fields"] = fmt.Sprintf("%+v", te.Err)
				}
			}
			for where, text := range texts {
				for _, secret := range []string{sprPassword, sprPasswordEscaped} {
					if strings.Contains(text, secret) {
						t.Errorf("%s shows the password: %s", where, text)
					}
				}
			}
		})
	}

	t.Run("logs", func(t *testing.T) {
		if !strings.Contains(logs.String(), "function="+carrier.FunctionQueryRecharge) {
			t.Fatalf("the client logged nothing useful:\n%s", logs.String())
		}
		for _, secret := range []string{sprPassword, sprPasswordEscaped} {
			if strings.Contains(logs.String(), secret) {
				t.Errorf("logs show the password:\n%s", logs.String())
			}
		}
	})

	t.Run("the clear password did go on the wire", func(t *testing.T) {
		tap.mu.Lock()
		defer tap.mu.Unlock()
		var withPassword int
		for _, b := range tap.bodies {
			if bytes.Contains(b, []byte(`<data name="PASSWORD">`+sprPasswordEscaped+`</data>`)) {
				withPassword++
			}
		}
		if withPassword != len(tests) {
			t.Errorf("%d of %d requests carried the password", withPassword, len(tests))
		}
	})
}

// The log line of a call names its kind: "ok" for a success, otherwise the
// upstream.Kind of the error. A request refused before any call logs nothing.
func TestLogKind(t *testing.T) {
	srv := newServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/spr"
	ln.Close()
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	c := newClient(t, config(srv.URL, 300*time.Millisecond), carrier.WithLogger(logger))
	down := newClient(t, config(refused, 300*time.Millisecond), carrier.WithLogger(logger))

	tests := []struct {
		name   string
		script *carriertest.Reaction
		client *carrier.Client
		want   string // "" for no line
	}{
		{name: "success", want: "ok"},
		{name: "business error", script: ptr(carriertest.BusinessError("1", "no balance")), want: upstream.Rejected.String()},
		{name: "fault", script: ptr(carriertest.Fault("soap:Server", "down")), want: upstream.Fault.String()},
		{name: "timeout", script: ptr(carriertest.Hang()), want: upstream.OutcomeUnknown.String()},
		{name: "refused", client: down, want: upstream.NotSent.String()},
		{name: "invalid request"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs.Reset()
			if tt.script != nil {
				srv.Script(carrier.FunctionTopup, *tt.script)
			}
			client := c
			if tt.client != nil {
				client = tt.client
			}
			req := topup(fmt.Sprintf("LOG-%d", i), "593987654321")
			if tt.want == "" {
				req.OfferID = ""
			}
			_, _ = client.Topup(t.Context(), req)
			if tt.want == "" {
				if logs.Len() != 0 {
					t.Errorf("logged %s, want nothing", logs.Bytes())
				}
				return
			}
			var line struct{ Kind, Function string }
			if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
				t.Fatalf("log %q: %v", logs.Bytes(), err)
			}
			if line.Kind != tt.want || line.Function != carrier.FunctionTopup {
				t.Errorf("log %s: kind %q, want %q", logs.Bytes(), line.Kind, tt.want)
			}
		})
	}
}

// An SPR that answers without end costs at most MaxAnswerSize of reading
// and is a malformed answer.
func TestHugeAnswer(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/xml")
		chunk := bytes.Repeat([]byte("<data>"), 10000)
		for range 2000 { // 120 MB unless the client hangs up first
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer hs.Close()
	c := newClient(t, config(hs.URL, 5*time.Second))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := c.Topup(t.Context(), topup("HUGE-1", "593987654321"))
	runtime.ReadMemStats(&after)
	if !errors.Is(err, carrier.ErrMalformedAnswer) || upstream.KindOf(err) != upstream.OutcomeUnknown {
		t.Fatalf("err = %v (kind %v), want ErrMalformedAnswer, outcome unknown", err, upstream.KindOf(err))
	}
	if len(res.Exchange.Response) != carrier.MaxAnswerSize {
		t.Errorf("kept %d bytes of the answer, want %d", len(res.Exchange.Response), carrier.MaxAnswerSize)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 32<<20 {
		t.Errorf("allocated %d MiB for one answer", got>>20)
	}
}
