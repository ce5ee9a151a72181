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
// Every write of a record bumps its version and is a compare-and-set on it: the settlement
// writes on the claim's copy without reading the record again (reading it under lock only when
// another write came between), and [Store.Update] (the OTP) reads without a lock and tries
// again when it lost. It and the claim on PostgreSQL start from the store's copy of a record it
// just wrote when it has one, which saves the read of a flow's next step ([Store] says why a
// stale copy is harmless). On PostgreSQL the claim decides on that copy or on the record read
// without a lock, and commits the marker and the pending attempt as one statement (a
// data-modifying WITH: the version compare-and-set, the attempt inserted from its RETURNING),
// and the settlement is one statement too (the compare-and-set and the attempt's outcome): of
// two claims on one version only one matches, and a claim or settlement whose record moved
// writes nothing and runs again on the locked path above. SQLite keeps the transactions
// (group-committed).
//
// Nothing is ever retried; timeouts come from the creditsystem client (CREDITSYSTEM_TIMEOUT),
// and the call runs to that deadline whatever happens to the request, so its answer is recorded.
// A rejection (lError) or a SOAP fault means the creditsystem did not apply the operation: the
// marker is dropped and the state is unchanged; so is a call that never left (refused
// connection, or the request's deadline passed first: "not_sent"). A timeout, or a connection
// lost after the request left, leaves the outcome unknown: the marker stays with
// resultado_desconocido, the attempt is audited as "timeout" or "transport", the call's error
// comes back as a [*HeldError] carrying the record as it was left, and every later operation
// gets [ErrOutcomeUnknown] until an operator, having asked the creditsystem, calls
// [Service.Reconciliar] (`credit reconcile`). A process that dies during a call leaves the marker
// and a "pending" attempt; once older than the call timeout ([WithCallTimeout]) the record reads
// as unknown ([Consumo.Envejecer]) and is reconciled the same way. The invoice of a confirmation
// in flight stays on the record (operacion_factura) for that.
//
// An operation the creditsystem applied whose outcome could not be written (after
// [storage.RetryWrite]) is an [UnrecordedError] carrying the ids. On an existing record the
// record is held as unknown, like a timeout. A granted authorization has no record to hold: its
// attempt keeps the answer as "granted_unrecorded" and [Service.ReversarNoRegistradas] (the
// service runs it every CREDIT_RECONCILE_INTERVAL) reverses it with GrabarReversoAutorizacion,
// audited; a refused or unknown reversal is left to an operator. A grant of an autorizacion_id
// already recorded (UnrecordedError.Duplicate) is neither recorded nor reversed (the id is the
// recorded authorization's too): its attempt keeps the answer for an operator. A timed-out
// authorization creates no record either (the creditsystem never named it): its attempt
// carries the request id. Attempts that need a person are counted by [Store.Unknown] and, once
// the operator made the creditsystem right, closed with [Service.Atender] (`credit settle`).
//
// Stored values: source_system is always PLATFORM; codigo_empresa is the caller's, while the
// creditsystem always receives the configured company code. The customer's OTP, registered at
// /otp and sent at the confirmation, is kept sealed (AES-256-GCM with CREDIT_OTP_KEY,
// [WithOTPKey]), not hashed, because the confirmation needs its value; it is
// erased when the flow ends. The OTP bypass code (CREDITSYSTEM_OTP_BYPASS) is never stored,
// logged or put in an error: audit summaries record only the kind of OTP sent.
//
// # Errors
//
// *ValidationError (one [Problem] per broken rule), [ErrAutorizacionNotFound]
// (*AutorizacionNotFoundError), [ErrInvalidState] (*StateError naming the authorization, its
// state and the operation; *NoInvoiceError also matches it), [ErrInFlight] and
// [ErrOutcomeUnknown] (*ConflictError naming the upstream operation that holds the record),
// [ErrNothingToReconcile], *UnrecordedError, *HeldError (wrapping the creditsystem's error of an
// operation on an existing authorization whose outcome is unknown), and otherwise the
// creditsystem package's errors passed through unchanged.
package consumption
