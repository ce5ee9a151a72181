package erptest_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
)

func ExampleNewServer() {
	srv := erptest.NewServer()
	defer srv.Close()
	srv.Script(erp.OpSyncClient, erptest.BusinessError(http.StatusText(http.StatusServiceUnavailable)).WithStatus(http.StatusServiceUnavailable))

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
