package main

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/upstream"
)

func clearERPEnv(t *testing.T) {
	for _, k := range []string{"ERP_URL", "ERP_TIMEOUT", "ERP_API_KEY", "ERP_API_KEY_HEADER", "ERP_LOOKUP_PATH", "ERP_CLIENTS_PATH"} {
		t.Setenv(k, "")
	}
}

func TestRunAgainstBuiltInFake(t *testing.T) {
	clearERPEnv(t)
	tests := []struct {
		name    string
		args    []string
		want    []string // fragments, in order
		wantErr func(error) bool
	}{
		{
			name: "unknown client is created",
			args: []string{"-identificacion", "0102030405", "-nombre", "MARIA PEREZ"},
			want: []string{
				"mode: in-process fake ERP",
				"lookup: 0102030405 not in the ERP",
				`create: codigo_cliente=C-0102030405 mensaje="cliente creado"`,
			},
			wantErr: func(err error) bool { return err == nil },
		},
		{
			name:    "existing client is not created again",
			args:    []string{"-identificacion", "0999999999"},
			want:    []string{"lookup: found codigo_cliente=C-0999999999"},
			wantErr: func(err error) bool { return err == nil },
		},
		{
			name: "ERROR_API is an erp.Error with error_api true",
			args: []string{"-nombre", "ERROR_API"},
			want: []string{"lookup: 0102030405 not in the ERP", "create: refused by the ERP with error_api true (HTTP 200): "},
			wantErr: func(err error) bool {
				var e *erp.Error
				return errors.As(err, &e) && e.IsErrorAPI() && e.Op == erp.OpSyncClient && e.HTTPStatus == http.StatusOK
			},
		},
		{
			name: "HTTP 500 is an erp.Error without error_api",
			args: []string{"-identificacion", "0999999500"},
			want: []string{"lookup: refused by the ERP (HTTP 500): "},
			wantErr: func(err error) bool {
				var e *erp.Error
				return errors.As(err, &e) && !e.IsErrorAPI() && e.HTTPStatus == http.StatusInternalServerError
			},
		},
		{
			name:    "bad limit is refused before any call",
			args:    []string{"-limite", "15,50"},
			want:    nil,
			wantErr: func(err error) bool { return err != nil && strings.Contains(err.Error(), "-limite") },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(t.Context(), tt.args, &out)
			if !tt.wantErr(err) {
				t.Errorf("run() error = %v", err)
			}
			assertInOrder(t, out.String(), tt.want)
		})
	}
}

// With ERP_URL set the program uses it; the test points it at its own fake
// to make the create commit and then never answer.
func TestRunCreateTimeoutIsLookedUpNotResent(t *testing.T) {
	clearERPEnv(t)
	srv := erptest.NewServer()
	t.Cleanup(srv.Close)
	srv.Script(erp.OpSyncClient, erptest.LateSuccess())
	t.Setenv("ERP_URL", srv.URL)

	var out bytes.Buffer
	if err := run(t.Context(), []string{"-identificacion", "0102030405", "-limite", "1500.50", "-timeout", "300ms"}, &out); err != nil {
		t.Fatalf("run() error = %v\n%s", err, out.String())
	}
	assertInOrder(t, out.String(), []string{
		"mode: ERP from ERP_URL",
		"lookup: 0102030405 not in the ERP",
		"create: outcome unknown (timeout=true); not sent again, looking the client up",
		"lookup: found codigo_cliente=C-0102030405",
	})
	if n := srv.Calls(erp.OpSyncClient); n != 1 {
		t.Errorf("SyncClient sent %d times, want 1", n)
	}
	fields, ok := srv.Fields("000598", "0102030405")
	if !ok || string(fields["limite_credito_1"]) != "1500.50" {
		t.Errorf("ERP holds limite_credito_1 %s, want the exact decimal 1500.50", fields["limite_credito_1"])
	}
}

func TestRunLookupTimeout(t *testing.T) {
	clearERPEnv(t)
	t.Setenv("ERP_TIMEOUT", "0.3")
	var out bytes.Buffer
	err := run(t.Context(), []string{"-identificacion", "0999999504"}, &out)
	if !erp.IsTimeout(err) {
		t.Fatalf("run() error = %v, want a timeout", err)
	}
	assertInOrder(t, out.String(), []string{"lookup: no usable answer (outcome-unknown, timeout=true)"})
}

// An ERP where nothing listens: the request never left.
func TestRunRefusedConnection(t *testing.T) {
	clearERPEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	t.Setenv("ERP_URL", "http://"+ln.Addr().String())
	var out bytes.Buffer
	err = run(t.Context(), nil, &out)
	if upstream.KindOf(err) != upstream.NotSent {
		t.Fatalf("run() error = %v, want kind not-sent", err)
	}
	assertInOrder(t, out.String(), []string{"lookup: no usable answer (not-sent, timeout=false)"})
}

func assertInOrder(t *testing.T, got string, want []string) {
	t.Helper()
	rest := got
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("output lacks %q after the previous lines:\n%s", w, got)
		}
		rest = rest[i+len(w):]
	}
}
