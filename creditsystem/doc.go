// Package creditsystem is the client of the direct-credit system: its Cartera WCF service
// (credit lines, authorizations, consumptions, reversals, debt, payments) and its Central
// WCF service (financing alternatives), both SOAP 1.1 document/literal over basicHttpBinding.
//
//	import "github.com/platform/integrations/creditsystem"
//
// # Quick start
//
// Construct one Client for the process, call an operation with a context and a request
// struct, then tell the errors apart by kind:
//
//	client, err := creditsystem.New(creditsystem.Config{
//		CarteraURL: os.Getenv("CREDITSYSTEM_CARTERA_URL"),
//		CentralURL: os.Getenv("CREDITSYSTEM_CENTRAL_URL"),
//		Usuario:    os.Getenv("CREDITSYSTEM_USUARIO"),
//		Terminal:   os.Getenv("CREDITSYSTEM_TERMINAL"),
//	})
//	if err != nil {
//		return err // the configuration is invalid; nobody was contacted
//	}
//	res, err := client.ConsultarTarjeta(ctx, creditsystem.ConsultarTarjetaRequest{Identificacion: "0912345678"})
//	switch {
//	case errors.Is(err, creditsystem.ErrCardNotFound): // nNumeroError 2: customer without card
//	case upstream.KindOf(err) == upstream.Rejected:     // lError: the creditsystem said no (*creditsystem.Error)
//	case creditsystem.IsTimeout(err):                   // no answer in time: a money-moving call may have been applied
//	case err != nil:                                    // a SOAP fault, or no usable answer
//	default:
//		for _, c := range res.Cupos {
//			fmt.Println(*c.DescripcionTipoCupo, c.CupoDisponible.StringFixed(2)) // CREDITO DIRECTO 5000.00
//		}
//	}
//
// In tests, creditsystemtest.NewServer() runs an in-process fake that speaks the same SOAP;
// pass its Config() to New, as the examples do. Package creditsystemtest/fixtures registers
// httpmock responders for callers that mock their *http.Client instead.
//
// # Construction
//
//	client, err := creditsystem.New(creditsystem.Config{
//		CarteraURL:    os.Getenv("CREDITSYSTEM_CARTERA_URL"),
//		CentralURL:    os.Getenv("CREDITSYSTEM_CENTRAL_URL"),
//		SOAPNamespace: os.Getenv("CREDITSYSTEM_SOAP_NAMESPACE"), // default http://tempuri.org/
//		Usuario:       os.Getenv("CREDITSYSTEM_USUARIO"),
//		CodigoEmpresa: os.Getenv("CREDITSYSTEM_CODIGO_EMPRESA"), // default 000598
//		Terminal:      os.Getenv("CREDITSYSTEM_TERMINAL"),
//		Timeout:       30 * time.Second, // CREDITSYSTEM_TIMEOUT
//		OTPBypass:     os.Getenv("CREDITSYSTEM_OTP_BYPASS"),
//	}, creditsystem.WithHTTPClient(httpClient))
//
// New(cfg Config, opts ...Option) checks the configuration and the options and contacts
// nobody: both URLs must be absolute http(s) URLs, Usuario and Terminal are required,
// Timeout must not be negative. Options validate their argument (WithHTTPClient(nil) is an
// error); a nil Option is ignored, so an option chosen at run time can be passed as nil.
// Config.String redacts the OTP bypass code.
// WithCentralContract changes the contract name in Central's SOAPAction (see below).
// WithHTTPClient injects the *http.Client (a metrics RoundTripper, an httpmock transport);
// every request it sees carries the operation name, read with OperationFromContext.
// Connections are kept alive and reused (see "Generated code" below).
//
// # Operations
//
//	method                              WCF operation (service)             REST endpoint
//	ConsultarTarjeta                    ConsultarTarjeta (Cartera)          POST /consumo/cupo
//	ConsultarAlternativaFinanciacion    ConsultarAlternativaFinanciacion    POST /consumo/financiacion
//	                                    (Central)
//	GrabarAutorizacion                  GrabarAutorizacion (Cartera)        POST /consumo/autorizacion
//	GrabarConsumo                       GrabarConsumo (Cartera)             POST /consumo/confirmar
//	GrabarReversoAutorizacion           GrabarReversoAutorizacion (Cartera) POST /consumo/reverso
//	GrabarReversoConsumo                GrabarReversoConsumo (Cartera)      POST /consumo/reverso-consumo
//	ConsultarDeudaTarjeta               ConsultarDeudaTarjeta (Cartera)     POST /pagos/consulta-deuda
//	GrabarPagoTarjeta                   GrabarPagoTarjeta (Cartera)         POST /pagos/aplicar
//	GrabarReversoPagoTarjeta            GrabarReversoPagoTarjeta (Cartera)  POST /pagos/reverso
//
// The client applies the specification's translation rules itself, so a caller never sends
// what they fill in:
//   - cUsuario, cCodigoEmpresa and cTerminal come from Config, never from a request;
//   - cNumeroTarjeta is NumeroTarjeta when given, otherwise Identificacion (authorization,
//     confirmation, reversals, credit-line query), and cNumeroIdentificacion is
//     Identificacion (credit-line query, authorization, confirmation, authorization
//     reversal), so that the customer's identification number is always on the wire;
//   - GrabarAutorizacion sends Config.OTPBypass as cCodigoOtp when Otp is empty;
//   - GrabarConsumo sends "0" (NoOTP) as cCodigoOtp when Otp is empty;
//   - every answer member that is xsi:nil (whether or not the WSDL declares it nillable) or
//     empty is nil in the answer types (pointers and nil slices), never a zero value
//     (TestErrorAnswersWithNilOnEveryMember). A result (or a complex member) is nil only when
//     its element is xsi:nil, absent or empty (no child element); one with child elements is
//     a value even when every member it carries is false, zero or nil
//     (TestResultNilOnlyWhenNilAbsentOrEmpty).
//
// Every answer also carries Raw (RawAnswer): the SOAP envelope as received (XML) and, as JSON,
// the result DataContract with the SOAP member names, for audit columns such as
// creditsystem_auth_response.
//
// # Errors
//
// Every error of a call names the operation and implements upstream.Error (Operation, Kind,
// ErrorCode, ErrorMessage, Timeout), so a caller can map kinds without knowing these types.
// There are three types, reached with errors.As:
//   - *Error (kind upstream.Rejected): a business error, the creditsystem answered
//     lError = true; Code is nNumeroError and Message cTextoError. errors.Is(err,
//     ErrCardNotFound) holds for nNumeroError 2 (customer without card), which is treated as
//     an error even if lError is false. The credit service maps 2 to 404 and any other code
//     to 502.
//   - *FaultError (kind upstream.Fault): a SOAP fault, with HTTPStatus (WCF sends faults in an
//     HTTP 500; an HTTP 200 fault is accepted too), Code, String, Actor and Detail (server
//     internals, not for end users).
//   - *TransportError: no usable answer: timeout, refused or dropped connection, an HTTP
//     error status without a fault (HTTPStatus), an answer that does not decode, is not the
//     expected element, or has a nil result. Its kind is upstream.NotSent when the request
//     provably never left (the dial failed: connection refused, unknown host) and
//     upstream.OutcomeUnknown otherwise. IsTransport reports this type.
//
// IsTimeout reports whether err holds an upstream.Error of a call that ran out of time (the
// client's deadline, the context's, or a network timeout): upstream.IsTimeout(err). For
// every timeout errors.Is(err, context.DeadlineExceeded) holds as well (Config.Timeout, the
// context's deadline, an *http.Client Timeout, a Transport's ResponseHeaderTimeout, a
// connection deadline; TestEveryTimeoutIsDeadlineExceeded), and errors.Is(err,
// context.Canceled) when the caller cancelled; errors.As still finds the *TransportError.
//
// ErrInvalidRequest (errors.Is) is returned, without any call, for a request that misses a
// field the specification makes required; it is a plain sentinel, not an upstream.Error.
// The message names the fields:
//   - GrabarConsumo: NumeroAutorizacion, NumeroFactura, MontoFacturado, FechaFactura, and
//     NumeroTarjeta or Identificacion;
//   - GrabarPagoTarjeta: NumeroTarjeta, ValorPago, FechaPago, FormasPago (at least one, each
//     with its Codigo);
//   - GrabarReversoPagoTarjeta: NumeroOperacion (positive);
//   - ConsultarDeudaTarjeta: NumeroTarjeta or NumeroIdentificacion.
//
// A zero amount (MontoFacturado, ValorPago) or a zero Date counts as missing, since it is
// what a request that never set the field holds. The payment rules (sum of FormasPago,
// cheque data, not above pago contado) stay the caller's.
//
// # Money and dates
//
// Amounts are decimal.Decimal, in requests and answers, never float64. A request amount goes
// on the wire as plain decimal text with at least two places (1000000.00, 0.01). An answer
// amount is exactly what the creditsystem wrote, scale included: nCupoDisponible 5000.00 reads
// as a Decimal of 5000.00 (Exponent -2). Print money with StringFixed(2), which gives 5000.00:
// decimal.Decimal's String, and so fmt's %v and its MarshalJSON, drop trailing zeros and give
// 5000 (TestAnswerMoneyKeepsItsScale, Example_money). Compare amounts with Equal or Cmp, never
// with ==. A member the creditsystem left nil or empty is a nil *decimal.Decimal.
//
// Dates are Date (year, month, day, no zone), written yyyy-mm-dd by Date.String. They go on
// the wire as the xs:dateTime of their midnight without a zone (2025-03-10T00:00:00, see
// "Decisions" below).
//
// # Timeouts and retries
//
// Each call has the deadline Config.Timeout (CREDITSYSTEM_TIMEOUT, default 30 s), or the
// context's when that is sooner. The client never retries: after an error of kind
// upstream.OutcomeUnknown a money-moving operation (authorization, consumption, payment,
// reversals) may have been applied, so query first (ConsultarTarjeta, ConsultarDeudaTarjeta)
// instead of repeating it; after upstream.NotSent it was not applied.
//
// # Wire
//
// SOAPAction is {SOAPNamespace}/IServicioCar/<Operation> for Cartera and
// {SOAPNamespace}/IServicioCentral/<Operation> for Central (WCF's rule: one slash between
// namespace and contract), sent in double quotes as SOAP 1.1 writes it
// (SOAPAction: "http://tempuri.org/IServicioCar/ConsultarTarjeta"), with
// Content-Type: text/xml; charset=utf-8 (TestRequestHeaders, testdata/golden/*.headers).
// Every request the client sends, every answer of the fake (package creditsystemtest) and
// every httpmock fixture is checked against the XML Schema of the WSDL files by
// internal/xsdcheck, as a schema-validating SOAP stack would check them
// (TestGoldenRequestsMatchSchema, TestWireMatchesSchema).
//
// # Decisions where the specification is silent
//
//   - Field lists not shown by the specification (ConsultarTarjeta, the authorization and
//     confirmation DataContracts, iFormaPagoVm, oFacturaAfectadaVm, oRubroAplicadoVm,
//     oTipoCupoVm, the financing options) are inferred from the REST tables, with the
//     specification's Hungarian prefixes (c text, n number, d date, l boolean, i input list,
//     o output list); each WSDL type says where it comes from.
//   - Each operation takes one DataContract parameter named oSolicitud and answers
//     <Operation>Result, WCF's names for a method Operation(Solicitud...Vm oSolicitud).
//   - Central's WCF contract name, used in its SOAPAction, is IServicioCentral
//     (DefaultCentralContract, the Central WSDL's port type): the specification names only
//     Cartera's, IServicioCar, which is fixed. A deployment whose Central service publishes
//     another service contract name sets it with WithCentralContract (TestCentralContract).
//     The DataContract namespaces are
//     http://schemas.datacontract.org/2004/07/CreditSystem.Cartera.Modelos and
//     ...CreditSystem.Central.Modelos; replacing the WSDL and regenerating changes them.
//   - Dates are System.DateTime (xs:dateTime). The client sends a Date (dFechaPago,
//     dFechaFactura) as its midnight without a zone, 2025-03-10T00:00:00, which is how WCF
//     writes a DateTime of Kind Unspecified and reads back as that calendar date; the
//     specification's yyyy-mm-dd for dFechaPago is its date part. A bare 2025-03-10 is not an
//     xs:dateTime: .NET's XmlConvert takes it, but a schema-validating server faults. Answers
//     are read in either form, keeping the date as written (no time-zone conversion).
//     DateTime.MinValue (0001-01-01) reads as nil. A nil boolean reads as false.
//   - Empty optional strings and nil optional amounts are not sent (WCF reads them as null);
//     booleans are always sent (lAjusteConciliacion = false goes on the wire).
//   - Answer members are matched by local name whatever their namespace (no prefix, an empty
//     xmlns, another prefix or URI): WCF's serializer writes members in the DataContract's
//     namespace, which a vendor may spell differently from the WSDL here. The operation
//     answer element (<Operation>Response) must still be in Config.SOAPNamespace: an answer
//     in another namespace is a TransportError, since it is not the answer to our request.
//   - An answer without a valid Content-Type (httpmock's NewStringResponder writes none) is
//     read as text/xml, SOAP 1.1's media type.
//   - Answers larger than 4 MiB, nested deeper than 64 elements or with an element of more
//     than 64 attributes are refused (TransportError) before they are decoded, so that a
//     hostile answer cannot make the decoder hold hundreds of megabytes; a fault's Detail
//     keeps at most 4 KiB.
//
// # Generated code (for maintainers)
//
// The WSDL files under wsdl/ are the contract, written from the specification the way WCF
// publishes one (see their header). `go generate ./creditsystem/...` (make generate) runs
// internal/cmd/generate: gowsdl v0.5.0 as a library, then the post-processor of
// internal/codegen. The results are internal/cartera and internal/central; generated types
// never leave this package. gowsdl v0.5.0's known defects, and where each is handled (the
// post-processor, package xsd, or this client around the generated calls), are listed in
// internal/codegen's package documentation. The members of a request are written by
// xsd.AppendXMLContent inside gowsdl's envelope, byte for byte what encoding/xml writes (the
// golden files and TestRequestsEncodeAsEncodingXMLDoes hold both to it); a type it does not
// know goes through encoding/xml. When the vendor's WSDL arrives, replace the files and run
// make generate.
package creditsystem
