package upstream

import (
	"context"
	"sync"
)

// A call's result travels from the SDK, which interprets the answer (lError, STATUS=ERROR,
// error_api, a fault), down to the http.RoundTripper that carried the request, which sees only
// HTTP: a 200 with a business refusal in its body looks like any other 200 there. Each SDK
// method that calls its upstream starts a call with StartCall, sends its requests with the
// context StartCall returned, and reports the error it returns; a RoundTripper (the services'
// metrics transport, a tracer) asks for that result with OnResult.

type resultKey struct{}

// result is the slot of one SDK call.
type result struct {
	mu       sync.Mutex
	reported bool
	err      error
	waiting  []func(error)
}

// StartCall returns ctx carrying an empty result for the SDK call about to be made, and the
// function that reports it: the SDK method defers it with a pointer to its error result, so
// that every return reports, after the answer was interpreted (nil: the call succeeded).
//
//	func (c *Client) Op(ctx context.Context, req OpRequest) (_ *OpResponse, err error) {
//		ctx, finish := upstream.StartCall(ctx)
//		defer finish(&err)
//		...
//
// Only the first report counts. A call refused before anything is sent reports too, and no
// RoundTripper is waiting for it.
func StartCall(ctx context.Context) (context.Context, func(*error)) {
	r := &result{}
	return context.WithValue(ctx, resultKey{}, r), func(errp *error) {
		var err error
		if errp != nil {
			err = *errp
		}
		r.report(err)
	}
}

func (r *result) report(err error) {
	r.mu.Lock()
	if r.reported {
		r.mu.Unlock()
		return
	}
	r.reported, r.err = true, err
	waiting := r.waiting
	r.waiting = nil
	r.mu.Unlock()
	for _, fn := range waiting {
		fn(err)
	}
}

// OnResult arranges for fn to run with the result of the SDK call whose context is ctx (a
// request's context), once the SDK reports it, or at once when it already did, and reports
// true. It reports false, and fn never runs, when ctx belongs to no SDK call: a request an SDK
// method did not start with StartCall, such as an OAuth2 token request, or a client other than
// the SDKs. fn runs in the goroutine that reports; it must be quick. A call that is never
// reported (a method that returns without its deferred report) never runs fn.
func OnResult(ctx context.Context, fn func(err error)) bool {
	r, ok := ctx.Value(resultKey{}).(*result)
	if !ok {
		return false
	}
	r.mu.Lock()
	if r.reported {
		err := r.err
		r.mu.Unlock()
		fn(err)
		return true
	}
	r.waiting = append(r.waiting, fn)
	r.mu.Unlock()
	return true
}
