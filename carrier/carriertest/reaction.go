package carriertest

import (
	"net/http"
	"sync"
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

// Reaction is what the fake does with one call. Build one with the
// functions below and hand it to Fake.Script or Fake.ScriptSubscriber.
type Reaction struct {
	kind   kind
	code   string
	text   string
	status int
	after  time.Duration
	gate   *Gate
}

// Process answers the call as the fake normally does. With After it models
// a slow SPR that still commits: Process().After(2*time.Second) against a
// 1 s client timeout is a late success that the ledger shows 2 s later.
func Process() Reaction { return Reaction{kind: kindProcess} }

// BusinessError answers STATUS=ERROR with the given ID_CODIGO and MENSAJE.
// A top-up answered this way is recorded in the ledger as ERROR, so a repeat
// of its id and sre_consulta_recarga answer the same error.
func BusinessError(code, message string) Reaction {
	return Reaction{kind: kindBusinessError, code: code, text: message}
}

// Fault answers a SOAP 1.1 Fault with the given faultcode and faultstring,
// in HTTP 500 unless WithStatus says otherwise. Nothing is committed.
func Fault(code, message string) Reaction {
	return Reaction{kind: kindFault, code: code, text: message, status: http.StatusInternalServerError}
}

// Hang never answers: the fake holds the request until the caller gives up
// (or the fake is closed), then drops the connection. Nothing is committed.
func Hang() Reaction { return Reaction{kind: kindHang} }

// Drop closes the connection without answering, after reading the request.
// Nothing is committed.
func Drop() Reaction { return Reaction{kind: kindDrop} }

// LateSuccess processes the call normally, so a valid top-up is committed
// as SUCCESS in the ledger, and then holds the connection, without
// answering, until the caller gives up. The caller sees a timeout;
// sre_consulta_recarga then says SUCCESS.
func LateSuccess() Reaction { return Reaction{kind: kindLateSuccess} }

// Raw answers the given HTTP status and body as they are: for bad statuses
// and garbage. Nothing is committed.
func Raw(status int, body string) Reaction {
	return Reaction{kind: kindRaw, status: status, text: body}
}

// WithStatus sets the HTTP status of a Fault or Raw reaction.
func (r Reaction) WithStatus(status int) Reaction {
	r.status = status
	return r
}

// After makes the fake wait d before reacting, whether or not the caller is
// still waiting: a carrier that is slow, not one that gave up.
func (r Reaction) After(d time.Duration) Reaction {
	r.after = d
	return r
}

// Until holds the reaction's answer at g until the test opens it: the fake
// acts at once (a success or a business error is committed to the ledger, as
// without Until) and then waits. When g opens it answers as the reaction
// says; a reaction that holds anyway (Hang, LateSuccess) then drops the
// connection, so the caller sees a transport error without waiting for its
// own deadline. A held call still ends, as a dropped connection, when the
// caller gives up (its context or deadline ends) or the fake is closed; what
// was committed stays committed. With After, the delay comes first.
//
// Until replaces clocks in tests: script Process().Until(g), start the call,
// wait for g.Reached(), look at what the caller committed while the SPR
// "works", then g.Open() and check the outcome.
func (r Reaction) Until(g *Gate) Reaction {
	r.gate = g
	return r
}

// Gate holds the calls whose reaction is scripted with Until until Open.
// NewGate makes one; a Gate may hold any number of calls, and is safe for
// concurrent use.
type Gate struct {
	open, reached         chan struct{}
	openOnce, reachedOnce sync.Once
}

// NewGate returns a closed gate.
func NewGate() *Gate {
	return &Gate{open: make(chan struct{}), reached: make(chan struct{})}
}

// Open releases every call held at the gate, and lets later ones through
// without holding them. Opening an open gate does nothing.
func (g *Gate) Open() { g.openOnce.Do(func() { close(g.open) }) }

// Reached is closed once a call has acted and reached the gate (whether or
// not the gate is open): from then on the fake has the call, and whatever
// the reaction commits is in the ledger.
func (g *Gate) Reached() <-chan struct{} { return g.reached }

func (g *Gate) reach() { g.reachedOnce.Do(func() { close(g.reached) }) }
