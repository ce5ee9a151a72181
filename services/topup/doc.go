// Command topup is the top-up service (specification topup-service.md): manual and automatic
// (webhook) prepaid top-ups at the carrier's SPR, transaction queries, reconciliation and
// inventory, on port 3004 (PORT) under /api/v1/recargas. The domain is package topup; this is
// its HTTP shell: it decodes, calls the domain and encodes.
//
//	topup            serve (migrations are applied at start)
//	topup migrate    apply the migrations (topup_migrations and River's tables) and exit
//
// # Configuration
//
// internal/config.LoadTopup (APP_ENV, PORT, DATABASE_URL, JWT_SECRET or JWT_JWKS_URL,
// TOPUP_SERVICE_KEY, ACTION_TOKEN_SECRET, CARRIER_*, RECARGAS_DAILY_LIMIT,
// RECARGAS_DEFAULT_CANTON, RECARGAS_PRODUCTS_FILE / RECARGAS_PRODUCTS (product mapping as JSON,
// loaded by settings.go), RECARGAS_RECONCILE_INTERVAL, _PENDING_AFTER, _RETRY_AFTER,
// _MAX_RETRIES, OPERATIONS_EMAIL, SMTP_*). With nothing set it
// runs in development mode: SQLite at ./data/topup.db and the carrier in mock mode (the
// in-process carriertest fake with its magic subscribers), which it says in the log at start.
//
// On SQLite an instance keeps one database connection: SQLite has one writer at a time, and
// queueing in Go avoids the busy handler's sleeps (see BenchmarkWebhookTopup).
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
// statusOf (errors.go) is the one function from domain and SDK errors to statuses: 400 invalid
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
// query-recharge answers 200 whenever the carrier answered: success true with status SUCCESS
// and result_code 0, or success false with status ERROR and the carrier's ID_CODIGO and
// MENSAJE (not found, wrong product, invalid credentials); the local record, when there is
// one, is reported under "transaction" with its previous and new status.
//
// # Notifications
//
// The jobs are inserted on recharge-notifications in the transaction of each status change.
// A process started with options.Sender works the queue (topup.AddNotificationWorkers); main
// passes none until the e-mail sender exists, so this process only inserts.
package main
