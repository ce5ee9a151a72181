package apitest

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// answerTimestamp is httpx.TimeLayout as the answers carry it: RFC 3339 in UTC with
// milliseconds.
var answerTimestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// Timestamps adds to out, by JSON path under path, every member of the decoded answer v that is
// not null and is named like a timestamp: "at", "..._at" or "...At".
func Timestamps(v any, path string, out map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		for k, m := range v {
			if (k == "at" || strings.HasSuffix(k, "_at") || strings.HasSuffix(k, "At")) && m != nil {
				out[path+"."+k] = m
			}
			Timestamps(m, path+"."+k, out)
		}
	case []any:
		for i, m := range v {
			Timestamps(m, path+"["+strconv.Itoa(i)+"]", out)
		}
	}
}

// CheckTimestamps fails t unless found (from Timestamps) holds every path of want and each of
// its values is a string in the services' one layout: RFC 3339, UTC, milliseconds.
func CheckTimestamps(t testing.TB, found map[string]any, want ...string) {
	t.Helper()
	for _, w := range want {
		if _, ok := found[w]; !ok {
			t.Errorf("no %s in the answers; found %v", w, found)
		}
	}
	for path, v := range found {
		if s, ok := v.(string); !ok || !answerTimestamp.MatchString(s) {
			t.Errorf("%s = %v, want RFC 3339 UTC with milliseconds (2026-11-27T15:04:05.123Z)", path, v)
		}
	}
}
