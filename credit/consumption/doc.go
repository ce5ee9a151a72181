// Package consumption is the direct-credit consumption lifecycle of the credit service
// (specification credit-service.md, "Consumption module"): credit-line and financing queries,
// authorization, OTP, confirmation and reversals against the creditsystem, one [Consumo] record
// per authorization with an audit of every money-moving call ([Intento]).
//
//	svc, err := consumption.NewService(consumption.NewStore(db), csClient) // db migrated with credit.Migrations
//	c, res, err := svc.Autorizar(ctx, consumption.AutorizacionInput{...})
//
// # States and inputs
//
// The states and transitions are the specification's, as methods of [Consumo] that return
// sentinel errors. Where the specification is silent: /reverso is allowed from OTP_RECIBIDO (its
// rules only forbid CONSUMIDO and REVERSADO) and refused from the final CONSUMO_REVERSADO. Every
// input has a Validate with every rule of its fields (lengths of the specification; plazo and
// cantidad 1..[MaxInt]; amounts with at most two decimals and 16 digits before the point, the
// amount of the operation greater than zero and cuota_inicial, valor_iva, valor_comision and
// precio not negative; fecha_factura from [FechaFacturaMinima] on; caracteristicas as
// <code>:<value> pairs joined by "-"); the use cases call it before anything else.
//
// # Concurrency and failures
//
// An operation on an existing authorization first claims the record ([Store.Claim]): the
// in-flight marker (operacion_en_curso) and the pending attempt are committed in one short
// transaction that locks the row, so only one request calls the creditsystem; the others get
// [ErrInFlight], or a [StateError] once the winner moved the record. /otp is refused too while
// the marker is set. No transaction is open during the upstream call. The outcome is written
// afterwards ([Store.Settle]) with the attempt, on a context detached from the caller's (bounded
// by [DefaultOutcomeWriteTimeout]), so that an answer is recorded even if the caller went away.
//
// Nothing is ever retried; timeouts come from the creditsystem client (CREDITSYSTEM_TIMEOUT). A
// rejection (lError) or a SOAP fault means the creditsystem did not apply the operation: the
// marker is dropped and the state is unchanged; so is a call that never left (refused
// connection). A timeout, or a connection lost after the request left, leaves the outcome
// unknown: the marker stays with resultado_desconocido, the attempt is audited as "timeout" or
// "transport", and every later operation gets [ErrOutcomeUnknown] until an operator, having asked
// the creditsystem, calls [Service.Reconciliar] (the service's `credit reconcile`). An applied
// operation whose outcome could not be written is held the same way, its attempt "ok" with the
// answer. A timed-out authorization creates no record (the creditsystem never named it); its
// audit row carries the request id. A process that dies during a call leaves the marker and a
// "pending" attempt, which an operator settles the same way. The invoice of a confirmation in
// flight stays on the record (operacion_factura) for that.
//
// Stored values: source_system is always PLATFORM; codigo_empresa is the caller's, while the
// creditsystem always receives the configured company code; otp is the customer's OTP
// registered at /otp. The OTP bypass code (CREDITSYSTEM_OTP_BYPASS) is never stored, logged or
// put in an error: audit summaries record only the kind of OTP sent.
//
// # Errors
//
// *ValidationError (one [Problem] per broken rule), [ErrAutorizacionNotFound]
// (*AutorizacionNotFoundError), [ErrInvalidState] (*StateError naming the authorization, its
// state and the operation; *NoInvoiceError also matches it), [ErrInFlight] and
// [ErrOutcomeUnknown] (*ConflictError naming the upstream operation that holds the record), and
// the creditsystem package's errors passed through unchanged.
package consumption
