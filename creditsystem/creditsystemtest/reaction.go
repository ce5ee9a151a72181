package creditsystemtest

import (
	"net/http"
	"time"
)

type kind int

const (
	kindProcess kind = iota
	kindBusinessError
	kindFault
	kindHang
	kindDrop
	kindLateSuccess
	kindRaw
)

// Reaction is what the fake does with one call. Build one with the functions below and
// hand it to Fake.Script.
type Reaction struct {
	kind    kind
	code    int    // nNumeroError
	fault   string // faultcode
	message string // cTextoError or faultstring
	status  int
	body    string
	after   time.Duration
}

// Process answers the call as the fake normally does, magic values included. With After it
// models a slow creditsystem that still commits: Process().After(2*time.Second) against a
// 1 s client timeout is a late success that the fake's state shows 2 s later.
func Process() Reaction { return Reaction{kind: kindProcess} }

// BusinessError answers lError = true with nNumeroError code and cTextoError message.
// Nothing is recorded.
func BusinessError(code int, message string) Reaction {
	return Reaction{kind: kindBusinessError, code: code, message: message}
}

// Fault answers a SOAP fault with faultcode code and faultstring message in an HTTP 500,
// as WCF does, unless WithStatus says otherwise (a fault in an HTTP 200). Nothing is
// recorded.
func Fault(code, message string) Reaction {
	return Reaction{kind: kindFault, fault: code, message: message, status: http.StatusInternalServerError}
}

// Hang never answers: the fake holds the request until the caller gives up (or the fake is
// closed), then drops the connection. Nothing is recorded.
func Hang() Reaction { return Reaction{kind: kindHang} }

// Drop closes the connection without answering, after reading the request. Nothing is
// recorded.
func Drop() Reaction { return Reaction{kind: kindDrop} }

// LateSuccess processes the call normally, so the creditsystem commits it, and then holds
// the connection, without answering, until the caller gives up.
func LateSuccess() Reaction { return Reaction{kind: kindLateSuccess} }

// Raw answers the given HTTP status and body as they are, for answers the fake would never
// produce (xsi:nil members, malformed XML, an HTML error page). Nothing is recorded.
func Raw(status int, body string) Reaction {
	return Reaction{kind: kindRaw, status: status, body: body}
}

// WithStatus sets the HTTP status of a Fault or Raw reaction.
func (r Reaction) WithStatus(status int) Reaction {
	r.status = status
	return r
}

// After makes the fake wait d before reacting, whether or not the caller is still waiting:
// a creditsystem that is slow, not one that gave up. Closing the fake ends the wait with a
// dropped connection, nothing recorded.
func (r Reaction) After(d time.Duration) Reaction {
	r.after = d
	return r
}
