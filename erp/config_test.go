package erp_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/platform/integrations/erp"
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
