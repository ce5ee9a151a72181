package main

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/platform/integrations/internal/storage/storagetest"
)

// answerTimestamp is the one layout of the services' timestamps (httpx.TimeLayout): RFC 3339
// in UTC with milliseconds.
var answerTimestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// timestamps walks a decoded JSON answer and returns every member named "at" or "..._at" that
// is not null, by its path.
func timestamps(v any, path string, out map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		for k, m := range v {
			if (k == "at" || strings.HasSuffix(k, "_at")) && m != nil {
				out[path+"."+k] = m
			}
			timestamps(m, path+"."+k, out)
		}
	case []any:
		for i, m := range v {
			timestamps(m, path+"["+strconv.Itoa(i)+"]", out)
		}
	}
}

// TestAnswerTimestamps: every timestamp of the top-up answers (the record's, its carrier
// calls', its notification jobs' and their deliveries') has the layout of the credit
// service's: milliseconds, not the microseconds of the store or the nanoseconds of the queue.
func TestAnswerTimestamps(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		a := s.do("POST", webhookPath, invoice("RECCARRIER5", 5, "593991234567"), serviceKey()).expect(t, http.StatusCreated)
		id := a.str("transaction_id")
		waitNotification(t, s, id, "completed")
		viewer := bearer(newUser("viewer", PermView).token(t))
		found := map[string]any{}
		timestamps(s.do("GET", "/api/v1/recargas/transactions/"+id, nil, viewer).expect(t, http.StatusOK).body, "detail", found)
		timestamps(s.do("GET", "/api/v1/recargas/transactions", nil, viewer).expect(t, http.StatusOK).body, "list", found)
		for _, want := range []string{"detail.created_at", "detail.updated_at", "detail.carrier_calls[0].at",
			"detail.notifications[0].at", "detail.notifications[0].deliveries[0].at", "list.data[0].created_at"} {
			if _, ok := found[want]; !ok {
				t.Errorf("no %s in the answers; found %v", want, found)
			}
		}
		for path, v := range found {
			if s, ok := v.(string); !ok || !answerTimestamp.MatchString(s) {
				t.Errorf("%s = %v, want RFC 3339 UTC with milliseconds (2026-11-27T15:04:05.123Z)", path, v)
			}
		}
	})
}
