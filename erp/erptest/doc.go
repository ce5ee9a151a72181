// Package erptest is an in-process fake ERP speaking the wire format documented in package
// erp, for tests and for the services' development mode.
//
// # The fake
//
//	srv := erptest.NewServer()           // httptest server on loopback
//	defer srv.Close()
//	c, _ := erp.New(srv.Config(2 * time.Second))
//
// NewFake is the fake without a listener, an http.Handler; its Transport runs it in the
// caller's process with no socket, as the credit service does in development mode (a held
// request ends with the request's context, a dropped one is ErrConnectionDropped):
//
//	fake := erptest.NewFake()
//	c, _ := erp.New(erp.Config{BaseURL: erptest.MockURL, Timeout: 2 * time.Second}, erp.WithHTTPClient(fake.HTTPClient()))
//
// The fake serves POST erp.DefaultLookupPath and POST erp.DefaultClientsPath. Clients live
// in memory keyed by (codigo_empresa, identificacion). A create (operacion 0) assigns
// codigo_cliente "C-<identificacion>" unless the payload brings one, and refuses a client that
// already exists (error_api). An update (operacion 1) merges the members sent over what the
// ERP holds and refuses an unknown client. The fake checks the payload like a strict ERP:
// unknown member names (a public telefono_1 that should have become numero_telefono_1, an
// extra field outside the six families) and limits or valor_n that are not JSON numbers get
// HTTP 400 with error_api true.
//
// It also serves POST erp.DefaultPaymentsPath, the payments hand-over. It keeps the hand-overs
// keyed by (evento, numero_operacion): the first issues the document RC-<numero_operacion> (a
// receipt, evento pago) or NC-<numero_operacion> (a credit note, evento reverso) and answers
// duplicado false; a repeat answers the same document with duplicado true and issues nothing,
// without comparing its body with the first. A reversal is not checked against a payment. The
// body is checked like a strict ERP: an unknown member (at the top or in an item), a missing
// one (all are required but motivo), an evento other than pago or reverso, a numero_operacion
// that is not a JSON integer > 0, an amount that is not a JSON number or has more than 2
// decimals, a fecha_pago that is not yyyy-mm-dd, or an Idempotency-Key header other than
// <evento>-<numero_operacion> (the header may be absent) get HTTP 400 with error_api true.
// HandOvers returns the distinct hand-overs accepted, oldest first.
//
// # Magic values
//
// Without any script the fake answers these values (constants named after the member they go
// in: IdentificacionExisting, NombreClienteErrorAPI, IdentificacionServerError,
// IdentificacionTimeout, NumeroTarjetaServerError, NumeroTarjetaTimeout):
//
//	identificacion 0999999999   exists in the ERP under every codigo_empresa, codigo_cliente
//	                            C-0999999999 (a create of it is refused as a duplicate)
//	nombre_cliente ERROR_API    create, update, or a lookup that sends the name, answers
//	                            HTTP 200 with error_api true
//	identificacion 0999999500   lookup and sync answer HTTP 500
//	identificacion 0999999504   lookup and sync never answer (the caller times out)
//	numero_tarjeta 0999999500   a hand-over answers HTTP 500; no document is issued
//	numero_tarjeta 0999999504   a hand-over never answers (the caller times out); no
//	                            document is issued
//
// nombre_cliente ERROR_API applies wherever the name is sent: the clients endpoint
// (erp.SyncClient, create and update) and the external query when the caller sends the name it
// is about to register (erp.Client.Lookup with LookupQuery.NombreCliente). The design's table
// keys the outcome on the input nombre_cliente, so at the service level POST
// /clients/from-creditsystem with that name is a 502 from its ERP pre-check, and a client
// created with that name through POST /clients gets its 502 at POST /clients/:codigo/sync-erp. A
// lookup by key alone (POST /clients/exists) is never affected, not even for a client whose
// stored name is ERROR_API (seeded with WithClients). The value is matched exactly (not
// "error_api", not padded) on the payload sent: an update that does not send nombre_cliente is
// not rejected, whatever name the ERP holds. A rejected call changes nothing. The magic
// identificaciones 0999999500 and 0999999504, and scripted reactions, are checked first. On a
// hand-over, scripted reactions come before the magic numero_tarjeta.
//
// # Scripting
//
// Script(op, reactions...) queues reactions for the next calls of erp.OpLookupClient,
// erp.OpSyncClient or erp.OpHandOverPayment, one per call. Reactions: Process (the normal
// behaviour, magic values included, useful with After), BusinessError(mensaje) (error_api true
// in an HTTP 200; WithStatus for the ERP's JSON error in another status), Hang(), Drop(),
// LateSuccess() (the change is applied or the document issued, the answer never comes),
// Raw(status, body); After(d) delays any of them, the fake carrying on even if the caller gave
// up, so Process().After(d) past the client's deadline is a late success. WithLookupDelay /
// WithSyncDelay slow every lookup / create and update; OnLookup runs a hook, which may block,
// at the start of every lookup, so a test can prove that the lookup overlaps other work.
// Calls(op) and Requests(op) report what the fake received, every request counted (repeats
// and refusals included); Client, Fields and HandOvers what it holds. Close releases every
// held request (the connection is closed without an answer).
//
// # httpmock fixtures
//
// Package erptest/fixtures registers answers recorded from this fake on an httpmock
// MockTransport; it is apart so that importing the fake does not import httpmock.
package erptest
