package httpx

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	for _, tc := range []struct {
		name    string
		gogc    string
		want    int
		applied bool
	}{
		{"GOGC unset: the services' target", "", GCPercent, true},
		{"GOGC set: the operator's target stays", "100", 100, false},
		{"GOGC=off stays off", "off", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The runtime read GOGC at start; the test stands for it by setting the target the
			// operator's value would have given.
			before := debug.SetGCPercent(map[string]int{"": 100, "100": 100, "off": -1}[tc.gogc])
			t.Cleanup(func() { debug.SetGCPercent(before) })
			applied := TuneGC(func(k string) string {
				if k == "GOGC" {
					return tc.gogc
				}
				return ""
			})
			got := debug.SetGCPercent(100)
			if applied != tc.applied || got != tc.want {
				t.Errorf("TuneGC with GOGC=%q: applied %v, target %d; want %v, %d", tc.gogc, applied, got, tc.applied, tc.want)
			}
		})
	}
}
