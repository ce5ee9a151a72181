package httpx_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/platform/integrations/internal/httpx"
)

func TestTimestampFormat(t *testing.T) {
	guayaquil := time.FixedZone("ECT", -5*3600)
	tests := []struct {
		name string
		in   time.Time
		want string
	}{
		{"nanoseconds are cut to milliseconds", time.Date(2026, 11, 27, 15, 4, 5, 123456789, time.UTC), "2026-11-27T15:04:05.123Z"},
		{"microseconds are cut, not rounded", time.Date(2026, 11, 27, 15, 4, 5, 999999000, time.UTC), "2026-11-27T15:04:05.999Z"},
		{"a whole second keeps three zeros", time.Date(2026, 11, 27, 15, 4, 5, 0, time.UTC), "2026-11-27T15:04:05.000Z"},
		{"another zone is written in UTC", time.Date(2026, 11, 27, 10, 4, 5, 120000000, guayaquil), "2026-11-27T15:04:05.120Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := httpx.FormatTime(tt.in); got != tt.want {
				t.Errorf("FormatTime = %s, want %s", got, tt.want)
			}
			b, err := json.Marshal(struct {
				At  httpx.Time  `json:"at"`
				Ptr *httpx.Time `json:"ptr"`
				Nil *httpx.Time `json:"nil"`
			}{httpx.Time(tt.in), httpx.TimePtr(tt.in), httpx.TimePtr(time.Time{})})
			if want := `{"at":"` + tt.want + `","ptr":"` + tt.want + `","nil":null}`; err != nil || string(b) != want {
				t.Errorf("JSON %s (%v), want %s", b, err, want)
			}
			if _, err := time.Parse(time.RFC3339, tt.want); err != nil {
				t.Errorf("%s does not parse as RFC 3339: %v", tt.want, err)
			}
		})
	}
}
