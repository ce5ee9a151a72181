package httpx

import "time"

// TimeLayout is the layout of every timestamp in both services' JSON answers: RFC 3339 in UTC
// with exactly three fractional digits, e.g. 2026-11-27T15:04:05.123Z. It is ISO 8601 (the
// credit specification's word), it parses with time.RFC3339, and its fixed width sorts as
// text; milliseconds are what a person or a dashboard needs, and the same instant reads the
// same whichever store (SQLite keeps nanoseconds, PostgreSQL microseconds) or queue wrote it.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatTime writes t in TimeLayout: converted to UTC, the fraction truncated to milliseconds.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// Time is a time.Time that marshals to JSON in TimeLayout, for the fields of answer types; a
// nil *Time is null.
type Time time.Time

// MarshalJSON writes the time as a JSON string in TimeLayout.
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(TimeLayout)+2)
	b = append(b, '"')
	b = time.Time(t).UTC().AppendFormat(b, TimeLayout)
	return append(b, '"'), nil
}

// TimePtr is t as a *Time, nil for the zero time (a timestamp that has not happened).
func TimePtr(t time.Time) *Time {
	if t.IsZero() {
		return nil
	}
	v := Time(t)
	return &v
}
