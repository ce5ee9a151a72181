// Package sdkerr holds what the SDKs (creditsystem, carrier, erp) share to classify a failed
// call as an upstream.Error: whether the request left, whether the call ran out of time,
// and an HTTP status as an error code.
package sdkerr

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"

	"github.com/platform/integrations/upstream"
)

// TransportKind is the kind of a call without a usable answer: upstream.NotSent when no HTTP
// answer arrived (httpStatus 0) and err proves the request never left (NeverSent),
// upstream.OutcomeUnknown otherwise.
func TransportKind(httpStatus int, err error) upstream.Kind {
	if httpStatus == 0 && NeverSent(err) {
		return upstream.NotSent
	}
	return upstream.OutcomeUnknown
}

type notSent struct{ err error }

func (e notSent) Error() string { return e.err.Error() }
func (e notSent) Unwrap() error { return e.err }

// NotSent marks err as a failure that happened before the request could leave the process
// (an OAuth2 token that could not be obtained, a request that could not be built).
// The text and the chain of err are unchanged.
func NotSent(err error) error { return notSent{err} }

// NeverSent reports whether err proves that the request never left: it was marked with
// NotSent, or the dial failed (a *net.OpError with Op "dial", a *net.DNSError). net/http
// replays a POST on a new connection only when nothing was written on the first, so a dial
// error is never the end of a request that was sent.
func NeverSent(err error) bool {
	var (
		ns notSent
		oe *net.OpError
		de *net.DNSError
	)
	return errors.As(err, &ns) || errors.As(err, &de) || (errors.As(err, &oe) && oe.Op == "dial")
}

// TimedOut reports whether err is a call that ran out of time: a context deadline (the
// call's own or the caller's) or a net.Error timeout (an *http.Client Timeout, a
// Transport's ResponseHeaderTimeout, a connection deadline), which on its own does not
// match context.DeadlineExceeded.
func TimedOut(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// StatusCode is an HTTP status as an upstream error code: its number outside 2xx, "" for
// none (0) or a success status.
func StatusCode(status int) string {
	if status == 0 || (status >= 200 && status <= 299) {
		return ""
	}
	return strconv.Itoa(status)
}

// RedactURLs strips the userinfo, query and fragment from the URL of every *url.Error in err's
// chain, in place, and returns err: a transport error's text is stored (the top-up's
// carrier_diagnostic, the audit) and shown, and a configured URL may carry a key in either.
// Call it on the error as the HTTP client returned it: a wrapper made before keeps the text it
// had.
func RedactURLs(err error) error {
	switch e := err.(type) {
	case nil:
	case *url.Error:
		e.URL = RedactURL(e.URL)
		RedactURLs(e.Err)
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			RedactURLs(inner)
		}
	case interface{ Unwrap() error }:
		RedactURLs(e.Unwrap())
	}
	return err
}

// RedactURL is raw without userinfo, query and fragment ("(unparsable URL)" when it does not
// parse).
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}
