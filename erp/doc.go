// Package erp is the JSON HTTP client of the ERP: it looks a client up in the ERP's
// external query, creates or updates clients at /erpapi/clientes, and hands payments and
// reversals over at /erpapi/pagos so that the ERP issues a receipt or a credit note. The HTTP
// work is done by go-resty/resty, which never appears in this package's API.
//
//	import "github.com/platform/integrations/erp"
//
// # Quick start
//
// Construct one Client for the process, call it with a context, then tell the errors apart
// by kind:
//
//	c, err := erp.New(erp.Config{BaseURL: os.Getenv("ERP_URL")})
//	if err != nil {
//		return err // the configuration is invalid; nobody was contacted
//	}
//	res, err := c.LookupClient(ctx, "000598", "0999999999")
//	switch {
//	case errors.Is(err, erp.ErrInvalidRequest):     // refused before sending
//	case upstream.KindOf(err) == upstream.Rejected: // the ERP said no (*erp.Error: error_api, or a non-2xx)
//	case err != nil:                                // no usable answer (*erp.TransportError); erp.IsTimeout(err)
//	case res.Found:
//		fmt.Println(res.Client.CodigoCliente) // C-0999999999
//	default: // the ERP does not know the client: not an error
//	}
//
// In tests, erptest.NewServer() runs an in-process fake ERP; package erptest/fixtures
// registers httpmock responders for callers that mock their *http.Client instead (see
// "Testing").
//
// # Construction
//
//	c, err := erp.New(erp.Config{
//		BaseURL: os.Getenv("ERP_URL"),   // required
//		Timeout: 30 * time.Second,       // ERP_TIMEOUT, in seconds; default 30 s
//	}, erp.WithHTTPClient(instrumented)) // optional
//
// Config documents every field, the environment variable it comes from and its default:
// ERP_URL, ERP_TIMEOUT (30 s), ERP_LOOKUP_PATH (/erpapi/consulta-externa/clientes),
// ERP_CLIENTS_PATH (/erpapi/clientes), ERP_PAYMENTS_PATH (/erpapi/pagos), ERP_API_KEY (none)
// and ERP_API_KEY_HEADER (X-API-Key).
// New(cfg Config, opts ...Option) validates the configuration and the options
// (WithHTTPClient(nil) is an error; a nil Option is ignored) and contacts nobody. One Client
// serves the whole process; it is safe for concurrent use.
//
// # Operations
//
// LookupClient(ctx, codigoEmpresa, identificacion) asks whether the ERP knows the client and
// returns it as a ClientRecord (public field names, telefono_1/telefono_2). A client the ERP
// does not know is Found == false, not an error. Lookup(ctx, LookupQuery) is the same query
// with the name the caller is about to register: the credit service's POST
// /clients/from-creditsystem pre-check sends it, so an ERP that will not take the client
// answers error_api there (502) before anything is created locally. The name is optional
// (omitted when empty) and the ERP answers by the key alone; an ERP whose external query
// refused the extra member would show it at once as a 502 on every from-creditsystem call.
//
// SyncClient(ctx, op, payload) sends the local client record with operacion 0
// (OperationCreate) or 1 (OperationUpdate) and returns the codigo_cliente the ERP assigned and
// its raw answer, to be stored as erp_response.
//
// HandOverPayment(ctx, PaymentHandOver) is the specification's payment rule 8: after a payment
// is applied (Event PaymentApplied, "pago") or reversed (PaymentReversed, "reverso") in the
// creditsystem, the credit service passes the operation number, the payment's amount and
// date, the invoices and the rubros (applied or reversed) to the ERP, which issues a receipt
// or a credit note and answers its number (PaymentHandOverResult.NumeroDocumento, with the raw
// answer to store). It is idempotent by (Event, NumeroOperacion), so a background job may
// repeat it after any failure: the ERP issues one document per event and operation number and
// answers a repeat with the same document and Duplicate true. A reversal is its own event: it
// gets its own document, not the payment's.
//
// Every outgoing *http.Request carries the operation name in its context:
// OperationFromContext(req.Context()) returns "LookupClient", "SyncClient" or
// "HandOverPayment", so a RoundTripper given through WithHTTPClient can label metrics without
// parsing URLs. The three operations share one post helper, so errors, deadlines and labels
// are the same for all.
//
// # Errors
//
// Every error of a call implements upstream.Error (Operation, Kind, ErrorCode, ErrorMessage,
// Timeout), so a caller can map kinds without knowing these types:
//
//   - *Error{Op, HTTPStatus, Message, Body} (kind upstream.Rejected): the ERP refused.
//     HTTPStatus 200 is an answer with error_api = true (IsErrorAPI; ErrorCode ""); anything
//     outside 2xx is an Error too, whatever its body (Message is then the body's mensaje, or
//     the status text; ErrorCode the status). The services answer 502.
//   - *TransportError{Op, HTTPStatus, Err}: no usable answer: timeout, refused or dropped
//     connection, cancelled context, an answer over 4 MiB, or a 2xx answer that is not the
//     JSON above (errors.Is(err, ErrUndecodable)). Its kind is upstream.NotSent when the
//     request provably never left (the dial failed: connection refused, unknown host) and
//     upstream.OutcomeUnknown otherwise. IsTransport reports this type.
//   - ErrInvalidRequest (wrapped): arguments rejected before any call (a required field
//     missing or blank: codigo_empresa and identificacion for the client operations,
//     nombre_cliente too for a sync; operacion not 0/1; bad extra_fields; a hand-over as
//     above). Nothing was sent. It is a plain sentinel, not an upstream.Error.
//
// IsTimeout reports whether err holds an upstream.Error of a call that ran out of time (the
// client's deadline, the context's, or a network timeout): upstream.IsTimeout(err).
//
// Every message starts with "erp: <Op>: ". A configured APIKey is redacted from messages,
// Error.Body and Config's String/GoString/LogValue; Config refuses credentials in BaseURL.
//
// # Money
//
// Amounts are decimal.Decimal, never float64, and only go one way: no answer of the ERP
// carries money. The client limits of SyncClient go on the wire as JSON numbers with the
// digits and scale the Decimal holds (1500.50 stays 1500.50, 1500.5 is sent as 1500.5); the
// amounts of HandOverPayment with exactly two decimals (150.50, -5.00), and one with more
// than two decimals is refused with ErrInvalidRequest (1.500 is 1.50 and is accepted). To
// print a Decimal with its cents use StringFixed(2): its String drops trailing zeros.
//
// # Timeouts and retries
//
// Each call runs under context.WithTimeout(ctx, Config.Timeout), connection, headers and body
// included; the caller's earlier deadline wins. Every way of running out of time gives a
// *TransportError (errors.As) for which IsTimeout(err) and errors.Is(err,
// context.DeadlineExceeded) hold: Config.Timeout, the caller's deadline, the Timeout of an
// http.Client given with WithHTTPClient, a transport's own timeout (a net.Error whose Timeout
// is true), before or after the headers, and also when an injected RoundTripper or body reports
// the deadline in its own words. Nothing is retried: a create that failed with
// upstream.OutcomeUnknown (a timeout among others) may have been applied (erptest.LateSuccess
// reproduces it); LookupClient tells whether it was. After upstream.NotSent it was not. A
// hand-over that failed in any way may simply be sent again: the answer is the document the
// ERP issued, marked Duplicate if it had issued it already.
//
// # Testing
//
// Package erptest runs an in-process fake ERP speaking this wire format, with magic values
// and scripted reactions; package erptest/fixtures registers httpmock responders replaying
// answers recorded from it.
//
// # Wire format (decided here: the specification shows none of the requests or answers)
//
// Every operation is a POST with a JSON body and Content-Type application/json. Every answer
// is a JSON object with "error_api" (boolean; 0/1 accepted) and "mensaje" (string;
// "message" accepted). Every string member of an answer may be JSON null, which reads as ""
// without an error (a null codigo_cliente is therefore a missing one), and null booleans read
// as false. The testdata/golden files hold the exact request bodies, and
// erptest/fixtures/testdata the answers.
//
// External query, POST {ERP_URL}{ERP_LOOKUP_PATH}:
//
//	{"codigo_empresa":"000598","identificacion":"0999999999"}
//	{"codigo_empresa":"000598","identificacion":"0999999999","nombre_cliente":"..."} (Lookup with a name)
//
//	{"error_api":false,"mensaje":"cliente encontrado","encontrado":true,
//	 "cliente":{"codigo_cliente":"C-0999999999","codigo_empresa":"000598",
//	   "nombre_cliente":"...","identificacion":"0999999999","numero_telefono_1":"...",
//	   "numero_telefono_2":null,"direccion_1":"...","inactivo":false}}
//
//	{"error_api":false,"mensaje":"cliente no encontrado","encontrado":false,"cliente":null}
//
// The ERP names its phones numero_telefono_1/2 on both directions; LookupClient maps them back
// to Telefono1/Telefono2. Found is true only when "encontrado" is true AND "cliente" is an
// object with a codigo_cliente; encontrado true with a null, missing or codeless cliente, and a
// cliente with encontrado false, are not found (Client nil), never a half-filled client. An
// answer whose members have the wrong JSON types (cliente a string, encontrado "maybe") is
// undecodable.
//
// Clients, POST {ERP_URL}{ERP_CLIENTS_PATH}: one flat object. The specification's mapping:
// every public field keeps its name except telefono_1 -> numero_telefono_1 and telefono_2 ->
// numero_telefono_2; "operacion" is 0 or 1; each extra_fields member goes to the top level
// with its value copied byte for byte; limite_credito_1/2 are JSON numbers written from the
// decimal with its scale (1500.50), never through float64. Empty strings and nil limits are
// left out rather than sent as null, so an update never blanks a field the ERP holds.
// Members are in sorted order. An extra_fields key equal to a payload field (or to the public
// telefono_1/telefono_2) is refused with ErrInvalidRequest before any call.
//
//	{"codigo_empresa":"000598","identificacion":"0102030405","limite_credito_1":1500.50,
//	 "nombre_cliente":"MARIA PEREZ","numero_telefono_1":"0991234567","operacion":0,"valor_1":12.5}
//
//	{"error_api":false,"mensaje":"cliente creado","codigo_cliente":"C-0102030405","operacion":0}
//
// A create answer must carry codigo_cliente; an update answer without one confirms the
// payload's CodigoCliente.
//
// Payments hand-over, POST {ERP_URL}{ERP_PAYMENTS_PATH}, with the header Idempotency-Key:
// <evento>-<numero_operacion> (pago-100234, reverso-100234) so that the ERP can deduplicate
// too. Every member is sent, in this order, except motivo, left out when empty; facturas and
// rubros are arrays, [] when there are none; money is a JSON number written from the decimal
// with exactly 2 decimals (150.50, -5.00), never through float64; the rubros of a payment are
// its rubrosAplicados, those of a reversal its rubrosRevertidos, and numero_operacion of a
// reversal is that of the payment reversed.
//
//	{"evento":"pago","numero_operacion":100234,"numero_tarjeta":"4000123412341234",
//	 "valor_pago":150.50,"fecha_pago":"2024-03-15",
//	 "facturas":[{"numero_factura":"001-001-000012345","valor":100.25}],
//	 "rubros":[{"codigo":"CAP","tipo_documento":"FAC","valor":140.00},
//	   {"codigo":"DPP","tipo_documento":"NC","valor":-5.00}]}
//
//	{"evento":"reverso","numero_operacion":100234,...,"motivo":"pago registrado por error"}
//
//	{"error_api":false,"mensaje":"recibo emitido","numero_documento":"RC-100234","duplicado":false}
//	{"error_api":false,"mensaje":"documento ya emitido","numero_documento":"RC-100234","duplicado":true}
//
// numero_documento is the receipt (pago) or credit note (reverso) number; a success answer
// without one (missing, null or blank) is undecodable. duplicado true says the ERP had already
// issued that document for this event and operation number: the hand-over is done, as with
// duplicado false. HandOverPayment refuses with ErrInvalidRequest, before any call, an evento
// other than pago or reverso, a numero_operacion or valor_pago not > 0, a blank numero_tarjeta,
// numero_factura or rubro codigo, a fecha_pago that is not a yyyy-mm-dd date, and any amount
// with more than 2 decimals (1.500 is 1.50 and is accepted).
package erp
