package httpx

import "runtime/debug"

// GCPercent is the services' garbage collector target when GOGC is not set (README,
// Configuration; measured in BENCHMARKS.md, "Garbage collector target").
const GCPercent = 400

// TuneGC sets GCPercent unless getenv("GOGC") is set: the runtime has then read the operator's
// value, which wins.
func TuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
}
