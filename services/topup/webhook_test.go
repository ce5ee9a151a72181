package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

const (
	webhookPath = "/api/v1/recargas/webhook/invoice-recharge"
	ignoredPath = "/api/v1/recargas/webhook/invoice-ignored"
)

func TestWebhook(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)

		processed := []struct {
			name, product, subscriber, status string
			amount                            any
			offer, operation                  string
		}{
			{"success", "RECCARRIER10", "593981234567", "success", 10, "151", "RECARGA_PINES"},
			{"success with a data product", "RECCARRIERDATOS5", "593991234567", "success", 5.00, "150", "RECARGA_DATOS"},
			{"amount 0.01 off is accepted", "RECCARRIER3", "593991234567", "success", 3.01, "31", "RECARGA_PINES"},
			{"carrier business error", "RECCARRIER5", carriertest.SubscriberNoBalance, "failed", 5, "30", "RECARGA_PINES"},
			{"carrier fault", "RECCARRIER5", carriertest.SubscriberIPNotAuthorized, "unavailable", 5, "30", "RECARGA_PINES"},
			{"carrier timeout", "RECCARRIER5", carriertest.SubscriberTimeout, "unavailable", 5, "30", "RECARGA_PINES"},
		}
		for _, c := range processed {
			t.Run(c.name, func(t *testing.T) {
				body := invoice(c.product, c.amount, c.subscriber)
				a := s.do("POST", webhookPath, body, serviceKey()).expect(t, http.StatusCreated)
				if a.str("status") != c.status || a.str("source") != "workflow-webhook" || a.str("invoice_number") != body["invoice_number"] ||
					a.body["success"] != (c.status == "success") || (c.status == "success") != (a.str("carrier_id_recarga") != "") {
					t.Fatalf("body %s", a.raw)
				}
				if c.status != "success" && (a.str("error") == "" || strings.Contains(a.str("error"), "://")) {
					t.Fatalf("error of a %s outcome %q: want a reason without upstream addresses", c.status, a.str("error"))
				}
				rec := s.transaction(t, a.str("transaction_id"))
				if rec["offer_id"] != c.offer || rec["external_operation"] != c.operation || rec["quantity"] != float64(1) ||
					rec["canton"] != "1701" || rec["source_xml_hash"] != body["source_xml_hash"] || rec["product_code"] != c.product ||
					rec["notification_email"] != "branch@example.com" || rec["invoice_code"] != body["invoice_code"] {
					t.Fatalf("record %v", rec)
				}
				payload, _ := rec["source_payload"].(map[string]any)
				if payload["invoice_number"] != body["invoice_number"] {
					t.Fatalf("source_payload = %v", rec["source_payload"])
				}
			})
		}

		t.Run("any token as the hash", func(t *testing.T) {
			body := invoice("RECCARRIER3", 3, "593991234567")
			body["source_xml_hash"] = "factura-001-001-" + body["invoice_code"].(string)
			s.do("POST", webhookPath, body, serviceKey()).expect(t, http.StatusCreated)
			s.do("POST", webhookPath, body, serviceKey()).expect(t, http.StatusConflict)
			// Not hex: compared as is, so another hash, and idempotency is by the hash alone:
			// the same invoice number under it is a new top-up.
			body["source_xml_hash"] = strings.ToUpper(body["source_xml_hash"].(string))
			s.do("POST", webhookPath, body, serviceKey()).expect(t, http.StatusCreated)
		})

		t.Run("canton given", func(t *testing.T) {
			body := invoice("RECCARRIER3", 3, "593991234567")
			body["canton"] = "0901"
			a := s.do("POST", webhookPath, body, serviceKey()).expect(t, http.StatusCreated)
			if rec := s.transaction(t, a.str("transaction_id")); rec["canton"] != "0901" {
				t.Fatalf("canton = %v", rec["canton"])
			}
		})

		rejected := []struct {
			name, product string
			amount        any
			reason        string
		}{
			{"no mapping", "RECCARRIER7", 7, "PRODUCT_NOT_MAPPED"},
			{"amount mismatch", "RECCARRIER3", 3.02, "AMOUNT_MISMATCH"},
			{"amount of another product", "RECCARRIER10", 5, "AMOUNT_MISMATCH"},
		}
		for _, c := range rejected {
			t.Run(c.name, func(t *testing.T) {
				calls := s.spr.Calls(carrier.FunctionTopup)
				body := invoice(c.product, c.amount, "593991234567")
				a := s.do("POST", webhookPath, body, serviceKey()).expect(t, http.StatusUnprocessableEntity)
				if a.body["success"] != false || a.str("status") != "rejected" || a.str("source") != "workflow-webhook" ||
					a.str("invoice_number") != body["invoice_number"] || a.str("error") != c.reason || a.str("transaction_id") == "" ||
					!strings.HasPrefix(a.str("message"), c.reason+": ") {
					t.Fatalf("body %s", a.raw)
				}
				if s.spr.Calls(carrier.FunctionTopup) != calls {
					t.Fatal("a rejected invoice reached the carrier")
				}
				rec := s.transaction(t, a.str("transaction_id"))
				notes := rec["notifications"].([]any)
				if rec["status"] != "rejected" || rec["rejection_reason"] != c.reason ||
					len(notes) != 1 || notes[0].(map[string]any)["kind"] != "recharge-invalid-invoice" {
					t.Fatalf("record %v", rec)
				}
				// The rejected invoice keeps its hash: sending it again is a duplicate.
				s.do("POST", webhookPath, body, serviceKey()).expect(t, http.StatusConflict)
			})
		}

		t.Run("duplicate", func(t *testing.T) {
			body := invoice("RECCARRIER5", 5, "593991234567")
			first := s.do("POST", webhookPath, body, serviceKey()).expect(t, http.StatusCreated)
			calls := s.spr.Calls(carrier.FunctionTopup)
			body["source_xml_hash"] = strings.ToUpper(body["source_xml_hash"].(string))
			a := s.do("POST", webhookPath, body, serviceKey()).expect(t, http.StatusConflict)
			if a.str("status") != "error" || !strings.Contains(a.raw, first.str("transaction_id")) {
				t.Fatalf("body %s", a.raw)
			}
			if s.spr.Calls(carrier.FunctionTopup) != calls {
				t.Fatal("a duplicate reached the carrier")
			}
			list := s.do("GET", "/api/v1/recargas/transactions?status=rejected&per_page=100", nil, bearer(newUser("v", PermView).token(t))).expect(t, http.StatusOK)
			found := false
			for _, r := range list.body["data"].([]any) {
				m := r.(map[string]any)
				found = found || (m["invoice_number"] == body["invoice_number"] && strings.HasPrefix(m["rejection_reason"].(string), "DUPLICATE_SOURCE_XML_HASH"))
			}
			if !found {
				t.Fatal("the repeated delivery is not recorded rejected")
			}
		})

		invalid := []struct {
			name   string
			mutate func(map[string]any)
			field  string
		}{
			{"no invoice_number", func(b map[string]any) { delete(b, "invoice_number") }, "invoice_number"},
			{"product not RECCARRIER", func(b map[string]any) { b["product_code"] = "PIN5" }, "product_code"},
			{"subscriber pattern", func(b map[string]any) { b["subscriber_id"] = "593712345678" }, "subscriber_id"},
			{"subscriber length", func(b map[string]any) { b["subscriber_id"] = "59399123456" }, "subscriber_id"},
			{"subscriber with blanks", func(b map[string]any) { b["subscriber_id"] = " 593991234567 " }, "subscriber_id"},
			{"canton with blanks", func(b map[string]any) { b["canton"] = "0901 " }, "canton"},
			{"no amount", func(b map[string]any) { delete(b, "amount") }, "amount"},
			{"negative amount", func(b map[string]any) { b["amount"] = -5 }, "amount"},
			{"bad e-mail", func(b map[string]any) { b["notification_email"] = "branch" }, "notification_email"},
			{"no hash", func(b map[string]any) { delete(b, "source_xml_hash") }, "source_xml_hash"},
			{"hash with a space", func(b map[string]any) { b["source_xml_hash"] = "abc 123" }, "source_xml_hash"},
			{"hash too long", func(b map[string]any) { b["source_xml_hash"] = strings.Repeat("a", 129) }, "source_xml_hash"},
			{"canton not 4 digits", func(b map[string]any) { b["canton"] = "17011" }, "canton"},
		}
		for _, c := range invalid {
			t.Run("invalid: "+c.name, func(t *testing.T) {
				body := invoice("RECCARRIER5", 5, "593991234567")
				c.mutate(body)
				a := s.do("POST", webhookPath, body, serviceKey()).expect(t, http.StatusBadRequest)
				errs, _ := a.body["errors"].([]any)
				if len(errs) != 1 || !strings.HasPrefix(errs[0].(string), c.field+" ") {
					t.Fatalf("errors %v, want one about %s", errs, c.field)
				}
			})
		}
		t.Run("invalid body is recorded rejected", func(t *testing.T) {
			body := invoice("RECCARRIER5", 5, "0000")
			body["invoice_number"] = "INV-INVALID-1"
			s.do("POST", webhookPath, body, serviceKey()).expect(t, http.StatusBadRequest)
			list := s.do("GET", "/api/v1/recargas/transactions?status=rejected&per_page=100", nil, bearer(newUser("v", PermView).token(t))).expect(t, http.StatusOK)
			for _, r := range list.body["data"].([]any) {
				m := r.(map[string]any)
				if m["invoice_number"] == "INV-INVALID-1" {
					if !strings.HasPrefix(m["rejection_reason"].(string), "INVALID_PAYLOAD") || m["source_xml_hash"] != nil {
						t.Fatalf("record %v", m)
					}
					return
				}
			}
			t.Fatal("no rejected record for the invalid body")
		})
		t.Run("malformed JSON", func(t *testing.T) {
			s.do("POST", webhookPath, `{"invoice_number": 1`, serviceKey()).expect(t, http.StatusBadRequest)
			s.do("POST", webhookPath, `{"amount": "five"}`, serviceKey()).expect(t, http.StatusBadRequest)
		})
		auth := []struct {
			name    string
			headers map[string]string
		}{
			{"no key", nil},
			{"wrong key", map[string]string{"x-service-key": "nope"}},
			{"bearer token", bearer(newUser("u", PermCreate, PermView).token(t))},
		}
		for _, c := range auth {
			t.Run("auth: "+c.name, func(t *testing.T) {
				s.do("POST", webhookPath, invoice("RECCARRIER5", 5, "593991234567"), c.headers).expect(t, http.StatusUnauthorized)
				s.do("POST", ignoredPath, map[string]any{"reason": "x"}, c.headers).expect(t, http.StatusUnauthorized)
			})
		}
		s.assertNoPassword(t)
	})
}

// TestWebhookConcurrentDuplicates: 50 concurrent deliveries of one invoice give one 201, 49
// 409s and one carrier call.
func TestWebhookConcurrentDuplicates(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		body := invoice("RECCARRIER5", 5, "593991234567")
		counts := concurrently(50, func(int) int { return s.do("POST", webhookPath, body, serviceKey()).status })
		if counts[http.StatusCreated] != 1 || counts[http.StatusConflict] != 49 {
			t.Fatalf("statuses %v, want one 201 and 49 409", counts)
		}
		if n := s.spr.Calls(carrier.FunctionTopup); n != 1 {
			t.Fatalf("%d carrier calls, want 1", n)
		}
	})
}

func TestWebhookIgnored(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		body := map[string]any{
			"reason":         "the e-mail is not a top-up invoice",
			"invoice_number": "001-002-000000777",
			"payload":        map[string]any{"subject": "Factura 777", "attachments": []string{"f.xml", "f.pdf"}},
		}
		a := s.do("POST", ignoredPath, body, serviceKey()).expect(t, http.StatusCreated)
		if a.str("status") != "ignored" || a.str("source") != "workflow-ignored" || a.str("transaction_id") == "" || a.str("invoice_number") != "001-002-000000777" {
			t.Fatalf("body %s", a.raw)
		}
		rec := s.transaction(t, a.str("transaction_id"))
		payload, _ := rec["source_payload"].(map[string]any)
		inner, _ := payload["payload"].(map[string]any)
		if rec["status"] != "ignored" || rec["ignored_reason"] != body["reason"] || inner["subject"] != "Factura 777" || len(rec["notifications"].([]any)) != 0 {
			t.Fatalf("record %v", rec)
		}
		if s.spr.Calls(carrier.FunctionTopup) != 0 {
			t.Fatal("an ignored e-mail reached the carrier")
		}
		list := s.do("GET", "/api/v1/recargas/transactions?source=workflow-ignored", nil, bearer(newUser("v", PermView).token(t))).expect(t, http.StatusOK)
		if list.obj("meta")["total"] != float64(1) {
			t.Fatalf("list %s", list.raw)
		}
		a = s.do("POST", ignoredPath, map[string]any{"invoice_number": "x"}, serviceKey()).expect(t, http.StatusBadRequest)
		if !strings.Contains(a.raw, "reason is required") {
			t.Fatalf("body %s", a.raw)
		}
		s.do("POST", ignoredPath, `[]`, serviceKey()).expect(t, http.StatusBadRequest)
	})
}

// TestWebhookAmountOutOfBounds: an amount with an extreme exponent, a megabyte of digits or a
// value that is no number is invalid payload (400 naming amount), answered at once: before,
// 1e999999999 held the request (and a CPU) while a comparison rescaled it.
func TestWebhookAmountOutOfBounds(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		cases := []struct{ name, amount string }{
			{"huge exponent", `1e999999999`},
			{"huge negative exponent", `1e-999999999`},
			{"huge exponent as a string", `"1e999999999"`},
			{"ten thousand digits", "1" + strings.Repeat("0", 10000)},
			{"an array", `[]`},
			{"a boolean", `true`},
			{"not a number", `"five"`},
		}
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				body := fmt.Sprintf(`{"invoice_number":"001-001-9%08d","product_code":"RECCARRIER5","subscriber_id":"593991234567","amount":%s,"source_xml_hash":"amount-bounds-%d"}`, i, c.amount, i)
				a := s.do("POST", webhookPath, body, serviceKey()).expect(t, http.StatusBadRequest)
				errs, _ := a.body["errors"].([]any)
				if a.str("status") != "error" || len(errs) != 1 || !strings.HasPrefix(errs[0].(string), "amount ") {
					t.Fatalf("body %s, want the envelope with one error about amount", a.raw)
				}
			})
		}
		if n := s.spr.Calls(carrier.FunctionTopup); n != 0 {
			t.Fatalf("%d top-ups reached the carrier", n)
		}
	})
}

// TestWebhookWrongTypes: a member of the wrong type, or a body that is no JSON object, is
// invalid payload: 400 in the envelope naming the member, and the delivery is recorded
// rejected (INVALID_PAYLOAD) with its payload and the invalid-invoice job. Before, the body
// was refused before the domain: a 400 that left no record.
func TestWebhookWrongTypes(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		// valid is a valid body's members but the one named by without.
		valid := func(n int, without string) string {
			members := []string{
				fmt.Sprintf(`"invoice_number":"001-001-7%08d"`, n), `"product_code":"RECCARRIER5"`,
				`"subscriber_id":"593991234567"`, `"amount":5`, fmt.Sprintf(`"source_xml_hash":"wrong-types-%d"`, n),
			}
			return strings.Join(slices.DeleteFunc(members, func(m string) bool { return strings.HasPrefix(m, `"`+without+`"`) }), ",")
		}
		cases := []struct {
			name, body, problem string
			invoice             any // the invoice_number kept on the record
		}{
			{"invoice_number as a number", `{"invoice_number":123,"product_code":"RECCARRIER5","subscriber_id":"593991234567","amount":5,"source_xml_hash":"wt-a"}`, "invoice_number must be a string", nil},
			{"subscriber_id as a number", `{` + valid(1, "subscriber_id") + `,"subscriber_id":593991234567}`, "subscriber_id must be a string", "001-001-700000001"},
			{"product_code as a boolean", `{` + valid(2, "product_code") + `,"product_code":true}`, "product_code must be a string", "001-001-700000002"},
			{"canton as a number", `{` + valid(3, "") + `,"canton":1701}`, "canton must be a string", "001-001-700000003"},
			{"source_xml_hash as an array", `{` + valid(4, "source_xml_hash") + `,"source_xml_hash":["a"]}`, "source_xml_hash must be a string", "001-001-700000004"},
			{"notification_email as an object", `{` + valid(5, "") + `,"notification_email":{"to":"x@example.com"}}`, "notification_email must be a string", "001-001-700000005"},
			{"amount as an object", `{` + valid(6, "amount") + `,"amount":{"value":5}}`, "amount must be a number", "001-001-700000006"},
			// The specification types amount as a number: a numeric string is the wrong type.
			{"amount as a numeric string", `{` + valid(7, "amount") + `,"amount":"5.00"}`, "amount must be a number", "001-001-700000007"},
			// Two spellings of one member: encoding/json would keep either, so neither is kept.
			{"source_xml_hash twice in two cases", `{` + valid(8, "") + `,"SOURCE_XML_HASH":"other"}`, "source_xml_hash is given more than once (as source_xml_hash and SOURCE_XML_HASH)", "001-001-700000008"},
			{"amount twice", `{` + valid(9, "") + `,"amount":500}`, "amount is given more than once", "001-001-700000009"},
			{"body is an array", `[{"invoice_number":"x"}]`, "request body must be a JSON object", nil},
			{"body is a string", `"invoice"`, "request body must be a JSON object", nil},
			{"body is not JSON", `{"invoice_number": 1`, "request body is not valid JSON", nil},
			{"body is empty", ` `, "request body is required", nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				a := s.do("POST", webhookPath, c.body, serviceKey()).expect(t, http.StatusBadRequest)
				errs, _ := a.body["errors"].([]any)
				if a.str("status") != "error" || a.body["statusCode"] != float64(400) || len(errs) != 1 || !strings.HasPrefix(errs[0].(string), c.problem) {
					t.Fatalf("body %s, want the envelope with the one problem %q", a.raw, c.problem)
				}
				if a.str("error") != "INVALID_PAYLOAD" || a.body["success"] != false || a.str("source") != "workflow-webhook" || a.body["invoice_number"] != c.invoice {
					t.Fatalf("body %s, want the rejection's members", a.raw)
				}
				rec := s.transaction(t, a.str("transaction_id"))
				notes, _ := rec["notifications"].([]any)
				field := strings.Fields(c.problem)[0]
				if strings.HasPrefix(c.problem, "request body") {
					field = "request body"
				}
				reason := "INVALID_PAYLOAD: " + field + ": " + strings.TrimPrefix(c.problem, field+" ")
				if rec["status"] != "rejected" || !strings.HasPrefix(rec["rejection_reason"].(string), reason) ||
					rec["source_payload"] == nil || rec["source_xml_hash"] != nil ||
					len(notes) != 1 || notes[0].(map[string]any)["kind"] != "recharge-invalid-invoice" {
					t.Fatalf("record %v", rec)
				}
			})
		}
		if n := s.spr.Calls(carrier.FunctionTopup); n != 0 {
			t.Fatalf("%d top-ups reached the carrier", n)
		}
	})
}

// TestWebhookErrorBodiesCarryTransactionID: every webhook error that left a record names it
// in transaction_id (with the rejection code in error), whatever the status. Before, the 400
// and 409 bodies were the bare envelope.
func TestWebhookErrorBodiesCarryTransactionID(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		processed := invoice("RECCARRIER5", 5, "593991234567")
		first := s.do("POST", webhookPath, processed, serviceKey()).expect(t, http.StatusCreated)
		cases := []struct {
			name   string
			body   func() map[string]any
			status int
			code   string
		}{
			{"invalid payload", func() map[string]any { return invoice("RECCARRIER5", 5, "0999") }, http.StatusBadRequest, "INVALID_PAYLOAD"},
			{"repeated hash", func() map[string]any { return processed }, http.StatusConflict, "DUPLICATE_SOURCE_XML_HASH"},
			{"no mapping", func() map[string]any { return invoice("RECCARRIER8", 8, "593991234567") }, http.StatusUnprocessableEntity, "PRODUCT_NOT_MAPPED"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				a := s.do("POST", webhookPath, c.body(), serviceKey()).expect(t, c.status)
				if a.str("transaction_id") == "" || a.str("error") != c.code || a.body["success"] != false {
					t.Fatalf("body %s, want transaction_id and error %s", a.raw, c.code)
				}
				rec := s.transaction(t, a.str("transaction_id"))
				if rec["status"] != "rejected" || !strings.HasPrefix(rec["rejection_reason"].(string), c.code) {
					t.Fatalf("record %v", rec)
				}
				if c.status == http.StatusConflict && (a.str("original_transaction_id") != first.str("transaction_id") || a.str("original_status") != "success") {
					t.Fatalf("body %s, want the original transaction %s", a.raw, first.str("transaction_id"))
				}
			})
		}
	})
}

// TestWebhookIdempotency: the source_xml_hash rule to the letter of the specification (a
// repeated hash is 409 "invoice already processed", never a second top-up, whatever else the
// delivery says), answered the same way every time; the hash alone decides, so the same
// invoice number under another hash is a new top-up: 201, a new record, one more carrier call.
func TestWebhookIdempotency(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		cases := []struct {
			name   string
			second func(first map[string]any) map[string]any
			status int
			code   string
		}{
			{"same hash, same invoice", func(f map[string]any) map[string]any { return f }, http.StatusConflict, "DUPLICATE_SOURCE_XML_HASH"},
			{"same hex hash in capitals", func(f map[string]any) map[string]any {
				b := clone(f)
				b["source_xml_hash"] = strings.ToUpper(f["source_xml_hash"].(string))
				return b
			}, http.StatusConflict, "DUPLICATE_SOURCE_XML_HASH"},
			{"same hash, another invoice number", func(f map[string]any) map[string]any {
				b := invoice("RECCARRIER5", 5, "593991234567")
				b["source_xml_hash"] = f["source_xml_hash"]
				return b
			}, http.StatusConflict, "DUPLICATE_SOURCE_XML_HASH"},
			{"same invoice number, another hash", func(f map[string]any) map[string]any {
				b := invoice("RECCARRIER5", 5, "593991234567")
				b["invoice_number"] = f["invoice_number"]
				return b
			}, http.StatusCreated, ""},
			{"another invoice, another hash", func(map[string]any) map[string]any { return invoice("RECCARRIER5", 5, "593991234567") }, http.StatusCreated, ""},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				first := invoice("RECCARRIER5", 5, "593991234567")
				orig := s.do("POST", webhookPath, first, serviceKey()).expect(t, http.StatusCreated)
				calls := s.spr.Calls(carrier.FunctionTopup)
				second := c.second(first)
				if c.status == http.StatusCreated {
					a := s.do("POST", webhookPath, second, serviceKey()).expect(t, c.status)
					if n := s.spr.Calls(carrier.FunctionTopup); n != calls+1 {
						t.Fatalf("%d more top-ups, want 1", n-calls)
					}
					if a.str("transaction_id") == orig.str("transaction_id") || a.str("status") != "success" || a.str("invoice_number") != second["invoice_number"] {
						t.Fatalf("body %s, want a new successful top-up of invoice %v", a.raw, second["invoice_number"])
					}
					if rec := s.transaction(t, a.str("transaction_id")); rec["source_xml_hash"] != second["source_xml_hash"] {
						t.Fatalf("new record %v, want it to hold its own hash", rec)
					}
					if rec := s.transaction(t, orig.str("transaction_id")); rec["status"] != "success" || rec["source_xml_hash"] != first["source_xml_hash"] {
						t.Fatalf("original changed: %v", rec)
					}
					return
				}
				// Twice: the answer does not change with repetition.
				var answers []answer
				for range 2 {
					answers = append(answers, s.do("POST", webhookPath, second, serviceKey()).expect(t, c.status))
				}
				for _, a := range answers {
					if a.str("error") != c.code || a.str("original_transaction_id") != orig.str("transaction_id") || a.str("original_status") != "success" {
						t.Fatalf("body %s, want %s naming %s", a.raw, c.code, orig.str("transaction_id"))
					}
				}
				if n := s.spr.Calls(carrier.FunctionTopup); n != calls {
					t.Fatalf("%d more top-ups reached the carrier", n-calls)
				}
				if rec := s.transaction(t, orig.str("transaction_id")); rec["status"] != "success" || rec["source_xml_hash"] != first["source_xml_hash"] {
					t.Fatalf("original changed: %v", rec)
				}
			})
		}
		t.Run("an invalid delivery does not hold the hash", func(t *testing.T) {
			b := invoice("RECCARRIER5", 5, "0999")
			s.do("POST", webhookPath, b, serviceKey()).expect(t, http.StatusBadRequest)
			b["subscriber_id"] = "593991234567"
			s.do("POST", webhookPath, b, serviceKey()).expect(t, http.StatusCreated)
		})
	})
}

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestWebhookConcurrentInvoiceNumber: 20 concurrent deliveries of one invoice number under 20
// hashes are 20 invoices (idempotency is by source_xml_hash alone): 20 201 and 20 carrier
// calls, none refused.
func TestWebhookConcurrentInvoiceNumber(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		bodies := make([]map[string]any, 20)
		for i := range bodies {
			bodies[i] = invoice("RECCARRIER5", 5, "593991234567")
			bodies[i]["invoice_number"] = "001-001-555555555"
		}
		counts := concurrently(len(bodies), func(i int) int { return s.do("POST", webhookPath, bodies[i], serviceKey()).status })
		if counts[http.StatusCreated] != 20 {
			t.Fatalf("statuses %v, want 20 201", counts)
		}
		if n := s.spr.Calls(carrier.FunctionTopup); n != 20 {
			t.Fatalf("%d carrier calls, want 20", n)
		}
	})
}
