package maketest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// moduleRoot is the directory of go.mod, where the Makefile is.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// environ is the test's environment without the variables the case decides, and without a
// parent make's flags and command-line variables (MAKEFLAGS would override PKGS).
func environ(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "TEST_DATABASE_URL", "REQUIRE_POSTGRES", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "GNUMAKEFLAGS":
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// TestMakeTestSaysWhetherPostgreSQLRan: make test ends with one line saying whether the
// PostgreSQL variants of the store tests ran, were skipped, or fail for want of a database,
// after go test's own output and whatever go test's status (only make's note on a failed
// recipe follows it); the status is go test's.
func TestMakeTestSaysWhetherPostgreSQLRan(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	root := moduleRoot(t)
	tests := []struct {
		name string
		env  []string
		pkgs string
		line string // the last line
		fail bool
	}{
		{"without TEST_DATABASE_URL", nil, "./upstream",
			"PostgreSQL variants: skipped (TEST_DATABASE_URL is not set; REQUIRE_POSTGRES=1 makes that a failure)", false},
		{"with TEST_DATABASE_URL", []string{"TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable"}, "./upstream",
			"PostgreSQL variants: ran on TEST_DATABASE_URL", false},
		{"REQUIRE_POSTGRES=1 without TEST_DATABASE_URL", []string{"REQUIRE_POSTGRES=1"}, "./upstream",
			"PostgreSQL variants: not run: REQUIRE_POSTGRES=1 without TEST_DATABASE_URL makes each one fail", false},
		{"a failing go test", nil, "./does-not-exist",
			"PostgreSQL variants: skipped (TEST_DATABASE_URL is not set; REQUIRE_POSTGRES=1 makes that a failure)", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), "make", "--no-print-directory", "test", "PKGS="+tt.pkgs, "TESTFLAGS=-count=1")
			cmd.Dir = root
			cmd.Env = environ(tt.env...)
			out, err := cmd.CombinedOutput()
			if (err != nil) != tt.fail {
				t.Fatalf("make test: %v, want failure %t\n%s", err, tt.fail, out)
			}
			lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			if tt.fail && strings.HasPrefix(lines[len(lines)-1], "make: *** ") {
				lines = lines[:len(lines)-1] // make's own word on the failed recipe
			}
			if last := lines[len(lines)-1]; last != tt.line {
				t.Fatalf("last line %q, want %q\n%s", last, tt.line, out)
			}
			if n := strings.Count(string(out), "PostgreSQL variants:"); n != 1 {
				t.Fatalf("%d lines about the PostgreSQL variants, want 1\n%s", n, out)
			}
		})
	}
}
