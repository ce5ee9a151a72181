package xsdcheck

import (
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
)

// builtin is a built-in simple type of XML Schema 1.0 that xsdcheck checks lexically.
type builtin struct {
	name  string
	check func(string) string // "" when valid, else the problem
}

var builtins = map[string]builtin{}

func init() {
	add := func(name string, check func(string) string) {
		builtins[name] = builtin{name: name, check: check}
	}
	add("string", func(string) string { return "" }) // any XML characters; the parser checked them
	add("boolean", lexical("xs:boolean", regexp.MustCompile(`^(true|false|1|0)$`)))
	add("decimal", lexical("xs:decimal", regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)$`)))
	add("integer", integer("xs:integer", nil, nil))
	add("long", integer("xs:long", big.NewInt(-1<<63), big.NewInt(1<<63-1)))
	add("int", integer("xs:int", big.NewInt(-1<<31), big.NewInt(1<<31-1)))
	add("short", integer("xs:short", big.NewInt(-1<<15), big.NewInt(1<<15-1)))
	add("byte", integer("xs:byte", big.NewInt(-1<<7), big.NewInt(1<<7-1)))
	add("unsignedLong", integer("xs:unsignedLong", big.NewInt(0), new(big.Int).SetUint64(1<<64-1)))
	add("unsignedInt", integer("xs:unsignedInt", big.NewInt(0), big.NewInt(1<<32-1)))
	add("unsignedShort", integer("xs:unsignedShort", big.NewInt(0), big.NewInt(1<<16-1)))
	add("unsignedByte", integer("xs:unsignedByte", big.NewInt(0), big.NewInt(1<<8-1)))
	add("dateTime", dateTime)
	add("date", date)
}

// collapse applies the whiteSpace facet collapse of every non-string built-in type; internal
// whitespace is left to the lexical check, which refuses it.
func collapse(s string) string { return strings.Trim(s, " \t\r\n") }

func lexical(typ string, re *regexp.Regexp) func(string) string {
	return func(s string) string {
		if !re.MatchString(collapse(s)) {
			return fmt.Sprintf("%q is not a valid %s", clip(s), typ)
		}
		return ""
	}
}

var integerRE = regexp.MustCompile(`^[+-]?\d+$`)

func integer(typ string, lo, hi *big.Int) func(string) string {
	return func(s string) string {
		v := collapse(s)
		if !integerRE.MatchString(v) {
			return fmt.Sprintf("%q is not a valid %s", clip(s), typ)
		}
		n, _ := new(big.Int).SetString(strings.TrimPrefix(v, "+"), 10)
		if (lo != nil && n.Cmp(lo) < 0) || (hi != nil && n.Cmp(hi) > 0) {
			return fmt.Sprintf("%s is out of the range of %s", clip(v), typ)
		}
		return ""
	}
}

// XML Schema 1.0 (second edition): a year of at least four digits, no leading zero beyond
// four, never 0000; an optional fraction of a second; an optional zone Z or ±hh:mm.
var (
	dateTimeRE = regexp.MustCompile(`^(-?)(\d{4,})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})?$`)
	dateRE     = regexp.MustCompile(`^(-?)(\d{4,})-(\d{2})-(\d{2})(Z|[+-]\d{2}:\d{2})?$`)
)

func dateTime(s string) string {
	m := dateTimeRE.FindStringSubmatch(collapse(s))
	if m == nil {
		return fmt.Sprintf("%q is not a valid xs:dateTime (yyyy-mm-ddThh:mm:ss[.s][zone])", clip(s))
	}
	if msg := checkDate(m[2], m[3], m[4], m[9]); msg != "" {
		return fmt.Sprintf("%q is not a valid xs:dateTime: %s", clip(s), msg)
	}
	h, mi, sec := atoi(m[5]), atoi(m[6]), atoi(m[7])
	midnight24 := h == 24 && mi == 0 && sec == 0 && strings.Trim(m[8], ".0") == ""
	if (h > 23 && !midnight24) || mi > 59 || sec > 59 {
		return fmt.Sprintf("%q is not a valid xs:dateTime: no such time", clip(s))
	}
	return ""
}

func date(s string) string {
	m := dateRE.FindStringSubmatch(collapse(s))
	if m == nil {
		return fmt.Sprintf("%q is not a valid xs:date (yyyy-mm-dd[zone])", clip(s))
	}
	if msg := checkDate(m[2], m[3], m[4], m[5]); msg != "" {
		return fmt.Sprintf("%q is not a valid xs:date: %s", clip(s), msg)
	}
	return ""
}

func checkDate(year, month, day, zone string) string {
	if len(year) > 4 && year[0] == '0' {
		return "a year of more than four digits has a leading zero"
	}
	if strings.Trim(year, "0") == "" {
		return "year 0000"
	}
	mo, d := atoi(month), atoi(day)
	if mo < 1 || mo > 12 {
		return "no such month"
	}
	if d < 1 || d > daysIn(year, mo) {
		return "no such day"
	}
	if zone != "" && zone != "Z" {
		zh, zm := atoi(zone[1:3]), atoi(zone[4:6])
		if zm > 59 || zh > 14 || (zh == 14 && zm != 0) {
			return "no such zone"
		}
	}
	return ""
}

func daysIn(year string, month int) int {
	switch month {
	case 4, 6, 9, 11:
		return 30
	case 2:
		y, _ := new(big.Int).SetString(year, 10)
		mod := func(n int64) int64 { return new(big.Int).Mod(y, big.NewInt(n)).Int64() }
		if mod(4) == 0 && (mod(100) != 0 || mod(400) == 0) {
			return 29
		}
		return 28
	}
	return 31
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
