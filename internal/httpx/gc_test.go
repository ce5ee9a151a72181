package httpx

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	for _, tc := range []struct {
		name string
		gogc string
		// atStart is the target the runtime took from GOGC at start, want the target after.
		atStart, want int
	}{
		{"GOGC unset: the services' target", "", 100, GCPercent},
		{"GOGC set: the operator's target stays", "100", 100, 100},
		{"GOGC=off stays off", "off", -1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := debug.SetGCPercent(tc.atStart)
			t.Cleanup(func() { debug.SetGCPercent(before) })
			TuneGC(func(k string) string {
				if k == "GOGC" {
					return tc.gogc
				}
				return ""
			})
			if got := debug.SetGCPercent(tc.atStart); got != tc.want {
				t.Errorf("TuneGC with GOGC=%q: target %d, want %d", tc.gogc, got, tc.want)
			}
		})
	}
}
