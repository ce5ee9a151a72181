package erptest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/jarcoal/httpmock"

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
)

func ExampleNewServer() {
	srv := erptest.NewServer()
	defer srv.Close()
	srv.Script(erp.OpSyncClient, erptest.Status(http.StatusServiceUnavailable, ""))

	c, err := erp.New(srv.Config(2 * time.Second))
	if err != nil {
		panic(err)
	}
	p := erp.ClientPayload{CodigoEmpresa: "000598", NombreCliente: "ANA", Identificacion: "0911111111"}
	_, err = c.SyncClient(context.Background(), erp.OperationCreate, p)
	fmt.Println(err)

	res, err := c.SyncClient(context.Background(), erp.OperationCreate, p) // queue empty: normal
	fmt.Println(res.CodigoCliente, err, srv.Calls(erp.OpSyncClient))
	// Output:
	// erp: SyncClient: HTTP 503: Service Unavailable
	// C-0911111111 <nil> 2
}

func ExampleRegisterScenario() {
	mt := httpmock.NewMockTransport()
	cfg := erp.Config{BaseURL: "http://erp.test", Timeout: 2 * time.Second}
	erptest.RegisterScenario(mt, cfg, erptest.ScenarioFound)
	// Mix: the lookup finds the client, the sync is rejected.
	mt.RegisterResponder(http.MethodPost, erptest.ClientsURL(cfg), erptest.Responder(erp.OpSyncClient, erptest.ScenarioErrorAPI))

	c, err := erp.New(cfg, erp.WithHTTPClient(&http.Client{Transport: mt}))
	if err != nil {
		panic(err)
	}
	res, err := c.LookupClient(context.Background(), "000598", "0999999999")
	fmt.Println(res.Found, res.Client.CodigoCliente, err)

	_, err = c.SyncClient(context.Background(), erp.OperationUpdate,
		erp.ClientPayload{CodigoCliente: "C-0999999999", CodigoEmpresa: "000598", NombreCliente: "X", Identificacion: "0999999999"})
	var apiErr *erp.APIError
	fmt.Println(errors.As(err, &apiErr), apiErr.Message)
	// Output:
	// true C-0999999999 <nil>
	// true ERROR_API: el ERP rechazo el cliente
}
