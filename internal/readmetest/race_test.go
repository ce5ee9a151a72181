//go:build race

package readmetest

// raceEnabled: the test binary runs under -race, so the binaries it builds use it too.
const raceEnabled = true
