package carrier_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
)

// TestSpecificationErrorRules walks the numbered rules of the
// specification's Errors section end to end, client against the fake SPR,
// and checks the status each case leads to. The decoding of every answer
// shape behind these rows is TestInterpret.
func TestSpecificationErrorRules(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String() + "/spr"
	l.Close()

	answer := func(status, code string) carriertest.Reaction {
		return carriertest.Raw(200, `<?xml version="1.0"?><umsprot version="1"><exec_rsp result="0" diagnostic="OK">`+
			`<data name="ID_CODIGO">`+code+`</data><data name="STATUS">`+status+`</data></exec_rsp></umsprot>`)
	}
	tests := []struct {
		rule     string
		reaction *carriertest.Reaction // scripted on the fake; nil for the default answer
		url      string                // instead of the fake
		outcome  string
		timeout  bool
		ip       bool
	}{
		{rule: "success criterion: STATUS=SUCCESS, ID_CODIGO=0, no fault", outcome: carrier.OutcomeSuccess},
		{rule: "1: STATUS=ERROR is never success", reaction: ptr(answer("ERROR", "0")), outcome: carrier.OutcomeFailed},
		{rule: "1: a SOAP fault is never success", reaction: ptr(carriertest.Fault("soap:Server", "x").WithStatus(200)), outcome: carrier.OutcomeUnavailable},
		{rule: "2: business error (no balance) is failed", reaction: ptr(carriertest.BusinessError("1", "no balance")), outcome: carrier.OutcomeFailed},
		{rule: "2: business error (invalid number) is failed", reaction: ptr(carriertest.BusinessError("3", "invalid subscriber number")), outcome: carrier.OutcomeFailed},
		{rule: "2: business error (credentials) is failed", reaction: ptr(carriertest.BusinessError("1", "invalid credentials")), outcome: carrier.OutcomeFailed},
		{rule: "2: SOAP fault is unavailable", reaction: ptr(carriertest.Fault("soap:Server", "down")), outcome: carrier.OutcomeUnavailable},
		{rule: "2: timeout is unavailable", reaction: ptr(carriertest.Hang()), outcome: carrier.OutcomeUnavailable, timeout: true},
		{rule: "2: connection refused is unavailable", url: refused, outcome: carrier.OutcomeUnavailable},
		{rule: "2: unreachable SPR is unavailable", url: "http://spr.invalid/umsprot", outcome: carrier.OutcomeUnavailable},
		{rule: "3: ID_CODIGO 0 is success", reaction: ptr(answer("SUCCESS", "0")), outcome: carrier.OutcomeSuccess},
		{rule: "3: any other ID_CODIGO is an error", reaction: ptr(answer("SUCCESS", "12")), outcome: carrier.OutcomeFailed},
		{rule: "4: faultcode 350 is IP not authorized, unavailable", reaction: ptr(carriertest.Fault("350", "IP")), outcome: carrier.OutcomeUnavailable, ip: true},
		{rule: "5: a late success is a timeout, not a success", reaction: ptr(carriertest.LateSuccess()), outcome: carrier.OutcomeUnavailable, timeout: true},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t)
			if tt.reaction != nil {
				srv.Script(carrier.FunctionTopup, *tt.reaction)
			}
			url := srv.URL
			if tt.url != "" {
				url = tt.url
			}
			_, err := newClient(t, config(url, time.Second)).Topup(t.Context(), topup("RULE-1", "593987654321"))
			if got := carrier.Outcome(err); got != tt.outcome {
				t.Fatalf("Outcome = %s (%v), want %s", got, err, tt.outcome)
			}
			if tt.timeout && !carrier.IsTimeout(err) {
				t.Errorf("IsTimeout(%v) = false", err)
			}
			if errors.Is(err, carrier.ErrIPNotAuthorized) != tt.ip {
				t.Errorf("errors.Is(%v, ErrIPNotAuthorized) = %v", err, !tt.ip)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
