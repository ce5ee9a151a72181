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

func ExampleClient_HandOverPayment() {
	srv := erptest.NewServer()
	defer srv.Close()
	c, err := erp.New(erp.Config{BaseURL: srv.URL, Timeout: 2 * time.Second})
	if err != nil {
		panic(err)
	}
	pago := erp.PaymentHandOver{
		Event:           erp.PaymentApplied,
		NumeroOperacion: 100234,
		NumeroTarjeta:   "4000123412341234",
		ValorPago:       decimal.RequireFromString("95.5"),
		FechaPago:       "2024-03-15",
		Facturas:        []erp.PaymentInvoice{{NumeroFactura: "001-001-000012345", Valor: decimal.RequireFromString("100.50")}},
		Rubros: []erp.PaymentRubro{
			{Codigo: "CAP", TipoDocumento: "FAC", Valor: decimal.RequireFromString("100.50")},
			{Codigo: "DPP", TipoDocumento: "NC", Valor: decimal.RequireFromString("-5")}, // early-payment discount
		},
	}
	res, err := c.HandOverPayment(context.Background(), pago)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.NumeroDocumento, res.Duplicate)
	fmt.Println(string(srv.Requests(erp.OpHandOverPayment)[0].Body))

	// The background job retries after an unknown outcome: the ERP answers the same receipt.
	res, err = c.HandOverPayment(context.Background(), pago)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.NumeroDocumento, res.Duplicate)

	reverso := pago
	reverso.Event, reverso.Motivo = erp.PaymentReversed, "pago registrado por error"
	res, err = c.HandOverPayment(context.Background(), reverso)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.NumeroDocumento, res.Duplicate, len(srv.HandOvers()), srv.Calls(erp.OpHandOverPayment))
	// Output:
	// RC-100234 false
	// {"evento":"pago","numero_operacion":100234,"numero_tarjeta":"4000123412341234","valor_pago":95.50,"fecha_pago":"2024-03-15","facturas":[{"numero_factura":"001-001-000012345","valor":100.50}],"rubros":[{"codigo":"CAP","tipo_documento":"FAC","valor":100.50},{"codigo":"DPP","tipo_documento":"NC","valor":-5.00}]}
	// RC-100234 true
	// NC-100234 false 2 3
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
	_, _ = c.HandOverPayment(context.Background(), erp.PaymentHandOver{Event: erp.PaymentApplied,
		NumeroOperacion: 1, NumeroTarjeta: "4000", ValorPago: decimal.NewFromInt(10), FechaPago: "2024-03-15"})
	// Output:
	// erp_requests_total{operation="LookupClient",code="500"}
	// erp_requests_total{operation="SyncClient",code="200"}
	// erp_requests_total{operation="HandOverPayment",code="200"}
}
