package erp_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/upstream"
)

func ExampleClient_LookupClient() {
	srv := erptest.NewServer()
	defer srv.Close()
	c, err := erp.New(erp.Config{BaseURL: srv.URL, Timeout: 2 * time.Second})
	if err != nil {
		panic(err)
	}

	res, err := c.LookupClient(context.Background(), "000598", "0999999999")
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Found, res.Client.CodigoCliente, res.Client.NombreCliente, res.Client.Telefono1)

	res, err = c.LookupClient(context.Background(), "000598", "0102030405")
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Found, res.Client == nil)
	// Output:
	// true C-0999999999 CLIENTE EXISTENTE ERP 0990000001
	// false true
}

func ExampleClient_SyncClient() {
	srv := erptest.NewServer()
	defer srv.Close()
	c, err := erp.New(erp.Config{BaseURL: srv.URL, Timeout: 2 * time.Second})
	if err != nil {
		panic(err)
	}
	limite := decimal.RequireFromString("2500.00")
	p := erp.ClientPayload{
		CodigoEmpresa:  "000598",
		NombreCliente:  "MARIA PEREZ",
		Identificacion: "0102030405",
		Telefono1:      "0991234567",
		LimiteCredito1: &limite,
		ExtraFields:    []byte(`{"valor_1": 12.50, "booleano_1": 1}`),
	}
	res, err := c.SyncClient(context.Background(), erp.OperationCreate, p)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.CodigoCliente)
	fmt.Print(string(res.Raw)) // as received, final newline included
	fmt.Println(string(srv.Requests(erp.OpSyncClient)[0].Body))

	p.CodigoCliente = res.CodigoCliente
	p.NombreCliente = "MARIA PEREZ LOPEZ"
	res, err = c.SyncClient(context.Background(), erp.OperationUpdate, p)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Message)
	// Output:
	// C-0102030405
	// {"error_api":false,"mensaje":"cliente creado","codigo_cliente":"C-0102030405","operacion":0}
	// {"booleano_1":1,"codigo_empresa":"000598","identificacion":"0102030405","limite_credito_1":2500.00,"nombre_cliente":"MARIA PEREZ","numero_telefono_1":"0991234567","operacion":0,"valor_1":12.50}
	// cliente actualizado
}

func ExampleError() {
	srv := erptest.NewServer()
	defer srv.Close()
	c, err := erp.New(erp.Config{BaseURL: srv.URL, Timeout: 2 * time.Second})
	if err != nil {
		panic(err)
	}
	// nombre_cliente ERROR_API makes the fake answer HTTP 200 with error_api true.
	_, err = c.SyncClient(context.Background(), erp.OperationCreate,
		erp.ClientPayload{CodigoEmpresa: "000598", NombreCliente: "ERROR_API", Identificacion: "0102030405"})

	var apiErr *erp.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.HTTPStatus, apiErr.Message)
	}
	fmt.Println(err)
	fmt.Println(upstream.KindOf(err), erp.IsTransport(err), erp.IsTimeout(err))
	// Output:
	// 200 ERROR_API: el ERP rechazo el cliente
	// erp: SyncClient: rejected by the ERP (error_api): ERROR_API: el ERP rechazo el cliente
	// rejected false false
}

// labelling is what a metrics RoundTripper does with the operation in the request context.
type labelling struct{ next http.RoundTripper }

func (l labelling) RoundTrip(req *http.Request) (*http.Response, error) {
	op, _ := erp.OperationFromContext(req.Context())
	resp, err := l.next.RoundTrip(req)
	if err == nil {
		fmt.Printf("erp_requests_total{operation=%q,code=\"%d\"}\n", op, resp.StatusCode)
	}
	return resp, err
}

func ExampleOperationFromContext() {
	srv := erptest.NewServer()
	defer srv.Close()
	c, err := erp.New(erp.Config{BaseURL: srv.URL, Timeout: 2 * time.Second},
		erp.WithHTTPClient(&http.Client{Transport: labelling{http.DefaultTransport}}))
	if err != nil {
		panic(err)
	}
	_, _ = c.LookupClient(context.Background(), "000598", "0999999500") // magic HTTP 500
	_, _ = c.SyncClient(context.Background(), erp.OperationCreate,
		erp.ClientPayload{CodigoEmpresa: "000598", NombreCliente: "ANA", Identificacion: "0911111111"})
	// Output:
	// erp_requests_total{operation="LookupClient",code="500"}
	// erp_requests_total{operation="SyncClient",code="200"}
}
