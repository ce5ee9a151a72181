// Command topup is the top-up service (specification topup-service.md): manual and automatic
// (webhook) prepaid top-ups at the carrier's SPR, transaction queries, reconciliation and
// inventory, on port 3004 (PORT) under /api/v1/recargas. The domain is package topup; this is
// its HTTP shell: it decodes JSON into the domain's inputs, calls the domain and encodes.
//
//	topup            migrate the database, then serve until SIGTERM
//	topup migrate    migrate the database (topup_migrations and River's tables) and exit
//
// run opens the database (storage.Open) and migrates it for every command; to serve, it builds
// the instance with newServer(ctx, cfg, deps{DB, Logger, ...}), listens on cfg.Addr() and calls
// serve, which also runs the reconciler. newServer neither opens nor closes the database.
//
// # Configuration
//
// internal/config.LoadTopup (APP_ENV, PORT, DATABASE_URL, JWT_SECRET or JWT_JWKS_URL,
// TOPUP_SERVICE_KEY, ACTION_TOKEN_SECRET, CARRIER_*, RECARGAS_DAILY_LIMIT,
// RECARGAS_DEFAULT_CANTON, RECARGAS_PRODUCTS_FILE / RECARGAS_PRODUCTS (product mapping as JSON,
// loaded by settings.go), RECARGAS_RECONCILE_INTERVAL, _PENDING_AFTER, _RETRY_AFTER,
// _MAX_RETRIES, OPERATIONS_EMAIL, SMTP_*). With nothing set it
// runs in development mode: SQLite at ./data/topup.db and the carrier in mock mode (the
// in-process carriertest fake with its magic subscribers; it knows the offers of its inventory
// and of the product mapping and refuses any other with STATUS=ERROR, ID_CODIGO 1 "unknown
// offer", so such a top-up ends failed), which it says in the log at start.
//
// # Routes and authentication
//
//	POST /recharge                  Bearer + create_recargas + X-Action-Token
//	POST /webhook/invoice-recharge  x-service-key (TOPUP_SERVICE_KEY)
//	POST /webhook/invoice-ignored   x-service-key
//	POST /query-recharge            Bearer + view_recargas (confirm_charge: also create_recargas)
//	GET  /transactions              Bearer + view_recargas
//	GET  /transactions/:id          Bearer + view_recargas
//	GET  /inventory                 Bearer + view_recargas (decided here: stock is operational data)
//	GET  /up, GET /metrics          no prefix, no authentication
//
// # Statuses
//
// errorAnswer (errors.go) is the one function from domain and SDK errors to status and body,
// written by the routes' error handler; handlers return errors or success bodies. 400 invalid
// body; 401 credentials, and an action token that is invalid, expired, another user's,
// already used, or with a jti or sub the store cannot keep (over 200/100 bytes, NUL); 403 missing permission; 404 unknown transaction; 409 repeated
// source_xml_hash; 422 a top-up the carrier refused (failed) and a webhook invoice recorded
// rejected; 429 throttle (with Retry-After) or daily limit; 502 SOAP fault or unreachable SPR
// (and the SPR refusing a query or the inventory); 504 SPR timeout. /recharge answers 201 on
// success and, for 422/502/504, the specification's logical-rejection body with
// transaction_id, external_transaction_id and status = the record's status (failed or
// unavailable). The webhook answers 201 for every processed outcome (success, failed,
// unavailable: the reconciler owns the retries). Other errors use the envelope
// {"status":"error","statusCode":N,"message":...,"errors":[...]}.
//
// # Request and list rules decided here
//
// quantity (POST /recharge) is a JSON number whose value is an integer from 1 to 100: 1.0 and
// 1e0 are 1; 1.5, "1" and true are a 400 naming quantity.
//
// GET /transactions takes the specification's parameters, page, per_page, subscriber_id,
// status and source, and from and to (issue 19), and answers data and meta {total, page,
// per_page, total_pages}. page and per_page must be integers; page below 1 is 1, per_page is
// clamped to 1..100 (default 20). total_pages is ceil(total / per_page), so an empty list has
// total_pages 0 (the specification is silent); a page past the end answers an empty data.
// from and to are days yyyy-mm-dd of America/Guayaquil (topup.DayZone, loaded from the
// embedded tzdata), both included, on created_at: a record of 23:30 on day D in Ecuador (04:30
// UTC on D+1) is in from=D&to=D. A malformed date is 400 naming its parameter, from after to is
// 400. Items leave out the raw carrier XML (raw_request_xml, raw_response_xml), which the detail
// keeps: it was half of each item.
//
// GET /transactions/:id takes the transaction_id or the external_transaction_id
// (topup.Service.Lookup: the transaction_id is tried first and wins should a value be both).
//
// Every GET route under the prefix takes only its own query parameters (queryparams.go): any
// other, a misspelt one included, is 400 "unknown query parameter(s): <names>" in the
// validation envelope, reported with the list's other problems.
//
// # Webhook bodies
//
// The body is read member by member (webhook.go): a member of the wrong type (a number for a
// string) or a body that is not a JSON object is an invalid payload like a broken rule: 400,
// and the delivery is recorded rejected (INVALID_PAYLOAD). Every webhook error that left a
// record (400 invalid payload, 409 repeated invoice, 422 rejection) carries transaction_id,
// success false, source, invoice_number and error (the rejection code); the 400 and 409 are
// the envelope plus these members (status stays "error"). 409 answers a repeated
// source_xml_hash (DUPLICATE_SOURCE_XML_HASH, the specification's rule, whatever else the
// delivery says; a hex SHA-256 is compared case-insensitively) and also names
// original_transaction_id and original_status, the same on every repetition; nothing reaches
// the carrier. Idempotency is by source_xml_hash alone: an invoice_number already recorded
// under another hash is a new top-up (201).
//
// # Upstream failures
//
// A carrier that could not be reached or did not answer is reported with generic text:
// message.upstreamMessage "carrier unavailable" or "carrier timeout" in the envelope, a fixed
// sentence in /recharge's and the webhook's error field and in the recharge-unavailable
// notification. The transport error (URL, host) stays in the log and in the record's
// carrier_diagnostic, which only GET /transactions shows. A SOAP fault keeps its faultcode and
// faultstring, which are the carrier's own words.
//
// An unavailable record whose retries are exhausted keeps the status unavailable and shows
// retries_exhausted_at: the reconciler no longer looks at it (package topup, "Reconciler").
//
// query-recharge answers 200 whenever the carrier answered: success true with status SUCCESS
// and result_code 0, or success false with status ERROR and the carrier's ID_CODIGO and
// MENSAJE (not found, wrong product, invalid credentials); the local record, when there is
// one, is reported under "transaction" with its previous and new status.
//
// # Notifications
//
// The jobs are inserted on recharge-notifications in the transaction of each status change.
// Every process works the queue with the e-mail sender of package topup/email (SMTP_*, or the
// .eml outbox ./data/outbox in development without SMTP_HOST); `topup worker` runs the workers
// alone. The workers start in the background and retry every few seconds while the database
// refuses, so that a lock at start-up does not keep the API down.
package main
