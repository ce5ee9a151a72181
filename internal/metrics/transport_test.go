package metrics_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/platform/integrations/internal/metrics"
)

type opKey struct{}

// operationFromContext mimics the SDKs' exported helper.
func operationFromContext(ctx context.Context) (string, bool) {
	op, ok := ctx.Value(opKey{}).(string)
	return op, ok
}

func withOp(ctx context.Context, op string) context.Context {
	return context.WithValue(ctx, opKey{}, op)
}

// sample returns the counter value and histogram count for one label set.
func sample(t *testing.T, reg *prometheus.Registry, upstream, op, outcome string) (count float64, observations uint64) {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	match := func(m *dto.Metric) bool {
		want := map[string]string{"upstream": upstream, "operation": op, "outcome": outcome}
		for _, l := range m.GetLabel() {
			if want[l.GetName()] != l.GetValue() {
				return false
			}
		}
		return len(m.GetLabel()) == 3
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if !match(m) {
				continue
			}
			switch f.GetName() {
			case "upstream_requests_total":
				count = m.GetCounter().GetValue()
			case "upstream_request_duration_seconds":
				observations = m.GetHistogram().GetSampleCount()
			}
		}
	}
	return count, observations
}

func TestTransportOutcomes(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "fine") })
	mux.HandleFunc("/fault", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<s:Fault/>", http.StatusInternalServerError)
	})
	mux.HandleFunc("/notfound", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	})
	mux.HandleFunc("/slowbody", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "http://" + refused.Addr().String() + "/x"
	refused.Close()

	cases := []struct {
		name    string
		url     string
		op      string
		timeout time.Duration
		outcome string
		wantErr bool
	}{
		{"ok", srv.URL + "/ok", "ConsultarTarjeta", 0, metrics.OutcomeOK, false},
		{"5xx without an SDK call", srv.URL + "/fault", "GrabarConsumo", 0, metrics.OutcomeFault, false},
		{"4xx without an SDK call", srv.URL + "/notfound", "GrabarConsumo", 0, metrics.OutcomeRejected, false},
		{"timeout before answer", srv.URL + "/slow", "GrabarAutorizacion", 100 * time.Millisecond, metrics.OutcomeTimeout, true},
		{"timeout while reading body", srv.URL + "/slowbody", "GrabarReversoConsumo", 100 * time.Millisecond, metrics.OutcomeTimeout, true},
		{"connection refused", refusedURL, "ConsultarAlternativaFinanciacion", 0, metrics.OutcomeUnreachable, true},
		{"no operation", srv.URL + "/ok", "", 0, metrics.OutcomeOK, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			client := &http.Client{Transport: metrics.Transport(nil, "creditsystem", metrics.OperationFrom(operationFromContext), reg)}
			ctx := t.Context()
			if tc.op != "" {
				ctx = withOp(ctx, tc.op)
			}
			if tc.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, tc.url, nil)
			res, err := client.Do(req)
			if err == nil {
				_, err = io.ReadAll(res.Body)
				res.Body.Close()
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			op := tc.op
			if op == "" {
				op = metrics.UnknownOperation
			}
			count, obs := sample(t, reg, "creditsystem", op, tc.outcome)
			if count != 1 || obs != 1 {
				t.Errorf("outcome %s: counter %v, histogram count %d; want 1 and 1", tc.outcome, count, obs)
			}
		})
	}
}

func TestTransportClientTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	reg := prometheus.NewRegistry()
	client := &http.Client{Timeout: 100 * time.Millisecond, Transport: metrics.Transport(nil, "carrier", func(*http.Request) string { return "sre_topupd_76186" }, reg)}
	if _, err := client.Get(srv.URL); err == nil {
		t.Fatal("want a timeout")
	}
	if count, _ := sample(t, reg, "carrier", "sre_topupd_76186", metrics.OutcomeTimeout); count != 1 {
		t.Errorf("http.Client.Timeout not recorded as timeout (counter %v)", count)
	}
}

func TestTransportsShareRegistry(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	reg := prometheus.NewRegistry()
	op := func(*http.Request) string { return "op" }
	cartera := &http.Client{Transport: metrics.Transport(nil, "cartera", op, reg)}
	erp := &http.Client{Transport: metrics.Transport(nil, "erp", op, reg)}
	for _, c := range []*http.Client{cartera, erp, erp} {
		res, err := c.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	if c, _ := sample(t, reg, "cartera", "op", metrics.OutcomeOK); c != 1 {
		t.Errorf("cartera count = %v, want 1", c)
	}
	if c, _ := sample(t, reg, "erp", "op", metrics.OutcomeOK); c != 2 {
		t.Errorf("erp count = %v, want 2", c)
	}
}
