package creditsystem_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/golden/name byte for byte; -update rewrites the file.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update refreshes it after review)\ngot:  %s\nwant: %s", name, got, want)
	}
}

// The request envelope of every operation, byte for byte, so that any change to what goes on
// the wire shows in review.
func TestGoldenRequests(t *testing.T) {
	for _, tc := range operations {
		t.Run(tc.op, func(t *testing.T) {
			srv, c := newFake(t)
			p := tc.prepare(t, t.Context(), c)
			if _, err := tc.call(t.Context(), c, p); err != nil {
				t.Fatal(err)
			}
			r, ok := srv.LastRequest(tc.op)
			if !ok {
				t.Fatal("no request")
			}
			golden(t, tc.op+".request.xml", r.Body)
		})
	}
}
