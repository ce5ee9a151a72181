package carrier_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
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
	fmt.Println("outcome:", carrier.Outcome(err))
	fmt.Println("STATUS:", res.Status, "ID_CODIGO:", res.IDCodigo, "ID_RECARGA:", res.IDRecarga)
	// Output:
	// audit: true true
	// outcome: success
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
	fmt.Println("record as:", carrier.Outcome(err))
	fmt.Println("diagnostic:", res.Diagnostic)
	// Output:
	// the carrier refuses our outgoing IP address
	// faultcode 350 in HTTP 500: IP address not authorized
	// record as: unavailable
	// diagnostic: SOAP fault 350: IP address not authorized
}

func ExampleOutcome() {
	for _, err := range []error{
		nil,
		&carrier.Error{Op: carrier.FunctionTopup, Status: "ERROR", Code: "1", Message: "no balance"},
		&carrier.FaultError{Op: carrier.FunctionTopup, Code: "350"},
		&carrier.TransportError{Op: carrier.FunctionTopup, Err: context.DeadlineExceeded},
	} {
		fmt.Printf("%-11s timeout=%v\n", carrier.Outcome(err), carrier.IsTimeout(err))
	}
	// Output:
	// success     timeout=false
	// failed      timeout=false
	// unavailable timeout=false
	// unavailable timeout=true
}

func ExampleNewExternalTransactionID() {
	id := carrier.NewExternalTransactionID()
	fmt.Println(len(id), id < carrier.NewExternalTransactionID())
	// Output: 26 true
}
