package erptest

import (
	"encoding/json"
	"net/http"
	"time"
)

// Fault is a scripted misbehaviour for one call. Build it with ErrorAPI, Status, Hang,
// Delay, Drop, Garbage or LateSuccess and queue it with Script.
type Fault struct {
	kind    faultKind
	status  int
	body    string
	mensaje string
	delay   time.Duration
}

type faultKind int

const (
	faultErrorAPI faultKind = iota + 1
	faultStatus
	faultHang
	faultDelay
	faultDrop
	faultGarbage
	faultLateSuccess
)

// ErrorAPI answers HTTP 200 with error_api true and the given mensaje.
func ErrorAPI(mensaje string) Fault { return Fault{kind: faultErrorAPI, mensaje: mensaje} }

// Status answers the HTTP status code with body; an empty body becomes the ERP's JSON
// error ({"error_api":true,"mensaje":<status text>}).
func Status(code int, body string) Fault { return Fault{kind: faultStatus, status: code, body: body} }

// Hang gives no answer until the caller gives up (or the fake closes): a timeout.
func Hang() Fault { return Fault{kind: faultHang} }

// Delay answers normally after d, unless the caller gives up first.
func Delay(d time.Duration) Fault { return Fault{kind: faultDelay, delay: d} }

// Drop closes the connection without an answer.
func Drop() Fault { return Fault{kind: faultDrop} }

// Garbage answers HTTP 200 with an HTML page instead of JSON.
func Garbage() Fault { return Fault{kind: faultGarbage} }

// LateSuccess applies a create or update, then never answers: the ERP has the change and
// the caller times out. On a lookup it is Hang.
func LateSuccess() Fault { return Fault{kind: faultLateSuccess} }

// Script queues faults for the next calls of op (erp.OpLookupClient or erp.OpSyncClient),
// one per call, in order; once the queue is empty calls behave normally. A fault applies
// after validation of the request, delays and the OnLookup hook.
func (f *Fake) Script(op string, faults ...Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scripts[op] = append(f.scripts[op], faults...)
}

const garbageBody = "<html><body><h1>502 Bad Gateway</h1></body></html>\n"

// apply performs the fault and reports whether the request is answered (or abandoned).
// commit, when not nil, applies the operation (for LateSuccess).
func (ft *Fault) apply(f *Fake, w http.ResponseWriter, r *http.Request, commit func()) bool {
	switch ft.kind {
	case faultErrorAPI:
		writeJSON(w, http.StatusOK, rejection(ft.mensaje))
	case faultStatus:
		if ft.body == "" {
			writeJSON(w, ft.status, rejection(http.StatusText(ft.status)))
			return true
		}
		w.Header().Set("Content-Type", contentType(ft.body))
		w.WriteHeader(ft.status)
		_, _ = w.Write([]byte(ft.body))
	case faultHang:
		f.hang(r.Context())
	case faultDelay:
		f.wait(r.Context(), ft.delay)
		return false
	case faultDrop:
		abandon()
	case faultGarbage:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(garbageBody))
	case faultLateSuccess:
		if commit != nil {
			commit()
		}
		f.hang(r.Context())
	default:
		return false
	}
	return true
}

func contentType(body string) string {
	if json.Valid([]byte(body)) {
		return "application/json; charset=utf-8"
	}
	return "text/plain; charset=utf-8"
}
