package main

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

const transactionsPath = "/api/v1/recargas/transactions"

// set moves the stack's clock to now.
func (c *clock) set(now time.Time) {
	c.mu.Lock()
	c.now = now
	c.mu.Unlock()
}

// errorsOf is the `errors` list of a 400 answer.
func errorsOf(a answer) []string {
	var out []string
	list, _ := a.body["errors"].([]any)
	for _, e := range list {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

// subscribersOf lists the subscriber_id of each item of a list answer, in its order.
func subscribersOf(a answer) []string {
	var out []string
	data, _ := a.body["data"].([]any)
	for _, d := range data {
		s, _ := d.(map[string]any)["subscriber_id"].(string)
		out = append(out, s)
	}
	return out
}

// GET /transactions/:id finds a record by its transaction_id or by its external_transaction_id;
// the transaction_id is tried first and wins when a value is both.
func TestTransactionDetailByEitherID(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		viewer := bearer(newUser("viewer", PermView).token(t))
		ok := s.do("POST", webhookPath, invoice("RECCARRIER5", 5, "593991000021"), serviceKey()).expect(t, http.StatusCreated)
		other := s.do("POST", webhookPath, invoice("RECCARRIER5", 5, "593991000022"), serviceKey()).expect(t, http.StatusCreated)
		rejected := s.do("POST", webhookPath, invoice("RECCARRIER9", 9, "593991000023"), serviceKey()).expect(t, http.StatusUnprocessableEntity)
		id, ext := ok.str("transaction_id"), ok.str("external_transaction_id")
		if len(ext) != carrier.ExternalTransactionIDLength || ext == id {
			t.Fatalf("setup: ids %q %q", id, ext)
		}

		cases := []struct {
			name   string
			key    string
			status int
			want   string // transaction_id answered
		}{
			{"transaction_id", id, http.StatusOK, id},
			{"transaction_id in upper case", strings.ToUpper(id), http.StatusOK, id},
			{"external_transaction_id", ext, http.StatusOK, id},
			{"external_transaction_id percent-escaped", "%" + strings.ToUpper(hexOf(ext[0])) + ext[1:], http.StatusOK, id},
			{"a rejected record (no external id) by its transaction_id", rejected.str("transaction_id"), http.StatusOK, rejected.str("transaction_id")},
			{"external_transaction_id in lower case", strings.ToLower(ext), http.StatusNotFound, ""},
			{"unknown external_transaction_id", "01JKSA4V0Y8X3M6Q2T5R9B7C2A", http.StatusNotFound, ""},
			{"unknown UUID", "0191c6a2-7b7e-7c1a-9b2f-1a2b3c4d5e6f", http.StatusNotFound, ""},
			{"longer than any external id", strings.Repeat("A", 65), http.StatusNotFound, ""},
			{"invalid UTF-8", "%FF%FE", http.StatusNotFound, ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				a := s.do("GET", transactionsPath+"/"+c.key, nil, viewer).expect(t, c.status)
				if c.status != http.StatusOK {
					if a.str("message") != "Transaction not found" {
						t.Fatalf("answer %s", a.raw)
					}
					return
				}
				if a.str("transaction_id") != c.want || a.body["raw_request_xml"] == nil && c.want == id {
					t.Fatalf("answer %s", a.raw)
				}
				if c.want == id && (a.str("external_transaction_id") != ext || len(a.body["carrier_calls"].([]any)) != 1) {
					t.Fatalf("detail by %s: %s", c.name, a.raw)
				}
			})
		}

		// A value that is one record's transaction_id and another's external_transaction_id (no
		// id the service makes is both; a record imported with such an external id could be):
		// the transaction_id wins, and the other record is still reached by its own id.
		t.Run("ambiguous: the transaction_id wins", func(t *testing.T) {
			if _, err := tg.DB.ExecContext(t.Context(), "UPDATE topup_transactions SET external_transaction_id = ? WHERE id = ?",
				id, other.str("transaction_id")); err != nil {
				t.Fatal(err)
			}
			if a := s.do("GET", transactionsPath+"/"+id, nil, viewer).expect(t, http.StatusOK); a.str("transaction_id") != id {
				t.Fatalf("the record whose external id is %s answered instead of the record with that id: %s", id, a.raw)
			}
			if a := s.do("GET", transactionsPath+"/"+other.str("transaction_id"), nil, viewer).expect(t, http.StatusOK); a.str("external_transaction_id") != id {
				t.Fatalf("answer %s", a.raw)
			}
		})

		// An external id that is not the service's own (imported, at most 64 characters) is found
		// as stored, escaped in the URL as needed.
		t.Run("an external id that needs escaping", func(t *testing.T) {
			legacy := "LEGACY 2026-0007 ñ"
			if _, err := tg.DB.ExecContext(t.Context(), "UPDATE topup_transactions SET external_transaction_id = ? WHERE id = ?",
				legacy, rejected.str("transaction_id")); err != nil {
				t.Fatal(err)
			}
			a := s.do("GET", transactionsPath+"/"+url.PathEscape(legacy), nil, viewer).expect(t, http.StatusOK)
			if a.str("transaction_id") != rejected.str("transaction_id") {
				t.Fatalf("answer %s", a.raw)
			}
		})

		t.Run("refusals", func(t *testing.T) {
			s.do("GET", transactionsPath+"/"+ext, nil, nil).expect(t, http.StatusUnauthorized)
			s.do("GET", transactionsPath+"/"+ext, nil, bearer(newUser("c", PermCreate).token(t))).expect(t, http.StatusForbidden)
		})
	})
}

func hexOf(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&15]})
}

// from and to select by created_at in Ecuador days (America/Guayaquil, UTC-5), both included:
// a record created at 23:30 on day D in Ecuador is in from=D&to=D although it is D+1 in UTC.
func TestTransactionsDateRange(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		viewer := bearer(newUser("viewer", PermView).token(t))
		// D is 2026-03-10 in Ecuador: from 2026-03-10T05:00:00Z to before 2026-03-11T05:00:00Z.
		created := []struct {
			subscriber string
			at         string // UTC
		}{
			{"593991000031", "2026-03-10T04:59:59.999999Z"}, // 23:59:59.999999 on D-1 in Ecuador, D in UTC
			{"593991000032", "2026-03-10T05:00:00Z"},        // 00:00 on D in Ecuador, its first instant
			{"593991000033", "2026-03-11T04:30:00Z"},        // 23:30 on D in Ecuador, D+1 in UTC
			{"593991000034", "2026-03-11T05:00:00Z"},        // 00:00 on D+1 in Ecuador
		}
		for _, c := range created {
			at, err := time.Parse(time.RFC3339Nano, c.at)
			if err != nil {
				t.Fatal(err)
			}
			s.clock.set(at)
			s.do("POST", webhookPath, invoice("RECCARRIER5", 5, c.subscriber), serviceKey()).expect(t, http.StatusCreated)
		}
		const dMinus1, d, dPlus1 = "593991000031", "593991000032", "593991000034"
		const late = "593991000033"

		cases := []struct {
			name  string
			query string
			want  []string // subscribers, newest first
		}{
			{"one day, both of its ends", "from=2026-03-10&to=2026-03-10", []string{late, d}},
			{"the day before: its last microsecond only", "from=2026-03-09&to=2026-03-09", []string{dMinus1}},
			{"the next day in Ecuador is not the UTC day", "from=2026-03-11&to=2026-03-11", []string{dPlus1}},
			{"from alone", "from=2026-03-10", []string{dPlus1, late, d}},
			{"to alone", "to=2026-03-10", []string{late, d, dMinus1}},
			{"two days", "from=2026-03-09&to=2026-03-10", []string{late, d, dMinus1}},
			{"with another filter", "from=2026-03-10&to=2026-03-10&status=success&per_page=1", []string{late}},
			{"empty values do not filter", "from=&to=", []string{dPlus1, late, d, dMinus1}},
			{"a day with no record", "from=2026-03-12&to=2026-03-31", nil},
			{"the widest range", "from=0000-01-01&to=9999-12-31", []string{dPlus1, late, d, dMinus1}},
			{"a range in year 0", "from=0000-01-01&to=0000-01-01", nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				a := s.do("GET", transactionsPath+"?"+c.query, nil, viewer).expect(t, http.StatusOK)
				if got := subscribersOf(a); !slices.Equal(got, c.want) {
					t.Fatalf("%s: %v, want %v", c.query, got, c.want)
				}
				if c.name == "with another filter" && a.obj("meta")["total"] != float64(2) {
					t.Fatalf("meta %v", a.obj("meta"))
				}
			})
		}

		bad := []struct {
			name   string
			query  string
			errors []string
		}{
			{"month of one digit", "from=2026-3-10", []string{"from must be a date in yyyy-mm-dd format"}},
			{"a day that does not exist", "to=2026-02-30", []string{"to must be a date in yyyy-mm-dd format"}},
			{"day first", "from=10-03-2026", []string{"from must be a date in yyyy-mm-dd format"}},
			{"a timestamp", "to=2026-03-10T00:00:00Z", []string{"to must be a date in yyyy-mm-dd format"}},
			{"without dashes", "from=20260310", []string{"from must be a date in yyyy-mm-dd format"}},
			{"a word", "from=today", []string{"from must be a date in yyyy-mm-dd format"}},
			{"blanks around a date", "from=%202026-03-10%20&to=2026-03-10", []string{"from must be a date in yyyy-mm-dd format"}},
			{"both malformed", "from=x&to=y", []string{"from must be a date in yyyy-mm-dd format", "to must be a date in yyyy-mm-dd format"}},
			{"from after to", "from=2026-03-11&to=2026-03-10", []string{"from must not be after to (2026-03-11 > 2026-03-10)"}},
			{"from after to, a year apart", "from=2027-01-01&to=2026-12-31", []string{"from must not be after to (2027-01-01 > 2026-12-31)"}},
			{"with the other problems of the query", "from=2026-03-11&to=2026-03-10&page=x&statuss=failed",
				[]string{"unknown query parameter(s): statuss", "page must be an integer", "from must not be after to (2026-03-11 > 2026-03-10)"}},
		}
		for _, c := range bad {
			t.Run("400 "+c.name, func(t *testing.T) {
				a := s.do("GET", transactionsPath+"?"+c.query, nil, viewer).expect(t, http.StatusBadRequest)
				if got := errorsOf(a); !slices.Equal(got, c.errors) || a.str("message") != "Validation failed" {
					t.Fatalf("%s: %s", c.query, a.raw)
				}
			})
		}
	})
}

// Every top-up GET route answers a query parameter it does not take with a 400 naming it; the
// parameters it takes still work.
func TestUnknownQueryParameters(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		viewer := bearer(newUser("viewer", PermView).token(t))
		s.do("POST", webhookPath, invoice("RECCARRIER5", 5, "593991000041"), serviceKey()).expect(t, http.StatusCreated)
		s.do("POST", webhookPath, invoice("RECCARRIER5", 5, carriertest.SubscriberNoBalance), serviceKey()).expect(t, http.StatusCreated)
		id := s.do("GET", transactionsPath, nil, viewer).expect(t, http.StatusOK).body["data"].([]any)[0].(map[string]any)["transaction_id"].(string)

		many := make([]string, 12)
		for i := range many {
			many[i] = "p" + string(rune('a'+i)) + "=1"
		}
		refused := []struct {
			name, path string
			errors     []string
		}{
			{"misspelt filter", transactionsPath + "?statuss=failed", []string{"unknown query parameter(s): statuss"}},
			{"misspelt beside a known one", transactionsPath + "?status=failed&statuss=failed", []string{"unknown query parameter(s): statuss"}},
			{"names are case-sensitive", transactionsPath + "?Status=failed&per_page=5", []string{"unknown query parameter(s): Status"}},
			{"several, once each, in the order sent", transactionsPath + "?perpage=5&statuss=failed&perpage=6", []string{"unknown query parameter(s): perpage, statuss"}},
			{"a parameter without a value", transactionsPath + "?verbose", []string{"unknown query parameter(s): verbose"}},
			{"a name that needs quoting", transactionsPath + "?a%2Cb=1&x%20y=2", []string{`unknown query parameter(s): "a,b", "x y"`}},
			{"many names are counted, not all listed", transactionsPath + "?" + strings.Join(many, "&"),
				[]string{"unknown query parameter(s): pa, pb, pc, pd, pe, pf, pg, ph, pi, pj and 2 more"}},
			{"a long name is cut", transactionsPath + "?" + strings.Repeat("x", 100) + "=1",
				[]string{"unknown query parameter(s): " + strings.Repeat("x", 64) + "…"}},
			{"with a bad value of a known one", transactionsPath + "?status=done&sort=asc",
				[]string{"unknown query parameter(s): sort", "status must be one of: pending, success, failed, unavailable, rejected, ignored, error"}},
			{"detail", transactionsPath + "/" + id + "?verbose=1", []string{"unknown query parameter(s): verbose"}},
			{"detail of an unknown record", transactionsPath + "/0191c6a2-7b7e-7c1a-9b2f-1a2b3c4d5e6f?status=failed", []string{"unknown query parameter(s): status"}},
			{"inventory", "/api/v1/recargas/inventory?offer_id=31", []string{"unknown query parameter(s): offer_id"}},
		}
		for _, c := range refused {
			t.Run(c.name, func(t *testing.T) {
				a := s.do("GET", c.path, nil, viewer).expect(t, http.StatusBadRequest)
				if got := errorsOf(a); !slices.Equal(got, c.errors) || a.str("message") != "Validation failed" || a.body["statusCode"] != float64(400) {
					t.Fatalf("answer %s, want errors %q", a.raw, c.errors)
				}
			})
		}

		t.Run("the known parameters still work", func(t *testing.T) {
			a := s.do("GET", transactionsPath+"?status=failed&per_page=5&page=1&source=workflow-webhook&subscriber_id="+carriertest.SubscriberNoBalance+"&from=2000-01-01&to=9999-12-31", nil, viewer).expect(t, http.StatusOK)
			if got := subscribersOf(a); !slices.Equal(got, []string{carriertest.SubscriberNoBalance}) {
				t.Fatalf("answer %s", a.raw)
			}
			s.do("GET", transactionsPath+"/"+id, nil, viewer).expect(t, http.StatusOK)
			s.do("GET", "/api/v1/recargas/inventory", nil, viewer).expect(t, http.StatusOK)
		})
		t.Run("credentials are checked first", func(t *testing.T) {
			s.do("GET", transactionsPath+"?statuss=failed", nil, nil).expect(t, http.StatusUnauthorized)
			s.do("GET", "/api/v1/recargas/inventory?x=1", nil, bearer(newUser("c", PermCreate).token(t))).expect(t, http.StatusForbidden)
		})
	})
}

// A list item carries no raw XML, the detail of the same record does; a page of 25 top-ups (13
// webhook, 12 manual) is half what it was with the XML: 55,535 bytes before, 27,760 after.
func TestTransactionListWithoutXML(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		viewer := bearer(newUser("viewer", PermView).token(t))
		for range 13 {
			s.do("POST", webhookPath, invoice("RECCARRIER5", 5, "593991000051"), serviceKey()).expect(t, http.StatusCreated)
		}
		for i := range 12 {
			op := newUser("xml-"+string(rune('a'+i)), PermCreate)
			s.do("POST", rechargePath, rechargeBodyFor("593991000052"), op.recharge(t)).expect(t, http.StatusCreated)
		}
		page := s.do("GET", transactionsPath+"?per_page=25", nil, viewer).expect(t, http.StatusOK)
		data := page.body["data"].([]any)
		if len(data) != 25 {
			t.Fatalf("%d items", len(data))
		}
		t.Logf("a page of 25 top-ups: %d bytes", len(page.raw))
		// With the XML it was 55,535 bytes: about 1.1 KB of escaped XML per item.
		if len(page.raw) > 32<<10 {
			t.Errorf("a page of 25 is %d bytes", len(page.raw))
		}
		if strings.Contains(page.raw, "umsprot") {
			t.Error("the list answer holds carrier XML")
		}
		for _, d := range data {
			item := d.(map[string]any)
			for _, k := range []string{"raw_request_xml", "raw_response_xml"} {
				if _, ok := item[k]; ok {
					t.Fatalf("list item with %s: %v", k, item)
				}
			}
			detail := s.transaction(t, item["transaction_id"].(string))
			for _, k := range []string{"raw_request_xml", "raw_response_xml"} {
				if x, _ := detail[k].(string); !strings.Contains(x, "umsprot") {
					t.Fatalf("detail without %s: %v", k, detail)
				}
			}
		}
	})
}
