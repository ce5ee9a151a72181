// Package payments is the credit-card payments module of the credit service (specification
// credit-service.md, "Payments module" and "Payment rules"): debt queries, payments and their
// reversals against the creditsystem's Cartera service, a ledger with one [Pago] per payment, and
// the hand-over of each applied or reversed payment to the ERP (rule 8).
//
//	q, _ := jobs.New(db, nil, jobs.Config{})                          // db migrated with credit.Migrations and jobs.Migrate
//	svc, err := payments.NewService(payments.NewStore(db, q), csClient, payments.WithERP(erpClient))
//	p, err := svc.Aplicar(ctx, payments.PagoInput{...})
//
// # Rules
//
// [PagoInput.Validate] checks the request's shape (a 400 for the service); [PagoInput.Rules] the
// payment rules that need nothing upstream, each a [RuleError] in a cashier's words (422): the
// formasPago add up to valorPago exactly, in decimal arithmetic; cash (001) carries no bank data
// and a cheque (002) all five fields. Rule 1, valorPago not above the debt's pagoContado, is
// checked by [Service.Aplicar] against a ConsultarDeudaTarjeta it makes itself, while it holds
// the card. The creditsystem decides the order in which a payment is applied (rules 4 to 6).
//
// # Ledger, concurrency and failures
//
// A payment is recorded PENDIENTE before anything is asked upstream, and that record holds the
// card: a unique index allows one open record per card (a payment in flight or with an unknown
// outcome, or a reversal in flight or with an unknown outcome), so two requests never both pay,
// whatever the number of instances; the second gets a [ConflictError] (409). A refusal before
// GrabarPagoTarjeta (a rule, the debt query failing, the request's deadline) deletes the record:
// bad input changes nothing. Just before the call the debt's pagoContado is written on the
// record; the call runs to its own deadline (CREDITSYSTEM_TIMEOUT) whatever happens to the
// request, and its outcome is written with retries: APLICADO with the operation number, the
// affected invoices, rubros and cupos (and the ERP hand-over, in the same transaction);
// RECHAZADO (lError, a fault, or a call that never left); DESCONOCIDO after a timeout or a
// connection lost after the request left. A reversal holds the applied payment the same way
// (operacion_en_curso) and ends REVERSADO with the reversed invoices and rubros, back to
// APLICADO when refused, or held with an unknown outcome.
//
// Nothing is retried after a timeout (rule 7). While a card has an unknown outcome, a payment or
// reversal of the card is a ConflictError telling the caller to query the debt first, and
// [Service.ConsultarDeuda] settles it: a debt query that started after the outcome became
// unknown compares pagoContado with the one read before the call. A payment is applied when the
// cash amount fell (DESCONOCIDO -> APLICADO, without an operation number: its receipt is left to
// a person), otherwise NO_APLICADO; a reversal is applied when it rose (REVERSADO, with the
// payment's invoices and rubros), otherwise released. The comparison is kept on the record
// ([Conciliacion]). It cannot see a payment made through another channel between the two
// readings; such a case shows in the evidence. A payment or reversal whose process died during
// the call counts as unknown once older than the call timeout plus 15 s ([WithCallTimeout]).
// An outcome that could not be written even after retrying is an [UnrecordedError] with the ids;
// the record stays held and a debt query settles it.
//
// # ERP hand-over
//
// Each APLICADO or REVERSADO payment gets an [Entrega] and a River job ([HandOverArgs], queue
// [HandOverQueue]) in the transaction that records it. The job calls erp.HandOverPayment with the
// operation number and the invoices and rubros ([Service.Entregar]); the ERP deduplicates by
// event and operation number, and a delivered hand-over is never sent again. A failed attempt is
// retried with the queue's backoff and written on the hand-over (failing, its attempts and last
// error); when the retries are spent it is failed, for a person, and counted by
// [Service.Pendientes]. [Service.Reenviar] sends a failed one again; [Service.Cerrar] records
// the document a person issued by hand (the service's `credit handover` command).
//
// # Errors
//
// *ValidationError (internal/validation, one problem per field), [ErrRule] (*RuleError),
// [ErrPagoNotFound] (*NotFoundError), [ErrInvalidState] (*StateError), [ErrInFlight] and
// [ErrOutcomeUnknown] (*ConflictError), [ErrNotRecorded] (*UnrecordedError), *RecordedError
// wrapping an upstream error that left a record, and the creditsystem package's errors.
package payments
