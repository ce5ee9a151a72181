package topup

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Day is a calendar day without a time of day or a zone. The list's date range (Filter.From,
// Filter.To) is given in Days and read in DayZone, the zone of the daily limit: a record belongs
// to the day its created_at falls on in Ecuador, whatever day it is in UTC.
type Day struct {
	Year  int
	Month time.Month
	Day   int
}

// ErrDayFormat: the text is not a real calendar date written yyyy-mm-dd.
var ErrDayFormat = errors.New("topup: not a date in yyyy-mm-dd format")

// ParseDay reads a day written exactly yyyy-mm-dd: a four-digit year, a two-digit month and day,
// a date that exists (2026-02-30 does not). Anything else is ErrDayFormat.
func ParseDay(s string) (Day, error) {
	if len(s) != len(time.DateOnly) {
		return Day{}, ErrDayFormat
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Day{}, ErrDayFormat
	}
	return Day{Year: t.Year(), Month: t.Month(), Day: t.Day()}, nil
}

// IsZero reports whether d is the zero Day (no day: that end of a range is open).
func (d Day) IsZero() bool { return d == Day{} }

// Before reports whether d is an earlier day than e.
func (d Day) Before(e Day) bool {
	return d.start(time.UTC).Before(e.start(time.UTC))
}

// String returns d as yyyy-mm-dd.
func (d Day) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day) }

// start is the instant d begins in loc; the day after d begins at d.Day+1 (time.Date
// normalises it), never at start+24h, which a zone with daylight saving would miss.
func (d Day) start(loc *time.Location) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
}

// dayZone is DayZone, loaded once from the zoneinfo embedded in the binary (time/tzdata, imported
// by service.go), so it loads on a machine without a zoneinfo database. America/Guayaquil is
// UTC-5 without daylight saving today; the zone, rather than a fixed -05:00, also places the
// records of the 1992-1993 summer time correctly and changes with the law if Ecuador's does.
var dayZone = sync.OnceValues(func() (*time.Location, error) {
	loc, err := time.LoadLocation(DayZone)
	if err != nil {
		return nil, fmt.Errorf("topup: time zone %s: %w", DayZone, err)
	}
	return loc, nil
})

// createdRange is [from, before) of created_at for the days from..to of DayZone, both
// included; a zero instant leaves that end open, and none says that no record can be in the
// range. The bounds stay within the years 1 to 9999: PostgreSQL has no year 0 (0000-01-01 is an
// error there), and SQLite compares timestamps as text, where "10000-..." sorts first. A start
// before year 1 is left open and an end past 9999 too (no record is outside those years); an
// end before year 1 is none.
func createdRange(from, to Day) (start, before time.Time, none bool, err error) {
	loc, err := dayZone()
	if err != nil {
		return time.Time{}, time.Time{}, false, err
	}
	first := time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)
	if !from.IsZero() {
		if s := dbTime(from.start(loc)); s.After(first) {
			start = s
		}
	}
	if !to.IsZero() {
		b := dbTime(Day{Year: to.Year, Month: to.Month, Day: to.Day + 1}.start(loc))
		switch {
		case b.Year() > 9999:
		case !b.After(first):
			return time.Time{}, time.Time{}, true, nil
		default:
			before = b
		}
	}
	return start, before, false, nil
}
