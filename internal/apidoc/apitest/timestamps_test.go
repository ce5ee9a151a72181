package apitest

import (
	"fmt"
	"testing"
)

// recorder is a testing.TB that keeps the errors instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Errorf(f string, args ...any) { r.errs = append(r.errs, fmt.Sprintf(f, args...)) }

func TestCheckTimestamps(t *testing.T) {
	answer := map[string]any{
		"created_at": "2026-11-27T15:04:05.123Z", "aplicadoAt": "2026-11-27T15:04:05.000Z", "deleted_at": nil,
		"format": "x", "calls": []any{map[string]any{"at": "2026-11-27T15:04:05.1Z"}},
	}
	tests := []struct {
		name     string
		answer   any
		want     []string
		failures int
	}{
		{"every layout right", map[string]any{"created_at": "2026-11-27T15:04:05.123Z", "aplicadoAt": "2026-11-27T15:04:05.000Z"}, []string{".created_at", ".aplicadoAt"}, 0},
		{"a missing path", map[string]any{"created_at": "2026-11-27T15:04:05.123Z"}, []string{".updated_at"}, 1},
		{"microseconds in a nested at", answer, []string{".created_at", ".calls[0].at"}, 1},
		{"an offset instead of Z", map[string]any{"updated_at": "2026-11-27T10:04:05.123-05:00"}, nil, 1},
		{"a number", map[string]any{"updated_at": 1764255845}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			found := map[string]any{}
			Timestamps(tt.answer, "", found)
			if _, ok := found[".format"]; ok {
				t.Error("format was taken for a timestamp")
			}
			if _, ok := found[".deleted_at"]; ok {
				t.Error("a null member was taken for a timestamp")
			}
			r := &recorder{TB: t}
			CheckTimestamps(r, found, tt.want...)
			if len(r.errs) != tt.failures {
				t.Errorf("%d failures %q, want %d", len(r.errs), r.errs, tt.failures)
			}
		})
	}
}
