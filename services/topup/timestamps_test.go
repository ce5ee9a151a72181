package main

import (
	"net/http"
	"testing"

	"github.com/platform/integrations/internal/apidoc/apitest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

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
		apitest.Timestamps(s.do("GET", "/api/v1/recargas/transactions/"+id, nil, viewer).expect(t, http.StatusOK).body, "detail", found)
		apitest.Timestamps(s.do("GET", "/api/v1/recargas/transactions", nil, viewer).expect(t, http.StatusOK).body, "list", found)
		apitest.CheckTimestamps(t, found, "detail.created_at", "detail.updated_at", "detail.carrier_calls[0].at",
			"detail.notifications[0].at", "detail.notifications[0].deliveries[0].at", "list.data[0].created_at")
	})
}
