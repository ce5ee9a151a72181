// Package topup is the domain of the top-up service: the transaction record and its state
// machine, the rules of every input, the product mapping, the guards of the manual endpoint,
// the webhook's idempotency, the notifications and the reconciler, persisted with bun on
// SQLite or PostgreSQL. It imports no HTTP framework; services/topup is its Fiber shell.
//
// # Construction
//
//	db, _ := storage.Open(ctx, databaseURL)
//	topup.Migrate(ctx, db)            // table topup_migrations
//	jobs.Migrate(ctx, db, topup.JobIndex) // River's tables, its jobs indexed by transaction
//	q, _ := jobs.New(db, nil, jobs.Config{})
//	spr, _ := carrier.New(carrier.Config{...})
//	svc, _ := topup.NewService(topup.NewStore(db, q), spr, topup.Config{DailyLimit: 50, ...})
//	go svc.Run(ctx)                   // the reconciler
//
// [Service] holds the use cases: [Service.Recharge] (manual, synchronous), [Service.Webhook]
// (automatic), [Service.Ignore], [Service.QueryRecharge], [Service.Reconcile] and [Service.Run],
// and the reads (Get, [Service.Lookup] by transaction_id or external_transaction_id, List with
// its [Filter], whose From and To are [Day]s of DayZone, CarrierCalls, Notifications,
// Inventory). Each one loads, decides, calls the carrier and settles, in that order.
//
// # Errors
//
// Sentinels reached with errors.Is: [ErrInvalidRequest] ([*ValidationError], one
// [FieldError] per broken rule), [ErrThrottled] ([*ThrottleError] with the wait),
// [ErrDailyLimit], [ErrActionTokenUsed], [ErrActionTokenInvalid], [ErrDuplicateInvoice]
// ([*DuplicateError]), [ErrRejected] ([*RejectedError]), [ErrNotFound], [ErrConflict],
// [ErrInvalidTransition], [ErrFinal], [ErrChargeNotConfirmed]. A top-up the carrier refused or
// did not answer is a [*CarrierError] carrying the record in its new status; a query the
// carrier did not answer is one without a record. Either wraps the carrier package's error
// (*carrier.Error, *carrier.FaultError, *carrier.TransportError; carrier.IsTimeout).
//
// A carrier call's error gives the record its status by the specification's rules: none is
// success; a business refusal (*carrier.Error), or a request the carrier package refused to
// send (carrier.ErrInvalidRequest), is failed; anything else, a SOAP fault included, is
// unavailable, since the carrier may have acted.
//
// # Timeouts
//
// Carrier calls carry the carrier client's deadline (CARRIER_TIMEOUT); they run detached
// from the caller's cancellation so that an outcome is always written. A timed-out top-up is
// never sent again by the request that timed out; only the reconciler sends it again, after
// the carrier said it does not have it.
//
// # Records and transitions
//
// [Transaction] carries every field of the specification plus a few the audit needs
// (requested_by_email, amount, ignored_reason, carrier_message, incident, incident_note,
// last_reconciled_at, retries_exhausted_at). Its transitions are methods that return
// [ErrInvalidTransition] (a [*TransitionError]; also [ErrFinal] when the record is success) for
// any move outside the specification's table: Succeed, Fail, MakeUnavailable (pending ->
// success/failed/unavailable, the latter counting retry_count), Retry (unavailable -> pending),
// ConfirmRemoteSuccess (pending/unavailable -> success; failed -> success only when the
// business confirms the charge, [ErrChargeNotConfirmed] otherwise) and FlagRemoteError (a
// success the carrier answers ERROR for is flagged as an incident and never downgraded). The
// legacy status error takes part in no transition.
//
// # Store
//
// [Store] owns every database transaction; nothing else in the package sees one, and none is
// open across a carrier call:
//
//   - [Store.Admit] inserts a pending manual top-up with its guards (below);
//   - [Store.Insert] inserts a record with the job announcing it, [Store.InsertInvoice] one that
//     holds a source_xml_hash, unless a record holds it already (which it returns);
//   - [Store.Update] loads a record locked (SELECT ... FOR UPDATE on PostgreSQL; SQLite's write
//     transaction serialises already), hands it to a closure that decides, and writes the
//     [Settlement]: the record, the carrier-call audit row and the notification job, all or
//     nothing. An outcome is settled from pending this way, so a record someone reconciled
//     while its SPR call was in flight keeps its new status and only gains the audit row; a
//     crash between the pending commit and the outcome leaves a pending record for the
//     reconciler. [Store.UpdateHeld] does the same on the record the caller holds, without
//     reading it again: every write bumps the record's version, and the write is a
//     compare-and-set on it, falling back to Update when the record moved. On PostgreSQL its
//     settlement is one statement (a data-modifying WITH: the compare-and-set, and the audit
//     row and the job inserted from its RETURNING), so that a record that moved gets neither.
//
// Unique keys are recognised by name (storage.Unique): the action token's jti and
// source_xml_hash. The job queue is reached through internal/jobs, to insert inside the
// store's transactions and to read a transaction's notifications back.
//
// # Guards (all in the database, so they hold across instances)
//
//   - Single use of the action token: table topup_action_tokens keyed by the token's jti.
//   - Throttle: [DefaultThrottleLimit] requests per [DefaultThrottleWindow] per user, group
//     "recharge", as a sliding window of rows in topup_throttle_hits.
//   - Daily limit: the manual top-ups (every status: each was an attempt at the carrier) the
//     user requested in the current calendar day of America/Guayaquil, against
//     Config.DailyLimit (RECARGAS_DAILY_LIMIT, default 50), unless Operator.Unlimited
//     (permission unlimited_recargas).
//
// They are checked in this order in the one transaction that inserts the pending record,
// serialised per user (pg_advisory_xact_lock on a hash of the user id on PostgreSQL; on SQLite
// every write transaction is BEGIN IMMEDIATE already): a reused token is 401 before anything
// else, then the throttle, then the daily limit. A refusal rolls everything back, so a refused
// request neither spends its token nor takes a place in the throttle's window: the throttle
// counts the requests it admits (those that reach the carrier), which is what it protects.
// Body validation comes first and does not count.
//
// # Manual requests
//
// Field rules: subscriber_id ^593[89]\d{8}$ exactly as sent (blanks around it are an error
// too, on the webhook as well), offer_id required, quantity an integer from 1 to
// [MaxQuantity] (100; the specification gives no maximum), external_operation RECARGA_DATOS or
// RECARGA_PINES, canton 4 digits and required (the fallback canton is the webhook's).
//
// # Webhook
//
// Field rules (decided here where the specification is silent): invoice_number, product_code
// (RECCARRIER*), subscriber_id (^593[89]\d{8}$), amount (> 0, below 10^11, at most 20
// decimals; bounds checked on digits and exponent before any arithmetic) and source_xml_hash
// are required (a hex SHA-256 is compared case-insensitively; any other visible token of up to
// 128 characters is accepted as it is, since the key is only compared); invoice_code,
// notification_email (an address) and canton (4 digits; [Config].DefaultCanton,
// RECARGAS_DEFAULT_CANTON, default 1701, when absent) are optional; quantity is always 1. The
// specification's table records every refused invoice as rejected with
// recharge-invalid-invoice, so:
//
//   - a broken field rule: record rejected (INVALID_PAYLOAD), [*ValidationError] (HTTP 400);
//   - a member of the wrong type (a number for a string, a string or an object for amount) or a
//     body that is not a JSON object: the same, INVALID_PAYLOAD (the caller reports it in
//     WebhookRequest.Problems), never an unrecorded 400;
//   - a source_xml_hash already recorded: record rejected (DUPLICATE_SOURCE_XML_HASH) without
//     the hash, which stays with the original, and [*DuplicateError] (HTTP 409), no carrier
//     call. The specification's rule, to the letter: a repeated hash is 409 whatever else the
//     delivery says. The answer is idempotent: every repetition names the same original
//     transaction and changes nothing about it;
//   - idempotency is by source_xml_hash alone, as the specification says: an invoice_number
//     already recorded under another hash is not refused; it is processed as a new top-up
//     (201);
//   - no mapping (PRODUCT_NOT_MAPPED) or |amount - mapped amount| > 0.01 (AMOUNT_MISMATCH):
//     record rejected with its hash, rejection_reason the code alone, [*RejectedError] (HTTP
//     422, error the code, message the reason in words, which the notification carries too).
//
// Of concurrent deliveries of one hash exactly one record holds it and only it calls the
// carrier; the others are recorded as duplicates of it ([Store.InsertInvoice]). Webhook
// returns a nil error for every processed outcome (success, failed, unavailable): the service
// owns the retries.
//
// An e-mail the workflow tool could not process is recorded by [Service.Ignore]: status
// ignored, source workflow-ignored, the reason and the payload, no carrier call, no
// notification.
//
// # Product mapping
//
// [DefaultProducts] is the specification's table with the expected amounts this package chose
// (RECCARRIER3 3.00, RECCARRIER5 5.00, RECCARRIER10 10.00, RECCARRIERDATOS3 3.00,
// RECCARRIERDATOS5 5.00); [ParseProducts]/[LoadProducts] replace it from JSON.
//
// # Notifications
//
// Each status change the specification's events table names enqueues, in the transaction of
// the change, a job on [NotificationQueue] ("recharge-notifications") of kind
// recharge-success, recharge-failed, recharge-unavailable or recharge-invalid-invoice, whose
// args embed [Notification] with the recipients de-duplicated (notification_email, the
// operator's e-mail, OPERATIONS_EMAIL; invalid invoices: notification_email and operations).
// The job is inserted even when it has no recipient at all: the worker decides, and completes
// such a job without calling the Sender. [AddNotificationWorkers] registers the River workers
// that hand each notification to a [Sender] (the e-mail sender). One e-mail per record per kind
// of event: a record's later passes through unavailable (the reconciler's retries) announce
// nothing more, and of the repeated deliveries of one invoice only the first is announced
// ([Store.InsertDuplicate]).
//
// # Reconciler
//
// [Service.Reconcile] (and [Service.Run], every ReconcileConfig.Interval) takes pending
// records untouched for PendingAfter (default 5 min; the configuration refuses one not above
// CARRIER_TIMEOUT) and unavailable ones untouched for RetryAfter (default 1 min) whose retries
// are not exhausted, and claims each: in [Store.Update], the record must still have the status
// and updated_at it was selected with, its updated_at moves, and it takes a lease
// (ReconcileConfig.Lease, longer than a query and a top-up together) during which no other pass
// selects it, so two instances never work one record. Then one rule:
//
// Ask the carrier first; send the top-up again, with the same external_transaction_id, only
// when the carrier says it does not know it. (An issue requires this order: the carrier keys
// top-ups on external_transaction_id, and a top-up that timed out may have been made, so
// sending before asking could charge twice; a new id would too.)
//
//   - SUCCESS (sre_consulta_recarga): the record becomes success, never sent again.
//   - ERROR: the carrier does not have the top-up (only MENSAJE tells "not found" from "wrong
//     product" or "invalid credentials", so every ERROR counts). An unavailable record goes
//     back to pending and is sent again while retry_count <= MaxRetries (default 3;
//     retry_count counts the passes through unavailable); an abandoned pending one is sent as
//     it is.
//   - No answer (fault, timeout): nothing changes; the next pass asks again, as long as the
//     carrier does not answer.
//
// Retries exhausted: an unavailable record whose retry_count is above MaxRetries (or any, with
// retries disabled) is still asked once more, so that a late success of its last send is
// found; when the carrier answers ERROR, the record keeps the status unavailable (the
// specification names no other final status, and failed means a business refusal) and gets
// retries_exhausted_at, which takes it out of the selection for good: it is neither queried
// nor sent again, and an operator reconciles it with query-recharge (which still applies a
// remote SUCCESS). A record is never made success without the carrier's SUCCESS.
// [Service.QueryRecharge] applies the same transitions on demand, to the record as it is when
// the carrier's answer arrives.
//
// # Metrics
//
// The package names no metrics library. A Store built with [WithObserver] tells an [Observer],
// after each commit, of the steps the service counts: a record reaching a status for the first
// time (success, failed, unavailable, rejected, ignored; the reconciler's later passes through
// unavailable are not told again, as they announce nothing) and the reconciler giving up on a
// record. [Service.ReconcileBacklog] counts, in one query, what waits for the reconciler and
// what it gave up on. services/topup turns both into Prometheus series (docs/operations.md).
package topup
