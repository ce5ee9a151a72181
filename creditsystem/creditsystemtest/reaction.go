package creditsystemtest

import "time"

type outcomeKind int

const (
	kindBusiness outcomeKind = iota + 1
	kindFault
	kindDelay
	kindDrop
	kindLate
	kindHang
	kindRespond
)

// Outcome is a scripted answer for one call of an operation; see Handler.Script.
type Outcome struct {
	kind    outcomeKind
	code    int
	message string
	fault   string
	status  int
	delay   time.Duration
	body    []byte
}

// BusinessError answers lError = true with nNumeroError code and cTextoError message; nothing
// is recorded.
func BusinessError(code int, message string) Outcome {
	return Outcome{kind: kindBusiness, code: code, message: message}
}

// Fault answers a SOAP fault with faultcode code and faultstring message in an HTTP 500, as
// WCF does; WithStatus changes the status (a fault in an HTTP 200). Nothing is recorded.
func Fault(code, message string) Outcome {
	return Outcome{kind: kindFault, fault: code, message: message, status: 500}
}

// Delay holds the request for d and then processes it normally. If the caller gave up in the
// meantime the request is not processed (as a request that never left a queue).
func Delay(d time.Duration) Outcome { return Outcome{kind: kindDelay, delay: d} }

// DropConnection closes the connection without answering; nothing is recorded.
func DropConnection() Outcome { return Outcome{kind: kindDrop} }

// LateSuccess processes the request (the upstream commits) and then never answers, until the
// caller gives up or the fake is closed.
func LateSuccess() Outcome { return Outcome{kind: kindLate} }

// Hang never answers and records nothing, until the caller gives up or the fake is closed.
func Hang() Outcome { return Outcome{kind: kindHang} }

// Respond answers status with body as it is, for answers the fake would never produce
// (xsi:nil members, malformed XML, an HTML error page).
func Respond(status int, body []byte) Outcome {
	return Outcome{kind: kindRespond, status: status, body: body}
}

// WithStatus sets the HTTP status of a Fault or Respond outcome.
func (o Outcome) WithStatus(status int) Outcome {
	o.status = status
	return o
}
