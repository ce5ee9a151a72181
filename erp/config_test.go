package erp_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest/fixtures"
)

func TestNewValidatesConfig(t *testing.T) {
	cases := []struct {
		name    string
		cfg     erp.Config
		wantErr string // substring; empty means New succeeds
	}{
		{"missing base URL", erp.Config{}, "ERP_URL) is required"},
		{"relative base URL", erp.Config{BaseURL: "erp.local/api"}, "absolute http or https"},
		{"ftp scheme", erp.Config{BaseURL: "ftp://erp.local"}, "absolute http or https"},
		{"credentials in URL", erp.Config{BaseURL: "https://user:hunter2@erp.local"}, "must not carry credentials"},
		{"query in URL", erp.Config{BaseURL: "https://erp.local/?token=hunter2"}, "query or fragment"},
		{"negative timeout", erp.Config{BaseURL: "http://erp.local", Timeout: -time.Second}, "must be positive"},
		{"lookup path without slash", erp.Config{BaseURL: "http://erp.local", LookupPath: "erpapi/x"}, "LookupPath"},
		{"clients path with query", erp.Config{BaseURL: "http://erp.local", ClientsPath: "/erpapi/clientes?x=1"}, "ClientsPath"},
		{"payments path without slash", erp.Config{BaseURL: "http://erp.local", PaymentsPath: "erpapi/pagos"}, "PaymentsPath (ERP_PAYMENTS_PATH)"},
		{"payments path with fragment", erp.Config{BaseURL: "http://erp.local", PaymentsPath: "/erpapi/pagos#x"}, "PaymentsPath (ERP_PAYMENTS_PATH)"},
		{"api key with line break", erp.Config{BaseURL: "http://erp.local", APIKey: "a\r\nX-Evil: 1"}, "line breaks"},
		{"minimal", erp.Config{BaseURL: "http://erp.local"}, ""},
		{"path prefix and trailing slash", erp.Config{BaseURL: "https://erp.local/base/"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := erp.New(tc.cfg)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if c == nil {
					t.Fatal("New returned nil client")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("New error = %v, want it to contain %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error leaks the secret: %v", err)
			}
		})
	}
}

func TestNewAppliesDefaults(t *testing.T) {
	c, err := erp.New(erp.Config{BaseURL: "https://erp.local/base/"})
	if err != nil {
		t.Fatal(err)
	}
	got := c.Config()
	want := erp.Config{
		BaseURL:      "https://erp.local/base",
		Timeout:      30 * time.Second,
		LookupPath:   "/erpapi/consulta-externa/clientes",
		ClientsPath:  "/erpapi/clientes",
		PaymentsPath: "/erpapi/pagos",
		APIKeyHeader: "X-API-Key",
	}
	if got != want {
		t.Errorf("Config() = %v\nwant %v", got, want)
	}
}

func TestWithHTTPClientRejectsNil(t *testing.T) {
	if _, err := erp.New(erp.Config{BaseURL: "http://erp.local"}, erp.WithHTTPClient(nil)); err == nil {
		t.Fatal("New accepted WithHTTPClient(nil)")
	}
}

func TestWithHTTPClientLeavesCallerClientUntouched(t *testing.T) {
	hc := &http.Client{}
	if _, err := erp.New(erp.Config{BaseURL: "http://erp.local"}, erp.WithHTTPClient(hc)); err != nil {
		t.Fatal(err)
	}
	if hc.Transport != nil || hc.Jar != nil {
		t.Errorf("New modified the caller's *http.Client: transport %v, jar %v", hc.Transport, hc.Jar)
	}
}

func TestConfigNeverPrintsAPIKey(t *testing.T) {
	const secret = "s3cr3t-erp-key"
	cfg := erp.Config{BaseURL: "http://erp.local", APIKey: secret}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "erp", cfg)
	for name, s := range map[string]string{
		"String": cfg.String(),
		"%v":     fmt.Sprintf("%v", cfg),
		"%+v":    fmt.Sprintf("%+v", cfg),
		"%#v":    fmt.Sprintf("%#v", cfg),
		"slog":   logged.String(),
	} {
		if strings.Contains(s, secret) {
			t.Errorf("%s prints the API key: %s", name, s)
		}
		if !strings.Contains(s, "[REDACTED]") {
			t.Errorf("%s does not show that a key is set: %s", name, s)
		}
	}
}

// A nil Option is ignored: New neither panics nor fails, and the other options still apply.
func TestNewIgnoresNilOptions(t *testing.T) {
	cfg := erp.Config{BaseURL: "http://erp.test", Timeout: time.Second}
	tests := []struct {
		name     string
		opts     func(hc *http.Client) []erp.Option
		wantMock bool   // calls go through the given *http.Client
		wantErr  string // New fails with this text
	}{
		{name: "only nil", opts: func(*http.Client) []erp.Option { return []erp.Option{nil} }},
		{name: "nil before and after WithHTTPClient", wantMock: true,
			opts: func(hc *http.Client) []erp.Option { return []erp.Option{nil, erp.WithHTTPClient(hc), nil} }},
		{name: "a bad option after a nil one still fails", wantErr: "nil *http.Client",
			opts: func(*http.Client) []erp.Option { return []erp.Option{nil, erp.WithHTTPClient(nil)} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mt := httpmock.NewMockTransport()
			mt.RegisterResponder(http.MethodPost, fixtures.LookupURL(cfg),
				httpmock.NewStringResponder(200, `{"error_api":false,"encontrado":false,"cliente":null}`))
			var (
				c   *erp.Client
				err error
			)
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("New panicked: %v", p)
					}
				}()
				c, err = erp.New(cfg, tt.opts(&http.Client{Transport: mt})...)
			}()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || c == nil {
				t.Fatalf("New = %v, %v", c, err)
			}
			if !tt.wantMock {
				return
			}
			if _, err := c.LookupClient(t.Context(), "000598", "0102030405"); err != nil {
				t.Fatal(err)
			}
			if n := mt.GetTotalCallCount(); n != 1 {
				t.Errorf("the given *http.Client saw %d calls, want 1", n)
			}
		})
	}
}
