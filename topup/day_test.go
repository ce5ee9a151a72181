package topup

import (
	"errors"
	"testing"
	"time"
)

func TestParseDay(t *testing.T) {
	tests := []struct {
		name, in string
		want     Day
		err      bool
	}{
		{"a day", "2026-03-10", Day{2026, time.March, 10}, false},
		{"a leap day", "2028-02-29", Day{2028, time.February, 29}, false},
		{"the first year", "0001-01-01", Day{1, time.January, 1}, false},
		{"not a leap year", "2026-02-29", Day{}, true},
		{"a day past the month", "2026-04-31", Day{}, true},
		{"month of one digit", "2026-3-10", Day{}, true},
		{"day first", "10-03-2026", Day{}, true},
		{"a timestamp", "2026-03-10T00:00:00Z", Day{}, true},
		{"blanks", " 2026-03-10", Day{}, true},
		{"a sign", "+026-03-10", Day{}, true},
		{"empty", "", Day{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDay(tc.in)
			if tc.err != errors.Is(err, ErrDayFormat) || got != tc.want {
				t.Fatalf("ParseDay(%q) = %v, %v", tc.in, got, err)
			}
			if err == nil && got.String() != tc.in {
				t.Fatalf("String() = %s, want %s", got, tc.in)
			}
		})
	}
}

// The range of Ecuador days in UTC instants: a day begins at 05:00 UTC; an open end stays open;
// the bounds stay within the years 1 to 9999 (PostgreSQL has no year 0, SQLite compares text).
func TestCreatedRange(t *testing.T) {
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name          string
		from, to      Day
		start, before time.Time
		none          bool
	}{
		{"one day", Day{2026, 3, 10}, Day{2026, 3, 10}, utc("2026-03-10T05:00:00Z"), utc("2026-03-11T05:00:00Z"), false},
		{"end of a month", Day{2026, 2, 28}, Day{2026, 2, 28}, utc("2026-02-28T05:00:00Z"), utc("2026-03-01T05:00:00Z"), false},
		{"end of a year", Day{}, Day{2026, 12, 31}, time.Time{}, utc("2027-01-01T05:00:00Z"), false},
		{"from alone", Day{2026, 3, 10}, Day{}, utc("2026-03-10T05:00:00Z"), time.Time{}, false},
		{"Ecuador's summer time of 1992-1993 (UTC-4)", Day{1993, 1, 15}, Day{1993, 1, 15}, utc("1993-01-15T04:00:00Z"), utc("1993-01-16T04:00:00Z"), false},
		{"the last day there is", Day{2026, 1, 1}, Day{9999, 12, 31}, utc("2026-01-01T05:00:00Z"), time.Time{}, false},
		{"from in year 0 (none in PostgreSQL)", Day{0, 1, 1}, Day{}, time.Time{}, time.Time{}, false},
		{"to in year 0: nothing", Day{}, Day{0, 1, 1}, time.Time{}, time.Time{}, true},
		{"to on the last day of year 0", Day{0, 1, 1}, Day{0, 12, 31}, time.Time{}, utc("0001-01-01T05:19:20Z"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start, before, none, err := createdRange(tc.from, tc.to)
			if err != nil || !start.Equal(tc.start) || !before.Equal(tc.before) || none != tc.none {
				t.Fatalf("createdRange = %v, %v, %v, %v; want %v, %v, %v", start, before, none, err, tc.start, tc.before, tc.none)
			}
		})
	}
	if !(Day{2026, 3, 9}).Before(Day{2026, 3, 10}) || (Day{2026, 3, 10}).Before(Day{2026, 3, 10}) {
		t.Fatal("Before")
	}
}
