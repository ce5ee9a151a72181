package erptest

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

type kind int

const (
	kindProcess kind = iota
	kindBusinessError
	kindHang
	kindDrop
	kindLateSuccess
	kindRaw
)

// Reaction is what the fake does with one call. Build one with the functions below and
// hand it to Fake.Script.
type Reaction struct {
	kind    kind
	message string // mensaje
	status  int
	body    string
	after   time.Duration
}

// Process answers the call as the fake normally does, magic values included. With After it
// models a slow ERP that still applies the change: Process().After(2*time.Second) against a
// 1 s client timeout is a late success that Fake.Client shows 2 s later.
func Process() Reaction { return Reaction{kind: kindProcess} }

// BusinessError answers the ERP's refusal, error_api true with the given mensaje, in an
// HTTP 200 unless WithStatus says otherwise. Nothing is applied.
func BusinessError(message string) Reaction {
	return Reaction{kind: kindBusinessError, message: message, status: http.StatusOK}
}

// Hang never answers: the fake holds the request until the caller gives up (or the fake is
// closed), then drops the connection. Nothing is applied.
func Hang() Reaction { return Reaction{kind: kindHang} }

// Drop closes the connection without answering, after reading the request. Nothing is
// applied.
func Drop() Reaction { return Reaction{kind: kindDrop} }

// LateSuccess applies a create or update (or issues the document of a hand-over) and then
// holds the connection, without answering, until the caller gives up: the ERP has the change
// and the caller times out. On a lookup it is Hang.
func LateSuccess() Reaction { return Reaction{kind: kindLateSuccess} }

// Raw answers the given HTTP status and body as they are (Content-Type application/json
// when body is JSON, else sniffed), for bad statuses and garbage. Nothing is applied.
func Raw(status int, body string) Reaction {
	return Reaction{kind: kindRaw, status: status, body: body}
}

// WithStatus sets the HTTP status of a BusinessError or Raw reaction.
func (r Reaction) WithStatus(status int) Reaction {
	r.status = status
	return r
}

// After makes the fake wait d before reacting, whether or not the caller is still waiting:
// an ERP that is slow, not one that gave up. Closing the fake ends the wait with a dropped
// connection, nothing applied.
func (r Reaction) After(d time.Duration) Reaction {
	r.after = d
	return r
}

// Script queues reactions for the next calls of op (erp.OpLookupClient, erp.OpSyncClient or
// erp.OpHandOverPayment), one per call, in order; once the queue is empty calls behave
// normally.
// A reaction applies after validation of the request, the delay options and the OnLookup
// hook, and before the magic values.
func (f *Fake) Script(op string, reactions ...Reaction) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scripts[op] = append(f.scripts[op], reactions...)
}

// react performs r and reports whether it answered (or abandoned) the request; Process
// leaves the request to the normal behaviour. commit, when not nil, applies the operation
// (LateSuccess).
func (f *Fake) react(r Reaction, w http.ResponseWriter, req *http.Request, commit func()) bool {
	// The wait ignores the caller, as a slow ERP would; only Close ends it.
	f.wait(context.WithoutCancel(req.Context()), r.after)
	switch r.kind {
	case kindBusinessError:
		writeJSON(w, r.status, rejection(r.message))
	case kindRaw:
		w.Header().Set("Content-Type", contentType(r.body))
		w.WriteHeader(r.status)
		_, _ = w.Write([]byte(r.body))
	case kindHang:
		f.hang(req.Context())
	case kindDrop:
		abandon()
	case kindLateSuccess:
		if commit != nil {
			commit()
		}
		f.hang(req.Context())
	default:
		return false
	}
	return true
}

func contentType(body string) string {
	if json.Valid([]byte(body)) {
		return "application/json; charset=utf-8"
	}
	return http.DetectContentType([]byte(body))
}
