// Package clients is the client registry of the credit service (specification credit-service.md,
// "Client module"): clients are created and updated locally first (erp_synced false) and sent to
// the ERP by a separate, manual sync.
//
//	store := clients.NewStore(db)                      // db migrated with credit.Migrations
//	svc, err := clients.NewService(store, erpClient)   // *erp.Client
//	c, err := svc.Create(ctx, clients.SourceDashboard, clients.Fields{
//		CodigoEmpresa:  clients.FieldValue("000598"),
//		NombreCliente:  clients.FieldValue("MARIA PEREZ"),
//		Identificacion: clients.FieldValue("0102030405"),
//	})
//
// [Service] is safe for concurrent use and keeps no state of its own, so several service
// instances can share one database.
//
// # Records and inputs
//
// [Client] carries every field of the specification; the pair (identificacion, codigo_empresa)
// and codigo_cliente (when present) are unique in the database. [Fields] is the create/update
// input: each [Field] records whether it was sent, sent as null, or could not be read at all
// (Invalid), so an update changes only what was sent. [Fields.Validate] reports every problem:
// text fields by their length (codigo_cliente 80, codigo_empresa 20, nombre_cliente 255,
// identificacion 50, email 255 and a valid address, telefono_n 50, codigo_vendedor and
// termino_pagos 100, the others 50, direccion_1 unbounded), trimmed, an empty optional one
// stored as null; limits 0..999999999999.99 with at most two decimals; extra_fields by family
// (lista_datos_n a string or an array of strings, alfanumerico_n a string, valor_n a number or
// numeric string in plain decimal notation of at most 38 digits, fecha_n yyyy-mm-dd, booleano_n
// 0/1 as a number or string or a JSON boolean, stored as 1/0, texto_n up to 32000 characters,
// n = 1..10); an unknown key is a problem. On update extra_fields are merged key by key (a key
// sent as null is removed).
//
// # Use cases
//
// [Service.CreateFromCreditSystem] takes only the fields of [Fields.CreditSystemFields], asks the
// ERP and the local store in parallel ([Service.Lookup]) and creates the client only when neither
// knows it. [Service.SyncERP] claims the record first (erp_sync_claim, [WithSyncLease]), so two
// concurrent syncs never both call the ERP, and sends operacion 1 once the ERP has ever accepted
// the client (erp_synced_at set), otherwise 0: the specification says "depending on erp_synced",
// but a PUT turns erp_synced false, and asking the ERP to create again a client it holds would
// fail. A sync that raced a PUT (version column) leaves the client unsynced. No transaction is
// held while the ERP is called; an ERP call that timed out may have been applied and is never
// retried automatically.
//
// # Errors
//
// [ErrExists] (*ExistsError with the reason EXISTS_IN_ERP or EXISTS_LOCAL), [ErrNotFound]
// (*NotFoundError), [ErrCodigoClienteTaken], [ErrSyncInProgress], *ValidationError (one
// [Problem] per broken rule), *SyncError wrapping the erp package's error.
package clients
