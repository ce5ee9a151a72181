package httpx

import "runtime/debug"

// GCPercent is the services' garbage collector target when GOGC is not set (README,
// Configuration; measured in BENCHMARKS.md, "Garbage collector target").
const GCPercent = 400

// TuneGC sets GCPercent unless getenv("GOGC") is set: the runtime has then read the operator's
// value, which wins (as does a GOMEMLIMIT, which the runtime enforces whatever the target). It
// reports whether it set the target.
func TuneGC(getenv func(string) string) bool {
	if getenv("GOGC") != "" {
		return false
	}
	debug.SetGCPercent(GCPercent)
	return true
}
