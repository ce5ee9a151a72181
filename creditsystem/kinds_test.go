package creditsystem_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/upstream"
)

// closedURL is an address where nothing listens: the dial is refused.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	return "http://" + ln.Addr().String() + "/svc"
}

// Every failed call is an upstream.Error whose kind says what became of the operation.
func TestUpstreamKinds(t *testing.T) {
	const op = "GrabarAutorizacion"
	cases := []struct {
		name        string
		react       creditsystemtest.Reaction // scripted on the fake
		ident       string
		monto       string
		refused     bool // call an address where nothing listens instead of the fake
		want        upstream.Kind
		wantCode    string
		wantMessage string
		wantTimeout bool
	}{
		{name: "business error", react: creditsystemtest.BusinessError(51, "Cupo insuficiente"),
			want: upstream.Rejected, wantCode: "51", wantMessage: "Cupo insuficiente"},
		{name: "magic insufficient credit", monto: creditsystemtest.MontoInsufficientCredit.String(),
			want: upstream.Rejected, wantCode: "51", wantMessage: "Cupo insuficiente"},
		{name: "magic customer without card", ident: creditsystemtest.IdentificacionCardNotFound,
			want: upstream.Rejected, wantCode: "2", wantMessage: "Cliente no tiene tarjeta"},
		{name: "fault in an HTTP 500", react: creditsystemtest.Fault("a:InternalServiceFault", "Error interno"),
			want: upstream.Fault, wantCode: "a:InternalServiceFault", wantMessage: "Error interno"},
		{name: "fault in an HTTP 200", react: creditsystemtest.Fault("s:Client", "x").WithStatus(http.StatusOK),
			want: upstream.Fault, wantCode: "s:Client", wantMessage: "x"},
		{name: "magic timeout", monto: creditsystemtest.MontoTimeout.String(),
			want: upstream.OutcomeUnknown, wantTimeout: true},
		{name: "late success", react: creditsystemtest.LateSuccess(),
			want: upstream.OutcomeUnknown, wantTimeout: true},
		{name: "slow past the deadline", react: creditsystemtest.Process().After(time.Second),
			want: upstream.OutcomeUnknown, wantTimeout: true},
		{name: "dropped connection", react: creditsystemtest.Drop(),
			want: upstream.OutcomeUnknown},
		{name: "HTTP 502 without a fault", react: creditsystemtest.Raw(http.StatusBadGateway, "<html>Bad gateway</html>"),
			want: upstream.OutcomeUnknown, wantCode: "502"},
		{name: "undecodable HTTP 200", react: creditsystemtest.Raw(http.StatusOK, "<html>maintenance</html>"),
			want: upstream.OutcomeUnknown},
		{name: "connection refused", refused: true,
			want: upstream.NotSent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := newFake(t)
			srv.Script(op, tc.react)
			cfg := srv.Config()
			cfg.Timeout = 300 * time.Millisecond
			if tc.refused {
				cfg.CarteraURL = closedURL(t)
			}
			req := creditsystem.GrabarAutorizacionRequest{Identificacion: ident1, Monto: dec("10.00"), Plazo: 3}
			if tc.ident != "" {
				req.Identificacion = tc.ident
			}
			if tc.monto != "" {
				req.Monto = dec(tc.monto)
			}
			_, err := newClient(t, cfg).GrabarAutorizacion(t.Context(), req)

			e, ok := upstream.As(err)
			if !ok {
				t.Fatalf("err = %v (%T), want an upstream.Error", err, err)
			}
			if e.Kind() != tc.want || e.Operation() != op || e.ErrorCode() != tc.wantCode || e.ErrorMessage() != tc.wantMessage {
				t.Errorf("kind %v, operation %q, code %q, message %q; want %v, %q, %q, %q",
					e.Kind(), e.Operation(), e.ErrorCode(), e.ErrorMessage(), tc.want, op, tc.wantCode, tc.wantMessage)
			}
			if e.Timeout() != tc.wantTimeout || creditsystem.IsTimeout(err) != tc.wantTimeout ||
				errors.Is(err, context.DeadlineExceeded) != tc.wantTimeout {
				t.Errorf("Timeout %t, IsTimeout %t, errors.Is(DeadlineExceeded) %t; want %t",
					e.Timeout(), creditsystem.IsTimeout(err), errors.Is(err, context.DeadlineExceeded), tc.wantTimeout)
			}
			if transport := tc.want == upstream.OutcomeUnknown || tc.want == upstream.NotSent; creditsystem.IsTransport(err) != transport {
				t.Errorf("IsTransport = %t, want %t", creditsystem.IsTransport(err), transport)
			}
			if calls := srv.Calls(op); calls > 1 {
				t.Errorf("Calls = %d: a failed call is never repeated", calls)
			}
		})
	}
}

// Errors refused before any call are sentinels, not upstream errors.
func TestInvalidRequestIsNotAnUpstreamError(t *testing.T) {
	_, c := newFake(t)
	_, err := c.GrabarConsumo(t.Context(), creditsystem.GrabarConsumoRequest{})
	if !errors.Is(err, creditsystem.ErrInvalidRequest) || upstream.KindOf(err) != 0 {
		t.Errorf("err = %v, kind %v; want ErrInvalidRequest and no kind", err, upstream.KindOf(err))
	}
}
