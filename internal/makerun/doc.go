// Package makerun holds the test of `make run` (scripts/run.sh): both services start, a service
// that cannot start makes it exit non-zero and stops the other, SIGTERM stops both.
package makerun
