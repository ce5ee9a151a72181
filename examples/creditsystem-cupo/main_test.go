package main

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/upstream"
)

func clearCreditsystemEnv(t *testing.T) {
	for _, k := range []string{"CREDITSYSTEM_CARTERA_URL", "CREDITSYSTEM_CENTRAL_URL", "CREDITSYSTEM_SOAP_NAMESPACE",
		"CREDITSYSTEM_USUARIO", "CREDITSYSTEM_CODIGO_EMPRESA", "CREDITSYSTEM_TERMINAL", "CREDITSYSTEM_TIMEOUT",
		"CREDITSYSTEM_OTP_BYPASS"} {
		t.Setenv(k, "")
	}
}

func TestRunAgainstBuiltInFake(t *testing.T) {
	clearCreditsystemEnv(t)
	tests := []struct {
		name    string
		args    []string
		want    []string // fragments, in order
		wantErr func(error) bool
	}{
		{
			name: "credit line and authorization",
			args: []string{"-identificacion", "0912345678", "-monto", "1200.5"},
			want: []string{
				"mode: in-process fake creditsystem",
				`cupo: cliente="CLIENTE 0912345678" numero_tarjeta=0912345678`,
				`cupo 001 "CREDITO DIRECTO": asignado=5000.00 disponible=5000.00 utilizado=0.00`,
				"autorizacion: monto=1200.50 plazo=6",
				"autorizacion: autorizacion_id=AUT0000001 numero_operacion=",
				"codigo_seguridad_enviado=true",
			},
			wantErr: func(err error) bool { return err == nil },
		},
		{
			name:    "customer without card",
			args:    []string{"-identificacion", "0000000002"},
			want:    []string{"cupo: customer without card (nNumeroError 2)"},
			wantErr: func(err error) bool { return errors.Is(err, creditsystem.ErrCardNotFound) },
		},
		{
			name: "insufficient credit line is a creditsystem.Error",
			args: []string{"-monto", "666.66"},
			want: []string{"disponible=5000.00", "autorizacion: rejected by the creditsystem, nNumeroError 51: "},
			wantErr: func(err error) bool {
				var e *creditsystem.Error
				return errors.As(err, &e) && e.Code == 51 && e.Op == "GrabarAutorizacion" &&
					!errors.Is(err, creditsystem.ErrCardNotFound)
			},
		},
		{
			name: "timed-out authorization is not resent, the credit line is queried",
			args: []string{"-monto", "504.04", "-timeout", "300ms"},
			want: []string{
				"autorizacion: monto=504.04",
				"autorizacion: timed out, outcome unknown",
				"autorizacion: not sent again; querying the credit line",
				"cupo 001 after the failed call: disponible=5000.00",
			},
			wantErr: creditsystem.IsTimeout,
		},
		{
			name:    "amount with three decimal places is refused before any call",
			args:    []string{"-monto", "10.005"},
			wantErr: func(err error) bool { return err != nil && strings.Contains(err.Error(), "-monto") },
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

// With CREDITSYSTEM_CARTERA_URL set the program builds its client from the
// environment; the test points it at its own fake to see what was sent.
func TestRunFromEnvironment(t *testing.T) {
	clearCreditsystemEnv(t)
	srv := creditsystemtest.NewServer()
	t.Cleanup(srv.Close)
	const bypass = "bypass-otp-7391"
	t.Setenv("CREDITSYSTEM_CARTERA_URL", srv.CarteraURL)
	t.Setenv("CREDITSYSTEM_CENTRAL_URL", srv.CentralURL)
	t.Setenv("CREDITSYSTEM_USUARIO", creditsystemtest.DevUsuario)
	t.Setenv("CREDITSYSTEM_TERMINAL", creditsystemtest.DevTerminal)
	t.Setenv("CREDITSYSTEM_TIMEOUT", "2")
	t.Setenv("CREDITSYSTEM_OTP_BYPASS", bypass)

	var out bytes.Buffer
	if err := run(t.Context(), []string{"-identificacion", "0102030405", "-monto", "250.00", "-plazo", "12"}, &out); err != nil {
		t.Fatalf("run() error = %v\n%s", err, out.String())
	}
	assertInOrder(t, out.String(), []string{
		"mode: creditsystem from CREDITSYSTEM_CARTERA_URL",
		"autorizacion: autorizacion_id=AUT0000001",
	})
	if strings.Contains(out.String(), bypass) {
		t.Errorf("the OTP bypass code was printed:\n%s", out.String())
	}
	req, ok := srv.LastRequest("GrabarAutorizacion")
	if !ok {
		t.Fatal("no GrabarAutorizacion reached the creditsystem")
	}
	if otp, _ := req.Field("cCodigoOtp"); otp != bypass {
		t.Errorf("cCodigoOtp = %q, want the configured bypass code", otp)
	}
	monto, _ := req.Field("nMonto")
	if d, err := decimal.NewFromString(monto); err != nil || !d.Equal(decimal.RequireFromString("250.00")) {
		t.Errorf("nMonto = %q, want 250.00", monto)
	}
	if n := srv.Calls("GrabarAutorizacion"); n != 1 {
		t.Errorf("GrabarAutorizacion sent %d times, want 1", n)
	}
	card, _ := srv.Card("0102030405")
	if want := decimal.RequireFromString("4750.00"); !card.Disponible.Equal(want) {
		t.Errorf("credit available after the authorization = %s, want %s", card.Disponible, want)
	}
}

// A creditsystem where nothing listens: the request never left, which the example says.
func TestRunAgainstRefusedConnection(t *testing.T) {
	clearCreditsystemEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/svc"
	ln.Close()
	t.Setenv("CREDITSYSTEM_CARTERA_URL", url)
	t.Setenv("CREDITSYSTEM_CENTRAL_URL", url)
	t.Setenv("CREDITSYSTEM_USUARIO", creditsystemtest.DevUsuario)
	t.Setenv("CREDITSYSTEM_TERMINAL", creditsystemtest.DevTerminal)

	var out bytes.Buffer
	err = run(t.Context(), nil, &out)
	if upstream.KindOf(err) != upstream.NotSent {
		t.Errorf("run() error = %v, want kind not-sent", err)
	}
	assertInOrder(t, out.String(), []string{"cupo: not sent, nothing applied: "})
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
