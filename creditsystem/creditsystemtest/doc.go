// Package creditsystemtest is an in-process fake of the direct-credit system: it speaks the
// same SOAP as the Cartera and Central WCF services (WCF-style answers with a:/i: prefixes and
// i:nil members), keeps cards, credit lines, authorizations, consumptions with their
// amortization tables, debts, payments and reversals in memory, and can be scripted per test.
// It is the model for tests of code that uses package creditsystem, and the upstream the
// credit service runs against in development mode.
//
// # Construction
//
//	srv := creditsystemtest.NewServer()      // httptest server on loopback
//	defer srv.Close()
//	client, _ := creditsystem.New(srv.Config()) // URLs, namespace and DevConfig constants
//
// NewServer(opts...) starts a Fake on a loopback port. srv.URL serves both services (the fake
// routes by SOAPAction), so one base URL can be used for both CarteraURL and CentralURL;
// srv.CarteraURL (URL + CarteraPath) and srv.CentralURL (URL + CentralPath) accept only their
// own service's operations, as the real services do. NewFake(opts...) is the fake without a
// listener, an http.Handler; Fake.Transport() runs it in the caller's process with no socket
// (the credit service's development mode: URLs MockURL+CarteraPath and MockURL+CentralPath; a
// held request ends with the request's context, a dropped one is ErrConnectionDropped);
// Fake.Close releases held requests.
//
// Options: WithNamespace (must match the client's SOAPNamespace; default http://tempuri.org/),
// WithCentralContract (must match the client's creditsystem.WithCentralContract; default
// IServicioCentral),
// WithClock (dates of cards, tables and overdue installments), WithCreditLine (default 5000.00),
// WithFirstAuthorization (number authorizations from n, for a fake in front of a database that
// outlives it; such a fake adopts the authorizations numbered below n and the invoices it does
// not know, as recorded by an earlier run, so a development flow survives a restart),
// WithFixedCreditLines (no operation consumes a card's line; see Behaviour). The credit
// service in development mode uses WithFirstAuthorization and WithFixedCreditLines.
//
// # Magic values
//
// Without any script the fake answers these values (constants named after the member they
// go in: IdentificacionCardNotFound, MontoInsufficientCredit, MontoTimeout, OTPInvalid,
// NumeroFacturaFault, ValorPagoRejected, ValorPagoTimeout, ValorPagoLateSuccess,
// MotivoReversoFault):
//
//	input                                             outcome
//	identificacion or card 0000000002                 nNumeroError 2, customer without card
//	                                                  (cNumeroTarjeta or cNumeroIdentificacion:
//	                                                  either field wins over the other)
//	GrabarAutorizacion nMonto 666.66                  lError true, nNumeroError 51, "Cupo insuficiente"
//	GrabarAutorizacion nMonto 504.04                  no answer until the caller gives up (nothing recorded)
//	GrabarConsumo cCodigoOtp 000000                   lError true, nNumeroError 60, invalid OTP
//	                                                  (the OTP registered at /consumo/otp is sent here)
//	GrabarConsumo cNumeroFactura FAULT-500            SOAP fault a:InternalServiceFault in an HTTP 500
//	any other card                                    opened on first use with a 5000.00 line;
//	                                                  authorizations answer lCodigoSeguridadEnviado true
//	GrabarAutorizacion nPlazo above MaxPlazo (360)    lError true, nNumeroError 30, invalid term
//	GrabarPagoTarjeta nValorPago 666.66               lError true, nNumeroError 74, payment rejected
//	GrabarPagoTarjeta nValorPago 504.04               no answer until the caller gives up (nothing applied)
//	GrabarPagoTarjeta nValorPago 504.05               applied (when the rules allow it), never answered
//	GrabarReversoPagoTarjeta cMotivoReverso FAULT-500 SOAP fault a:InternalServiceFault in an HTTP 500
//
// # Behaviour
//
// An authorization lowers the available credit by its amount (51 when it does not fit); its
// reversal restores it. A confirmation turns it into a consumption of the invoiced amount (at
// most the authorized one, the difference goes back to the line) with an amortization table of
// plazo monthly installments, first due one month after the invoice, 1.5 % flat monthly
// interest, the rounding remainder in the last installment, so that capital adds up to the
// invoice and each installment to capital plus interest. The debt counts installments due
// before the clock's date as overdue (valor vencido, 2 % mora); pago contado is pending capital
// plus overdue interest plus mora. A payment goes to mora, then installment by installment to
// interest and capital; paying exactly pago contado also charges the interest not yet due and
// gives it back as a negative DPP rubro (early-payment discount). The rubros of a payment add
// up to the amount paid, and the paid capital goes back to the line. A payment reversal undoes
// it; a consumption reversal releases its pending capital.
//
// Terms go from 1 to MaxPlazo (360) installments. The table has one row per installment, so
// GrabarAutorizacion with a longer nPlazo answers 30 at once (nothing recorded, the line
// untouched), as does GrabarConsumo when it would adopt an earlier run's authorization (see
// WithFirstAuthorization) with one. Financing alternatives are for 3, 6, 9, 12, 18 and 24.
//
// Fixed credit lines (WithFixedCreditLines): no operation moves a line, so a suite can reuse one
// card number without running out of credit. Every ConsultarTarjeta shows the whole line
// available (5000.00 by default); every authorization is checked against the whole line (an
// amount above it is still 51); the cupos of GrabarConsumo show the whole line minus that
// consumption's invoiced amount, those of GrabarPagoTarjeta the whole line. Debts, tables,
// payments and reversals are kept as above; the magic values answer as listed.
//
// The fake's own error codes (nNumeroError), besides 2 and 51: 1 missing cUsuario,
// cCodigoEmpresa or cTerminal; 3 neither card nor identification; 20 unknown authorization;
// 21 authorization or consumption in a state that does not allow it; 22 invoiced amount not
// positive or above the authorized one; 23 no consumption with that invoice; 30 invalid
// amount, term (below 1 or above MaxPlazo) or date; 60 invalid OTP; 70 payment methods do not
// add up to the payment; 71 payment above pago contado; 72 invalid payment method (cash with
// bank data, cheque without it, unknown code); 73 no debt; 74 payment rejected (magic value);
// 80 unknown payment; 81 payment already reversed. Requests it cannot deserialize get a DeserializationFailed fault and unknown actions an
// ActionNotSupported fault, both in an HTTP 500, as from WCF.
//
// # Nil members and dates
//
// An answer member without a value is written i:nil="true" when the WSDL declares it nillable
// (strings, lists, complex members, the nillable dates and amounts), as WCF writes a null. A
// member the WSDL does not declare nillable (a .NET value type: nNumeroOperacion,
// nCodigoCliente, the amounts of ConsultarDeudaTarjeta, all empty in an error answer) is
// omitted, as its minOccurs="0" allows: i:nil there is invalid against the schema, and a 0
// would be a value the fake made up. Dates are written 2025-03-10T00:00:00 (xs:dateTime).
// Every answer the fake writes, and every fixture recorded from it, is valid against the
// WSDL's schema (the tests check them with creditsystem/internal/xsdcheck).
//
// # Scripting and assertions
//
// Script(op, reactions...) queues reactions for the next calls of op, one per call, ahead of
// the normal behaviour. Reactions: Process (the normal behaviour, magic values included,
// useful with After), BusinessError(code, msg), Fault(code, msg) (HTTP 500; WithStatus(200)
// for a fault in an HTTP 200), Hang() (never answered, nothing recorded), Drop() (connection
// closed, nothing recorded), LateSuccess() (recorded, never answered), Raw(status, body);
// After(d) delays any of them, the fake carrying on even if the caller gave up, so
// Process().After(d) past the client's deadline is a late success. Calls(op) counts the
// requests that reached the fake; LastRequest(op) returns the last one with its members by
// SOAP name (Fields["cCodigoOtp"], Lists["iFormaPagoVm"]); Card(n) shows a card's line.
//
// # httpmock fixtures
//
// Package creditsystemtest/fixtures registers answers recorded from this fake on an httpmock
// MockTransport; it is apart so that importing the fake does not import httpmock.
//
// DevConfig gives the constants a development setup can use: Usuario SOAPUSER, CodigoEmpresa
// 000598, Terminal TERMINAL01, OTPBypass 123456.
package creditsystemtest
