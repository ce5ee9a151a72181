// Package creditsystem is the client of the direct-credit system: its Cartera WCF service
// (credit lines, authorizations, consumptions, reversals, debt, payments) and its Central
// WCF service (financing alternatives), both SOAP 1.1 document/literal over basicHttpBinding.
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
// SOAPAction is {SOAPNamespace}/IServicioCar/<Operation> for Cartera and
// {SOAPNamespace}/IServicioCentral/<Operation> for Central (WCF's rule: one slash between
// namespace and contract), sent in double quotes as SOAP 1.1 writes it
// (SOAPAction: "http://tempuri.org/IServicioCar/ConsultarTarjeta"), with
// Content-Type: text/xml; charset=utf-8 (TestRequestHeaders, testdata/golden/*.headers). Money is decimal.Decimal and goes on the wire as plain decimal
// text with at least two places (1000000.00, 0.01); dates are Date, sent as the xs:dateTime
// of their midnight without a zone (2025-03-10T00:00:00, see "Decisions" below).
//
// The translation rules of the specification are the client's:
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
// # Timeouts and retries
//
// Each call has the deadline Config.Timeout (CREDITSYSTEM_TIMEOUT, default 30 s), or the
// context's when that is sooner. The client never retries: after an error of kind
// upstream.OutcomeUnknown a money-moving operation (authorization, consumption, payment,
// reversals) may have been applied, so query first (ConsultarTarjeta, ConsultarDeudaTarjeta)
// instead of repeating it; after upstream.NotSent it was not applied.
//
// # Generated code
//
// The WSDL files under wsdl/ are the contract, written from the specification the way WCF
// publishes one (see their header). `go generate ./creditsystem/...` runs internal/cmd/generate,
// which calls gowsdl v0.5.0 as a library (on one P: its Start races on a map) and then the
// post-processor of internal/codegen, which fixes gowsdl's output and documents each fix. The
// results are internal/cartera and internal/central. Generated types never
// leave this package. The known defects of gowsdl v0.5.0 and where they are handled:
//   - DataContract members without their namespace: post-processor (TestDataContractNamespaces);
//   - xs:decimal as float64 written as 1e+06: xsd.Decimal (TestGowsdlDefectFloatMoney);
//   - xsi:nil and empty decoded to zero values: xsd types and xsd.Ptr (TestOperationsNilAnswers);
//   - a fault in an HTTP 500 returned as *soap.HTTPError: classify (TestGowsdlDefectFaultIn500);
//   - business errors in an HTTP 200 returned as success: checkAnswer
//     (TestGowsdlDefectBusinessErrorIsSuccess);
//   - Close = true on every request and answers closed unread, so no connection is reused:
//     the doer between gowsdl and the *http.Client (TestConnectionReuse: 100 calls, 1 connection);
//   - member order: WCF's ordinal order is kept by the WSDL and the generator (TestWCFMemberOrder).
//   - a member in another namespace than its tag's is skipped without an error by encoding/xml
//     (an lError = true would read as false): answers are decoded through xsd.DecodeByLocalName,
//     which matches members by local name (TestAnswerMembersByLocalName).
//
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
package creditsystem
