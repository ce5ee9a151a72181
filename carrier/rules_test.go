package carrier_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/upstream"
)

// TestSpecificationErrorRules walks the numbered rules of the
// specification's Errors section end to end, client against the fake SPR,
// and checks the kind of error each case gives (the status a top-up gets
// from it is package topup's decision). The decoding of every answer
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
		kind     upstream.Kind         // 0: success
		timeout  bool
		ip       bool
	}{
		{rule: "success criterion: STATUS=SUCCESS, ID_CODIGO=0, no fault"},
		{rule: "1: STATUS=ERROR is never success", reaction: ptr(answer("ERROR", "0")), kind: upstream.Rejected},
		{rule: "1: a SOAP fault is never success", reaction: ptr(carriertest.Fault("soap:Server", "x").WithStatus(200)), kind: upstream.Fault},
		{rule: "2: business error (no balance) is rejected", reaction: ptr(carriertest.BusinessError("1", "no balance")), kind: upstream.Rejected},
		{rule: "2: business error (invalid number) is rejected", reaction: ptr(carriertest.BusinessError("3", "invalid subscriber number")), kind: upstream.Rejected},
		{rule: "2: business error (credentials) is rejected", reaction: ptr(carriertest.BusinessError("1", "invalid credentials")), kind: upstream.Rejected},
		{rule: "2: SOAP fault is a fault", reaction: ptr(carriertest.Fault("soap:Server", "down")), kind: upstream.Fault},
		{rule: "2: timeout leaves the outcome unknown", reaction: ptr(carriertest.Hang()), kind: upstream.OutcomeUnknown, timeout: true},
		{rule: "2: connection refused is not sent", url: refused, kind: upstream.NotSent},
		{rule: "2: unreachable SPR is not sent", url: "http://spr.invalid/umsprot", kind: upstream.NotSent},
		{rule: "3: ID_CODIGO 0 is success", reaction: ptr(answer("SUCCESS", "0"))},
		{rule: "3: any other ID_CODIGO is an error", reaction: ptr(answer("SUCCESS", "12")), kind: upstream.Rejected},
		{rule: "4: faultcode 350 is IP not authorized, a fault", reaction: ptr(carriertest.Fault("350", "IP")), kind: upstream.Fault, ip: true},
		{rule: "5: a late success is a timeout, not a success", reaction: ptr(carriertest.LateSuccess()), kind: upstream.OutcomeUnknown, timeout: true},
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
			if got := upstream.KindOf(err); got != tt.kind || (err == nil) != (tt.kind == 0) {
				t.Fatalf("kind = %v (%v), want %v", got, err, tt.kind)
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
