package upstream_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/upstream"
)

// nextStep is what a caller of a money-moving operation does after it, whichever SDK made
// the call.
func nextStep(err error) string {
	switch upstream.KindOf(err) {
	case upstream.Rejected, upstream.Fault:
		return "not applied: report it"
	case upstream.OutcomeUnknown:
		return "may have been applied: reconcile, never repeat"
	case upstream.NotSent:
		return "not applied: safe to repeat"
	}
	if err != nil {
		return "no upstream call failed: " + err.Error()
	}
	return "applied"
}

func ExampleKindOf() {
	// The carrier's fake SPR answers its magic subscribers with each kind of failure.
	client, fake, err := carriertest.NewMock(carrier.Config{Timeout: 200 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	defer fake.Close()
	for i, subscriber := range []string{"593987654321", carriertest.SubscriberNoBalance,
		carriertest.SubscriberIPNotAuthorized, carriertest.SubscriberLateSuccess} {
		_, err := client.Topup(context.Background(), carrier.TopupRequest{
			ExternalOperation: carrier.ExternalOperationPins, ExternalTransactionID: fmt.Sprintf("EXAMPLE-%d", i),
			OfferID: "31", SubscriberID: subscriber, Quantity: 1,
		})
		fmt.Printf("%s: %s\n", subscriber, nextStep(err))
		if e, ok := upstream.As(err); ok {
			fmt.Printf("  %s %s, code %q, %q, timeout %t\n", e.Operation(), e.Kind(), e.ErrorCode(), e.ErrorMessage(), e.Timeout())
		}
	}

	// An SPR where nothing listens: the dial fails, so the request never left.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ln.Close()
	down, err := carrier.New(carrier.Config{URL: "http://" + ln.Addr().String() + "/spr", Timeout: time.Second})
	if err != nil {
		panic(err)
	}
	_, err = down.Topup(context.Background(), carrier.TopupRequest{
		ExternalOperation: carrier.ExternalOperationPins, ExternalTransactionID: "EXAMPLE-DOWN",
		OfferID: "31", SubscriberID: "593987654321", Quantity: 1,
	})
	fmt.Printf("refused: %s\n", nextStep(err))

	// Output:
	// 593987654321: applied
	// 593990000001: not applied: report it
	//   sre_topupd_76186 rejected, code "1", "no balance", timeout false
	// 593990000002: not applied: report it
	//   sre_topupd_76186 fault, code "350", "IP address not authorized", timeout false
	// 593990000004: may have been applied: reconcile, never repeat
	//   sre_topupd_76186 outcome-unknown, code "", "", timeout true
	// refused: not applied: safe to repeat
}
