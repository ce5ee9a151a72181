//go:build !race

package readmetest

// raceEnabled: the test binary runs without -race.
const raceEnabled = false
