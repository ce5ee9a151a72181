// Package carriertest is an in-process fake of the carrier's SPR that speaks
// the real umsprot wire format over HTTP, keeps its state in memory and can
// be scripted per test. Services run on it in mock mode
// (CARRIER_MOCK_MODE=true), so every outcome of the carrier can be triggered
// without network access.
//
// # Construction
//
//   - NewServer(opts...) starts a Fake on a loopback port: put Server.URL in
//     carrier.Config.URL (and Server.TokenURL() in OAuth2.TokenURL when the
//     fake is WithOAuth2). Close it when done.
//   - NewFake(opts...) is the fake without a listener. It is an
//     http.Handler; Fake.Transport() is an http.RoundTripper that runs it in
//     the caller's process, with no socket: a held request ends when the
//     request's context does, a dropped one is ErrConnectionDropped.
//   - NewMock(cfg, opts...) is mock mode in one call: a *carrier.Client over
//     a new Fake's Transport, the fake checking cfg's credentials (and
//     issuing OAuth2 tokens to cfg's client when cfg.OAuth2 is set).
//
// Options: WithCredentials (sre_consulta_recarga and sre_consulta_inventario
// then check USERID, PASSWORD, COMPANYID; a mismatch answers STATUS=ERROR,
// ID_CODIGO 1, "invalid credentials"), WithOAuth2 (tokens at TokenPath; SPR
// calls without a valid bearer token get HTTP 401), WithStock.
//
// # Magic subscribers
//
// A top-up (sre_topupd_76186) for one of these subscribers gets its outcome
// from any HTTP client, without scripting (constants SubscriberNoBalance,
// SubscriberIPNotAuthorized, SubscriberTimeout, SubscriberLateSuccess); the
// arrow is the upstream.Kind of the client's error:
//
//	593990000001  STATUS=ERROR, ID_CODIGO 1, MENSAJE "no balance"      -> rejected
//	593990000002  SOAP fault, faultcode 350, in HTTP 500                -> fault
//	593990000003  no answer until the caller gives up (timeout)         -> outcome unknown
//	593990000004  late success: the ledger records SUCCESS, then the    -> outcome unknown,
//	              connection is held without an answer until the          then the query
//	              caller gives up (not dropped: the caller sees a          says SUCCESS
//	              timeout, as with a slow carrier)
//	any other subscriber matching ^593[89]\d{8}$: STATUS=SUCCESS, ID_CODIGO 0
//
// Other answers: a subscriber not matching the pattern gets ID_CODIGO 3
// "invalid subscriber number"; an OFFERID that is not in the inventory
// ID_CODIGO 1 "unknown offer" (1 is the code the specification gives the
// carrier's refusals, "wrong product" among them; it names no other code
// for an offer); a missing or unreadable element ID_CODIGO 2; a top-up
// above the offer's stock ID_CODIGO 5 "offer out of stock"; a document that
// is not umsprot a SOAP fault "Client" in HTTP 500.
//
// # Ledger
//
// Top-ups are kept by EXTERNALTRANSACTIONID. The first call with an id acts
// (SUCCESS takes QUANTITY units from the offer's stock and gets an
// ID_RECARGA 700000001, 700000002, ... in order; a business error is
// recorded as ERROR); a later call with the same id and the same data
// changes nothing and answers the original result, byte for byte; the same
// id with other data gets ID_CODIGO 4. Faults, hangs and drops commit
// nothing, so a retry with the same id acts then. Fake.Entry reads an id's
// record, Fake.Calls counts calls per function, Fake.Stock reads the
// inventory.
//
// sre_consulta_recarga answers from the ledger: STATUS=SUCCESS, ID_CODIGO 0,
// the ID_RECARGA and MENSAJE "top-up found" for a successful id; the
// recorded error for a failed one; STATUS=ERROR, ID_CODIGO 1 with MENSAJE
// "transaction not found" for an unknown id and "wrong product for the
// query" when OFFERID differs.
//
// sre_consulta_inventario answers the stock: by default offers 31 "Pin 3",
// 30 "Pin 5", 151 "Pin 10" and 150 "Datos", 1000 units each (the
// specification's product mapping). The inventory is also the list of
// offers the fake knows: WithStock or Fake.SetStock adds one; a top-up of any
// other offer is refused.
//
// # Scripting
//
// Fake.Script(function, reactions...) queues reactions for the next calls
// of a function, ahead of everything else; Fake.ScriptSubscriber sets the
// reaction to every new top-up of a subscriber, replacing a magic one.
// Reactions: Process (the normal behaviour, useful with After), BusinessError
// (a code and a message), Fault (a faultcode and faultstring, HTTP 500 or
// WithStatus), Hang, Drop, LateSuccess, Raw (any status and body); After(d)
// delays any of them, the fake carrying on even if the caller gave up, so
// Process().After(d) past the client's deadline is a late success that shows
// in the ledger after d.
//
// # Gates: holding an answer without a clock
//
// Until(g) holds a reaction's answer at a Gate (NewGate) until the test
// calls g.Open(). The fake acts first, so Process().Until(g) has the top-up
// committed as SUCCESS while the caller still waits; g.Reached() is closed
// as soon as a call is held (or passes) there. Opened, the gate lets the
// answer go; a reaction that holds anyway (Hang, LateSuccess) is then
// dropped, the caller seeing a transport error at once instead of its
// timeout. A held call also ends, dropped, when the caller's context or
// deadline ends or the fake is closed, so nothing is left running. Tests that
// look at what happens while the SPR "works" use a gate, not a sleep:
//
//	g := carriertest.NewGate()
//	fake.Script(carrier.FunctionTopup, carriertest.Process().Until(g))
//	go call()                 // the client's timeout is only a failure bound
//	<-g.Reached()             // in a select with the test's failure timeout
//	// ... assert the in-flight state ...
//	g.Open()                  // then assert the outcome
//
// # httpmock fixtures
//
// Package carriertest/fixtures registers answers recorded from this fake on an httpmock
// MockTransport; it is apart so that importing the fake does not import httpmock.
package carriertest
