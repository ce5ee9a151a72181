package upstream_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/platform/integrations/upstream"
)

// callError is an upstream.Error as an SDK would return it.
type callError struct {
	kind    upstream.Kind
	timeout bool
}

func (e *callError) Error() string        { return "sdk: Op: failed" }
func (e *callError) Operation() string    { return "Op" }
func (e *callError) Kind() upstream.Kind  { return e.kind }
func (e *callError) ErrorCode() string    { return "" }
func (e *callError) ErrorMessage() string { return "" }
func (e *callError) Timeout() bool        { return e.timeout }
func wrapped(err error) error             { return fmt.Errorf("domain: %w", err) }
func joined(errs ...error) error          { return errors.Join(errs...) }

var errInvalid = errors.New("sdk: invalid request")

func TestKindOfAndIsTimeout(t *testing.T) {
	timedOut := &callError{kind: upstream.OutcomeUnknown, timeout: true}
	cases := []struct {
		name        string
		err         error
		wantKind    upstream.Kind
		wantTimeout bool
	}{
		{"nil", nil, 0, false},
		{"plain error", errors.New("x"), 0, false},
		{"sentinel refused before the call", wrapped(errInvalid), 0, false},
		{"rejected", &callError{kind: upstream.Rejected}, upstream.Rejected, false},
		{"fault", &callError{kind: upstream.Fault}, upstream.Fault, false},
		{"outcome unknown", &callError{kind: upstream.OutcomeUnknown}, upstream.OutcomeUnknown, false},
		{"not sent", &callError{kind: upstream.NotSent}, upstream.NotSent, false},
		{"timed out", timedOut, upstream.OutcomeUnknown, true},
		{"dial timed out", &callError{kind: upstream.NotSent, timeout: true}, upstream.NotSent, true},
		{"wrapped twice", wrapped(wrapped(timedOut)), upstream.OutcomeUnknown, true},
		{"joined after another error", joined(errors.New("x"), timedOut), upstream.OutcomeUnknown, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := upstream.KindOf(tc.err); got != tc.wantKind {
				t.Errorf("KindOf = %v, want %v", got, tc.wantKind)
			}
			if got := upstream.IsTimeout(tc.err); got != tc.wantTimeout {
				t.Errorf("IsTimeout = %t, want %t", got, tc.wantTimeout)
			}
			e, ok := upstream.As(tc.err)
			if ok != (tc.wantKind != 0) || ok != (e != nil) {
				t.Errorf("As = %v, %t", e, ok)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	cases := []struct {
		kind upstream.Kind
		want string
	}{
		{upstream.Rejected, "rejected"},
		{upstream.Fault, "fault"},
		{upstream.OutcomeUnknown, "outcome-unknown"},
		{upstream.NotSent, "not-sent"},
		{0, "upstream.Kind(0)"},
		{9, "upstream.Kind(9)"},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.kind.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}
