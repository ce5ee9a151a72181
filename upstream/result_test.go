package upstream_test

import (
	"context"
	"errors"
	"testing"

	"github.com/platform/integrations/upstream"
)

func TestCallResult(t *testing.T) {
	if upstream.OnResult(context.Background(), func(error) { t.Fatal("ran without a call") }) {
		t.Fatal("OnResult on a context of no call reported true")
	}

	boom := errors.New("boom")
	ctx, finish := upstream.StartCall(context.Background())
	var got []error
	if !upstream.OnResult(ctx, func(err error) { got = append(got, err) }) {
		t.Fatal("OnResult on a call's context reported false")
	}
	if len(got) != 0 {
		t.Fatal("ran before the report")
	}
	err := boom
	finish(&err)
	finish(nil) // only the first report counts
	// A waiter that comes after the report runs at once, with the first report.
	upstream.OnResult(ctx, func(err error) { got = append(got, err) })
	if len(got) != 2 || got[0] != boom || got[1] != boom {
		t.Fatalf("results %v, want [boom boom]", got)
	}

	// A call inside another has its own result.
	inner, finishInner := upstream.StartCall(ctx)
	var innerGot error = boom
	upstream.OnResult(inner, func(err error) { innerGot = err })
	finishInner(new(error))
	if innerGot != nil {
		t.Fatalf("inner result %v, want nil", innerGot)
	}
}
