package metrics_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shopspring/decimal"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/internal/metrics"
	"github.com/platform/integrations/upstream"
)

// metered is an HTTP client whose requests are recorded on reg under upstream's name.
func metered(reg prometheus.Registerer, name string, op func(context.Context) (string, bool)) *http.Client {
	return &http.Client{Transport: metrics.Transport(nil, name, metrics.OperationFrom(op), reg)}
}

// wantOnly checks that the calls of upstream op were recorded once under outcome, and under no
// other outcome.
func wantOnly(t *testing.T, reg *prometheus.Registry, name, op, outcome string) {
	t.Helper()
	for _, o := range []string{metrics.OutcomeOK, metrics.OutcomeRejected, metrics.OutcomeFault, metrics.OutcomeTimeout, metrics.OutcomeUnreachable} {
		want := uint64(0)
		if o == outcome {
			want = 1
		}
		count, obs := sample(t, reg, name, op, o)
		if count != float64(want) || obs != want {
			t.Errorf("%s %s outcome %s: counter %v, histogram count %d; want %d", name, op, o, count, obs, want)
		}
	}
}

// TestBusinessOutcomeOfEachSDK: every SDK reports what its call came to, so a refusal in an
// HTTP 200 is rejected, not ok, and a SOAP fault or a 5xx is fault, whatever the protocol.
func TestBusinessOutcomeOfEachSDK(t *testing.T) {
	t.Run("creditsystem", func(t *testing.T) {
		srv := creditsystemtest.NewServer()
		defer srv.Close()
		cases := []struct {
			name     string
			reaction creditsystemtest.Reaction
			outcome  string
		}{
			{"answer", creditsystemtest.Process(), metrics.OutcomeOK},
			{"lError in an HTTP 200", creditsystemtest.BusinessError(51, "Cupo insuficiente"), metrics.OutcomeRejected},
			{"SOAP fault in an HTTP 500", creditsystemtest.Fault("a:InternalServiceFault", "boom"), metrics.OutcomeFault},
			{"SOAP fault in an HTTP 200", creditsystemtest.Fault("a:InternalServiceFault", "boom").WithStatus(http.StatusOK), metrics.OutcomeFault},
			{"HTML error page", creditsystemtest.Raw(http.StatusBadGateway, "<html>bad gateway</html>"), metrics.OutcomeFault},
			{"no answer in time", creditsystemtest.Hang(), metrics.OutcomeTimeout},
			{"dropped", creditsystemtest.Drop(), metrics.OutcomeUnreachable},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				reg := prometheus.NewRegistry()
				cfg := srv.Config()
				cfg.Timeout = 300 * time.Millisecond
				c, err := creditsystem.New(cfg, creditsystem.WithHTTPClient(metered(reg, "creditsystem", creditsystem.OperationFromContext)))
				if err != nil {
					t.Fatal(err)
				}
				srv.Script("GrabarAutorizacion", tc.reaction)
				_, err = c.GrabarAutorizacion(t.Context(), creditsystem.GrabarAutorizacionRequest{
					Identificacion: "0912345678", CodigoProducto: "001", Plazo: 6, Monto: decimal.RequireFromString("100.00"), PuntoVenta: "PV-1",
				})
				if (err == nil) != (tc.outcome == metrics.OutcomeOK) {
					t.Fatalf("err = %v", err)
				}
				wantOnly(t, reg, "creditsystem", "GrabarAutorizacion", tc.outcome)
			})
		}
	})

	t.Run("carrier", func(t *testing.T) {
		srv := carriertest.NewServer()
		defer srv.Close()
		cases := []struct {
			name, subscriber string
			outcome          string
		}{
			{"SUCCESS", "593987654321", metrics.OutcomeOK},
			{"STATUS=ERROR in an HTTP 200", carriertest.SubscriberNoBalance, metrics.OutcomeRejected},
			{"SOAP fault", carriertest.SubscriberIPNotAuthorized, metrics.OutcomeFault},
			{"no answer in time", carriertest.SubscriberTimeout, metrics.OutcomeTimeout},
		}
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				reg := prometheus.NewRegistry()
				c, err := carrier.New(carrier.Config{URL: srv.URL, Timeout: 300 * time.Millisecond},
					carrier.WithHTTPClient(metered(reg, "carrier", carrier.OperationFromContext)))
				if err != nil {
					t.Fatal(err)
				}
				_, err = c.Topup(t.Context(), carrier.TopupRequest{
					ExternalOperation: carrier.ExternalOperationPins, ExternalTransactionID: "METRICS-" + string(rune('A'+i)),
					OfferID: "31", SubscriberID: tc.subscriber, Quantity: 1,
				})
				if (err == nil) != (tc.outcome == metrics.OutcomeOK) {
					t.Fatalf("err = %v", err)
				}
				wantOnly(t, reg, "carrier", carrier.FunctionTopup, tc.outcome)
			})
		}
	})

	t.Run("erp", func(t *testing.T) {
		srv := erptest.NewServer()
		defer srv.Close()
		cases := []struct {
			name     string
			reaction erptest.Reaction
			outcome  string
		}{
			{"answer", erptest.Process(), metrics.OutcomeOK},
			{"error_api in an HTTP 200", erptest.BusinessError("el ERP rechazo el cliente"), metrics.OutcomeRejected},
			{"HTTP 422", erptest.Raw(http.StatusUnprocessableEntity, `{"error_api":true,"mensaje":"invalid"}`), metrics.OutcomeRejected},
			{"HTTP 500", erptest.Raw(http.StatusInternalServerError, `{"mensaje":"boom"}`), metrics.OutcomeFault},
			{"undecodable 200", erptest.Raw(http.StatusOK, `not json`), metrics.OutcomeFault},
			{"no answer in time", erptest.Hang(), metrics.OutcomeTimeout},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				reg := prometheus.NewRegistry()
				c, err := erp.New(srv.Config(300*time.Millisecond), erp.WithHTTPClient(metered(reg, "erp", erp.OperationFromContext)))
				if err != nil {
					t.Fatal(err)
				}
				srv.Script(erp.OpLookupClient, tc.reaction)
				_, err = c.LookupClient(t.Context(), "000598", "0912345678")
				if (err == nil) != (tc.outcome == metrics.OutcomeOK) {
					t.Fatalf("err = %v", err)
				}
				wantOnly(t, reg, "erp", erp.OpLookupClient, tc.outcome)
			})
		}
	})
}

// TestOutcomeWaitsForTheReport: an exchange that belongs to an SDK call is recorded when the
// call reports, before or after the body ends, once; an exchange of no call is recorded from
// its HTTP status when it ends.
func TestOutcomeWaitsForTheReport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<ok/>")
	}))
	defer srv.Close()
	refused := &testError{kind: upstream.Rejected}
	reg := prometheus.NewRegistry()
	client := &http.Client{Transport: metrics.Transport(nil, "x", func(*http.Request) string { return "op" }, reg)}
	get := func(ctx context.Context) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(res.Body)
		res.Body.Close()
	}

	ctx, finish := upstream.StartCall(t.Context())
	get(ctx)
	if c, _ := sample(t, reg, "x", "op", metrics.OutcomeOK); c != 0 {
		t.Fatal("recorded before the SDK reported")
	}
	err := error(refused)
	finish(&err)
	finish(nil) // a second report changes nothing
	if c, _ := sample(t, reg, "x", "op", metrics.OutcomeRejected); c != 1 {
		t.Fatalf("rejected = %v, want 1", c)
	}

	// Reported before the exchange ended: recorded when it ends.
	ctx, finish = upstream.StartCall(t.Context())
	finish(nil)
	get(ctx)
	if c, _ := sample(t, reg, "x", "op", metrics.OutcomeOK); c != 1 {
		t.Fatalf("ok = %v, want 1", c)
	}

	// No SDK call: the HTTP status decides at once.
	get(t.Context())
	if c, _ := sample(t, reg, "x", "op", metrics.OutcomeOK); c != 2 {
		t.Fatalf("ok = %v, want 2", c)
	}
}

type testError struct{ kind upstream.Kind }

func (e *testError) Error() string        { return "test: " + e.kind.String() }
func (e *testError) Operation() string    { return "op" }
func (e *testError) Kind() upstream.Kind  { return e.kind }
func (e *testError) ErrorCode() string    { return "" }
func (e *testError) ErrorMessage() string { return "" }
func (e *testError) Timeout() bool        { return false }

// TestEverySDKCallReports: the outcome label depends on every exported SDK method that takes a
// context reporting its call (upstream.StartCall, docs/sdk-conventions.md); one that does not
// would label a refusal in an HTTP 200 ok. Each such method starts with
// `ctx, finish := upstream.StartCall(ctx)` followed by `defer finish(&err)`, or only returns
// another method of the client (LookupClient returns Lookup).
func TestEverySDKCallReports(t *testing.T) {
	for _, dir := range []string{"../../creditsystem", "../../carrier", "../../erp"} {
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv == nil || !fn.Name.IsExported() || !takesContext(fn) || !onClient(fn) {
					continue
				}
				checked++
				if !startsCall(fn) && !delegates(fn) {
					t.Errorf("%s: (*Client).%s does not start with upstream.StartCall and defer finish(&err)", fset.Position(fn.Pos()), fn.Name.Name)
				}
			}
		}
		if checked < 3 {
			t.Errorf("%s: %d methods checked; the check proved nothing", dir, checked)
		}
	}
}

func onClient(fn *ast.FuncDecl) bool {
	star, ok := fn.Recv.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == "Client"
}

func takesContext(fn *ast.FuncDecl) bool {
	ps := fn.Type.Params.List
	if len(ps) == 0 {
		return false
	}
	sel, ok := ps[0].Type.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Context"
}

func startsCall(fn *ast.FuncDecl) bool {
	body := fn.Body.List
	if len(body) < 2 {
		return false
	}
	as, ok := body[0].(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 {
		return false
	}
	call, ok := as.Rhs[0].(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "StartCall" {
		return false
	}
	def, ok := body[1].(*ast.DeferStmt)
	if !ok {
		return false
	}
	finish, ok := def.Call.Fun.(*ast.Ident)
	return ok && len(as.Lhs) == 2 && finish.Name == as.Lhs[1].(*ast.Ident).Name
}

func delegates(fn *ast.FuncDecl) bool {
	if len(fn.Body.List) != 1 {
		return false
	}
	ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return false
	}
	call, ok := ret.Results[0].(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	return ok && sel.Sel.IsExported()
}
