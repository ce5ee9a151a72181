package fakehttp

import (
	"bytes"
	"net/http"
	"runtime"
	"testing"
	"time"
)

// Exchanges one after another run on one kept goroutine, which ends once no exchange came for
// idleFor.
func TestWorkersAreKeptAndEnd(t *testing.T) {
	defer workerIdle.Store(0)
	workerIdle.Store(int64(100 * time.Millisecond))
	ran := map[string]int{} // goroutine header ("goroutine 12 ") -> exchanges
	c := &http.Client{Transport: Transport(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		ran[goroutine()]++ // exchanges one at a time: no race
	}), nil)}
	for range 50 {
		resp, err := c.Get("http://fake.mock/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// A worker that waited since another test's exchange (waiting the default 10 s) may take
	// the first exchange; after it the worker is the one that has just run.
	if len(ran) > 2 {
		t.Fatalf("50 exchanges one after another ran on %d goroutines, want one kept: %v", len(ran), ran)
	}
	var last string
	for g, n := range ran {
		if n > 1 {
			last = g
		}
	}
	give := time.Now().Add(5 * time.Second)
	for alive(last) {
		if time.Now().After(give) {
			t.Fatalf("the worker (%s) is still kept %v after the last exchange", last, 5*time.Second)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// goroutine is the header of the calling goroutine's stack: "goroutine N ".
func goroutine() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return string(buf[:bytes.IndexByte(buf, '[')])
}

// alive reports whether the goroutine of that header exists.
func alive(header string) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return bytes.Contains(buf, []byte("\n"+header)) || bytes.HasPrefix(buf, []byte(header))
}
