package carrier_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/upstream"
)

func ExampleClient_Topup() {
	srv := carriertest.NewServer() // the fake SPR, on loopback
	defer srv.Close()

	c, err := carrier.New(carrier.Config{URL: srv.URL, Timeout: 2 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.Topup(context.Background(), carrier.TopupRequest{
		ExternalOperation:     carrier.ExternalOperationPins,
		ExternalTransactionID: "EXAMPLE0000000000000000001", // carrier.NewExternalTransactionID() in real code
		OfferID:               "31",
		SubscriberID:          "593987654321",
		Quantity:              1,
	})
	// res is never nil: store res.Exchange.Request and .Response for the
	// audit log before looking at err.
	fmt.Println("audit:", len(res.Exchange.Request) > 0, len(res.Exchange.Response) > 0)
	fmt.Println("error:", err)
	fmt.Println("STATUS:", res.Status, "ID_CODIGO:", res.IDCodigo, "ID_RECARGA:", res.IDRecarga)
	// Output:
	// audit: true true
	// error: <nil>
	// STATUS: SUCCESS ID_CODIGO: 0 ID_RECARGA: 700000001
}

func ExampleClient_Topup_ipNotAuthorized() {
	srv := carriertest.NewServer()
	defer srv.Close()
	c, err := carrier.New(carrier.Config{URL: srv.URL, Timeout: 2 * time.Second})
	if err != nil {
		log.Fatal(err)
	}

	res, err := c.Topup(context.Background(), carrier.TopupRequest{
		ExternalOperation:     carrier.ExternalOperationData,
		ExternalTransactionID: "EXAMPLE0000000000000000002",
		OfferID:               "150",
		SubscriberID:          carriertest.SubscriberIPNotAuthorized, // answers SOAP fault 350
		Quantity:              1,
	})
	var fault *carrier.FaultError
	switch {
	case errors.Is(err, carrier.ErrIPNotAuthorized):
		// Nothing to retry until the carrier allows our outgoing address.
		fmt.Println("the carrier refuses our outgoing IP address")
		if errors.As(err, &fault) {
			fmt.Printf("faultcode %s in HTTP %d: %s\n", fault.Code, fault.HTTPStatus, fault.String)
		}
	case err != nil:
		fmt.Println("other error:", err)
	}
	fmt.Println("kind:", upstream.KindOf(err))
	fmt.Println("diagnostic:", res.Diagnostic)
	// Output:
	// the carrier refuses our outgoing IP address
	// faultcode 350 in HTTP 500: IP address not authorized
	// kind: fault
	// diagnostic: SOAP fault 350: IP address not authorized
}

// A caller decides by kind what became of a call. Which top-up status each
// case leads to is package topup's decision.
func Example_classify() {
	srv := carriertest.NewServer()
	defer srv.Close()
	c, err := carrier.New(carrier.Config{URL: srv.URL, Timeout: 200 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	classify := func(err error) string {
		if err == nil {
			return "success"
		}
		if errors.Is(err, carrier.ErrInvalidRequest) {
			return "not sent, invalid: fix the request"
		}
		switch upstream.KindOf(err) {
		case upstream.Rejected:
			return "refused by the carrier"
		case upstream.Fault:
			return "SOAP fault, the carrier did not act"
		case upstream.OutcomeUnknown:
			return "may have acted: reconcile with QueryRecharge"
		case upstream.NotSent:
			return "never sent: safe to send again"
		}
		return "not a carrier call: " + err.Error()
	}
	for i, subscriber := range []string{"593987654321", carriertest.SubscriberNoBalance,
		carriertest.SubscriberIPNotAuthorized, carriertest.SubscriberTimeout, ""} {
		_, err := c.Topup(context.Background(), carrier.TopupRequest{
			ExternalOperation:     carrier.ExternalOperationPins,
			ExternalTransactionID: fmt.Sprintf("EXAMPLE-CLASSIFY-%d", i),
			OfferID:               "31",
			SubscriberID:          subscriber,
			Quantity:              1,
		})
		fmt.Printf("%-14q %s (timeout %t)\n", subscriber, classify(err), carrier.IsTimeout(err))
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ln.Close() // nothing listens there: the dial is refused
	down, err := carrier.New(carrier.Config{URL: "http://" + ln.Addr().String() + "/spr", Timeout: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	_, err = down.Topup(context.Background(), carrier.TopupRequest{
		ExternalOperation: carrier.ExternalOperationPins, ExternalTransactionID: "EXAMPLE-CLASSIFY-DOWN",
		OfferID: "31", SubscriberID: "593987654321", Quantity: 1,
	})
	fmt.Printf("%-14s %s (timeout %t)\n", "SPR down", classify(err), carrier.IsTimeout(err))
	// Output:
	// "593987654321" success (timeout false)
	// "593990000001" refused by the carrier (timeout false)
	// "593990000002" SOAP fault, the carrier did not act (timeout false)
	// "593990000003" may have acted: reconcile with QueryRecharge (timeout true)
	// ""             not sent, invalid: fix the request (timeout false)
	// SPR down       never sent: safe to send again (timeout false)
}

func ExampleNewExternalTransactionID() {
	id := carrier.NewExternalTransactionID()
	fmt.Println(len(id), id < carrier.NewExternalTransactionID())
	// Output: 26 true
}
