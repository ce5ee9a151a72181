// Package credit is the domain of the credit service (specification credit-service.md): the
// client registry and the direct-credit consumption lifecycle, persisted with bun on SQLite or
// PostgreSQL. It imports no HTTP framework; services/credit is its Fiber shell, and the one
// function that maps these errors to HTTP statuses lives there (mapError).
//
// # Construction
//
//	db, _ := storage.Open(ctx, databaseURL)
//	storage.Migrate(ctx, db, credit.MigrationsTable, credit.Migrations)   // table credit_migrations
//	clients, _ := credit.NewClients(credit.NewClientStore(db), erpClient)   // *erp.Client
//	consumos, _ := credit.NewConsumos(db, creditsystemClient)               // *creditsystem.Client
//
// Both are safe for concurrent use and keep no state of their own, so several service instances
// can share one database.
//
// # Client registry
//
// [Client] carries every field of the specification; the pair (identificacion, codigo_empresa)
// and codigo_cliente (when present) are unique in the database. [ClientFields] is the
// create/update input: it records whether each field was sent, sent as null or had the wrong
// type, so an update changes only what was sent. extra_fields are validated by family
// (lista_datos_n a string or an array of strings, alfanumerico_n a string, valor_n numeric,
// fecha_n yyyy-mm-dd, booleano_n 0/1 as a number or string or a JSON boolean, stored as 1/0,
// texto_n up to 32000 characters, n = 1..10); an unknown key is a validation problem.
// [Clients.CreateFromCreditSystem] looks the client up in the ERP and in the local store in
// parallel. [Clients.SyncERP] claims the record first (erp_sync_claim), so two concurrent syncs
// never both call the ERP, and sends operacion 1 once the ERP has ever accepted the client
// (erp_synced_at set), otherwise 0; a sync that raced a PUT (version column) leaves the client
// unsynced. Errors: [ErrClientExists] (*ClientExistsError with the reason EXISTS_IN_ERP or
// EXISTS_LOCAL), [ErrClientNotFound], [ErrCodigoClienteTaken], [ErrClientSyncInProgress],
// *ClientValidationError (one problem per entry), *ClientSyncError wrapping the erp error.
//
// # Consumption
//
// [Consumos] runs the lifecycle of a purchase (authorization, OTP, confirmation, reversals)
// against the creditsystem, with the states and transitions of the specification as methods of
// [Consumo] that return sentinel errors ([ErrInvalidState] and friends). Where the specification
// is silent: /reverso is allowed from OTP_RECIBIDO and refused from CONSUMO_REVERSADO.
//
// An operation on an existing authorization first commits an in-flight marker
// (operacion_en_curso) with a compare-and-set, so two concurrent requests never both call the
// creditsystem; the loser gets [ErrInFlight]. No transaction is open during the upstream call.
// Every money-moving attempt is audited in consumo_intentos ([Intento]) before the call and
// completed after it. Nothing is ever retried: after a timeout the outcome is unknown, the marker
// stays (resultado_desconocido) and every call on the authorization gets [ErrOutcomeUnknown]
// until an operator, having asked the creditsystem, records the answer with
// [Consumos.Reconciliar] (the service's `credit reconcile <autorizacion_id>
// applied|not-applied`). Timeouts come from the creditsystem client (CREDITSYSTEM_TIMEOUT).
//
// The OTP bypass code (CREDITSYSTEM_OTP_BYPASS) is never stored, logged or put in an error.
package credit
