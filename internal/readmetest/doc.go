// Package readmetest runs the README's sessions against the built services, so that every
// shell block a reader pastes keeps working.
//
// A session is a run of fenced blocks whose info string is "sh session=<name>" (credit-clients,
// credit-consumption, credit-payments, topup); its blocks run in README order in one
// `bash -euo pipefail`, so the variables of one block reach the next. The services are started
// the way the README's block "sh sessions-start" says (`CREDITSYSTEM_TIMEOUT=2 CARRIER_TIMEOUT=2
// make run`): the test builds credit, topup and devtoken with `go build` into a temporary
// directory, runs both services in development mode on free ports in a fresh working directory
// (SQLite under its ./data, the built-in fakes) with the environment variables that block sets,
// waits for GET /up, and runs each session with CREDIT, TOPUP and DEVTOKEN pointing at them. A
// session fails the test when any command fails: the README's `call` helper fails on a status
// other than the one it expects, and a missing id fails its `field`. The failure names the
// README line and carries the session's output and the services' logs.
//
// bash, curl, grep, sed and sha256sum must be installed; a missing one fails the test (it is
// never skipped). The package has no code of its own: it is the test.
package readmetest
