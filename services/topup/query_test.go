package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

const queryPath = "/api/v1/recargas/query-recharge"

// sprSuccess is an SPR answer of STATUS=SUCCESS, for scripting a query.
const sprSuccess = `<?xml version="1.0" encoding="UTF-8"?><umsprot version="1"><exec_rsp result="0" diagnostic="OK">` +
	`<data name="MENSAJE">top-up found</data><data name="SYSTEMMESSAGE">OK</data><data name="ID_RECARGA">900000001</data>` +
	`<data name="ID_CODIGO">0</data><data name="STATUS">SUCCESS</data></exec_rsp></umsprot>`

func TestQueryRecharge(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		viewer := bearer(newUser("viewer", PermView).token(t))
		op := newUser("op", PermCreate, PermView)

		t.Run("late success: unavailable -> success", func(t *testing.T) {
			a := s.do("POST", rechargePath, rechargeBodyFor(carriertest.SubscriberLateSuccess), op.recharge(t)).expect(t, http.StatusGatewayTimeout)
			if a.str("status") != "unavailable" {
				t.Fatalf("body %s", a.raw)
			}
			q := s.do("POST", queryPath, map[string]any{"external_transaction_id": a.str("external_transaction_id"), "offer_id": "31"}, viewer).expect(t, http.StatusOK)
			tx := q.obj("transaction")
			if q.body["success"] != true || q.str("status") != "SUCCESS" || q.body["result_code"] != float64(0) || q.str("message") == "" ||
				q.str("external_transaction_id") != a.str("external_transaction_id") ||
				tx["previous_status"] != "unavailable" || tx["status"] != "success" || tx["changed"] != true {
				t.Fatalf("answer %s", q.raw)
			}
			rec := s.transaction(t, a.str("transaction_id"))
			if rec["status"] != "success" || rec["retry_count"] != float64(1) || rec["carrier_id_recarga"] == nil {
				t.Fatalf("record %v", rec)
			}
			calls := rec["carrier_calls"].([]any)
			if len(calls) != 2 || calls[1].(map[string]any)["function"] != carrier.FunctionQueryRecharge {
				t.Fatalf("carrier calls %v", calls)
			}
			if q := calls[1].(map[string]any)["request_xml"].(string); !strings.Contains(q, "PASSWORD") || strings.Contains(q, testPassword) {
				t.Fatalf("query XML stored without the PASSWORD masked: %s", q)
			}
		})

		t.Run("in flight: pending -> success", func(t *testing.T) {
			// The top-up is committed at the SPR at once and its answer held at a gate: while
			// the request waits, its record is pending and the carrier already has it. No
			// clock decides anything: the stack's carrier timeout is far beyond failAfter,
			// which only bounds a broken run.
			const failAfter = 30 * time.Second
			s := newStack(t, tg, map[string]string{"CARRIER_TIMEOUT": "120"})
			gate := carriertest.NewGate()
			s.spr.Script(carrier.FunctionTopup, carriertest.LateSuccess().Until(gate))
			defer gate.Open() // a failed run does not leave the call held
			done := make(chan answer, 1)
			go func() {
				done <- s.do("POST", rechargePath, rechargeBodyFor("593991112225"), op.recharge(t))
			}()
			select {
			case <-gate.Reached():
			case a := <-done:
				t.Fatalf("the request ended (%d %s) without the carrier holding its top-up", a.status, a.raw)
			case <-time.After(failAfter):
				t.Fatal("the top-up never reached the carrier")
			}
			// The carrier has committed the top-up and holds the answer: the record must be
			// there, pending, and the only pending one.
			l := s.do("GET", "/api/v1/recargas/transactions?status=pending", nil, viewer).expect(t, http.StatusOK)
			rows, _ := l.body["data"].([]any)
			if len(rows) != 1 {
				t.Fatalf("pending records while the carrier held the answer: %s", l.raw)
			}
			pending := rows[0].(map[string]any)
			if pending["status"] != "pending" || pending["subscriber_id"] != "593991112225" {
				t.Fatalf("pending record %v", pending)
			}
			q := s.do("POST", queryPath, map[string]any{"external_transaction_id": pending["external_transaction_id"], "offer_id": "31"}, viewer).expect(t, http.StatusOK)
			if tx := q.obj("transaction"); q.body["success"] != true || q.str("status") != "SUCCESS" ||
				tx["previous_status"] != "pending" || tx["status"] != "success" || tx["changed"] != true {
				t.Fatalf("answer %s", q.raw)
			}
			select {
			case a := <-done:
				t.Fatalf("the request ended (%d %s) before the carrier let its answer go", a.status, a.raw)
			default:
			}
			// The held call then fails (the gate drops the connection, unavailable like a
			// timeout): the record stays success (success is final) and the caller is told so.
			gate.Open()
			var a answer
			select {
			case a = <-done:
			case <-time.After(failAfter):
				t.Fatal("the request did not end after the carrier dropped the call")
			}
			if a.status != http.StatusCreated || a.str("status") != "success" {
				t.Fatalf("in-flight request answered %d %s", a.status, a.raw)
			}
			rec := s.transaction(t, pending["transaction_id"].(string))
			if rec["status"] != "success" || rec["retry_count"] != float64(0) || rec["carrier_id_recarga"] == nil {
				t.Fatalf("record %v", rec)
			}
			// Both exchanges are audited: the query and the top-up whose connection dropped.
			if calls, _ := rec["carrier_calls"].([]any); len(calls) != 2 {
				t.Fatalf("carrier calls %v", rec["carrier_calls"])
			}
		})

		t.Run("failed -> success only when the business confirms", func(t *testing.T) {
			a := s.do("POST", rechargePath, rechargeBodyFor(carriertest.SubscriberNoBalance), op.recharge(t)).expect(t, http.StatusUnprocessableEntity)
			body := map[string]any{"external_transaction_id": a.str("external_transaction_id"), "offer_id": "31"}
			s.spr.Script(carrier.FunctionQueryRecharge, carriertest.Raw(200, sprSuccess), carriertest.Raw(200, sprSuccess))
			q := s.do("POST", queryPath, body, viewer).expect(t, http.StatusOK)
			if tx := q.obj("transaction"); tx["status"] != "failed" || tx["changed"] != false || tx["note"] == nil {
				t.Fatalf("without confirmation: %s", q.raw)
			}
			body["confirm_charge"] = true
			s.do("POST", queryPath, body, viewer).expect(t, http.StatusForbidden)
			q = s.do("POST", queryPath, body, bearer(op.token(t))).expect(t, http.StatusOK)
			if tx := q.obj("transaction"); tx["status"] != "success" || tx["previous_status"] != "failed" {
				t.Fatalf("with confirmation: %s", q.raw)
			}
		})

		t.Run("success stays success on a remote ERROR: incident", func(t *testing.T) {
			a := s.do("POST", rechargePath, rechargeBodyFor("593991112223"), op.recharge(t)).expect(t, http.StatusCreated)
			s.spr.Script(carrier.FunctionQueryRecharge, carriertest.BusinessError("1", "transaction not found"))
			q := s.do("POST", queryPath, map[string]any{"external_transaction_id": a.str("external_transaction_id"), "offer_id": "31"}, viewer).expect(t, http.StatusOK)
			if q.body["success"] != false || q.str("status") != "ERROR" || q.body["result_code"] != float64(1) {
				t.Fatalf("answer %s", q.raw)
			}
			rec := s.transaction(t, a.str("transaction_id"))
			if rec["status"] != "success" || rec["incident"] != true || rec["incident_note"] == nil {
				t.Fatalf("record %v", rec)
			}
		})

		t.Run("another offer than the record's changes nothing", func(t *testing.T) {
			// The carrier answers ERROR ("wrong product for the query") for the pair: that
			// says nothing about the top-up, so a success is not flagged as an incident.
			op := newUser("op-offer", PermCreate, PermView)
			a := s.do("POST", rechargePath, rechargeBodyFor("593991112224"), op.recharge(t)).expect(t, http.StatusCreated)
			q := s.do("POST", queryPath, map[string]any{"external_transaction_id": a.str("external_transaction_id"), "offer_id": "150"}, viewer).expect(t, http.StatusOK)
			if tx := q.obj("transaction"); q.body["success"] != false || tx["status"] != "success" || tx["changed"] != false || tx["incident"] != false || tx["note"] == nil {
				t.Fatalf("answer %s", q.raw)
			}
			if rec := s.transaction(t, a.str("transaction_id")); rec["status"] != "success" || rec["incident"] != false || rec["incident_note"] != nil {
				t.Fatalf("record %v", rec)
			}
			// Nor does a remote SUCCESS for another offer move an unavailable record.
			u := s.do("POST", rechargePath, rechargeBodyFor(carriertest.SubscriberIPNotAuthorized), op.recharge(t)).expect(t, http.StatusBadGateway)
			s.spr.Script(carrier.FunctionQueryRecharge, carriertest.Raw(200, sprSuccess))
			q = s.do("POST", queryPath, map[string]any{"external_transaction_id": u.str("external_transaction_id"), "offer_id": "150"}, viewer).expect(t, http.StatusOK)
			if tx := q.obj("transaction"); tx["status"] != "unavailable" || tx["changed"] != false {
				t.Fatalf("answer %s", q.raw)
			}
		})

		t.Run("unknown transaction", func(t *testing.T) {
			q := s.do("POST", queryPath, map[string]any{"external_transaction_id": "UNKNOWN", "offer_id": "31"}, viewer).expect(t, http.StatusOK)
			if q.body["success"] != false || q.str("message") != carriertest.MessageNotFound || q.body["result_code"] != float64(1) || q.body["transaction"] != nil {
				t.Fatalf("answer %s", q.raw)
			}
		})
		t.Run("carrier fault", func(t *testing.T) {
			s.spr.Script(carrier.FunctionQueryRecharge, carriertest.Fault("350", "IP address not authorized"))
			q := s.do("POST", queryPath, map[string]any{"external_transaction_id": "X", "offer_id": "31"}, viewer).expect(t, http.StatusBadGateway)
			if m := q.obj("message"); m["operation"] != carrier.FunctionQueryRecharge || m["upstreamCode"] != "350" {
				t.Fatalf("answer %s", q.raw)
			}
		})
		t.Run("carrier timeout", func(t *testing.T) {
			s.spr.Script(carrier.FunctionQueryRecharge, carriertest.Hang())
			s.do("POST", queryPath, map[string]any{"external_transaction_id": "X", "offer_id": "31"}, viewer).expect(t, http.StatusGatewayTimeout)
		})
		t.Run("refusals", func(t *testing.T) {
			a := s.do("POST", queryPath, map[string]any{}, viewer).expect(t, http.StatusBadRequest)
			if errs := fmt.Sprint(a.body["errors"]); !strings.Contains(errs, "external_transaction_id") || !strings.Contains(errs, "offer_id") {
				t.Fatalf("errors %s", errs)
			}
			s.do("POST", queryPath, map[string]any{"external_transaction_id": "X", "offer_id": "31"}, nil).expect(t, http.StatusUnauthorized)
			s.do("POST", queryPath, map[string]any{"external_transaction_id": "X", "offer_id": "31"}, bearer(newUser("c", PermCreate).token(t))).expect(t, http.StatusForbidden)
			s.do("POST", queryPath, map[string]any{"external_transaction_id": "X", "offer_id": "31"}, serviceKey()).expect(t, http.StatusUnauthorized)
		})
		s.assertNoPassword(t)
	})
}

// specFields are the transaction record's fields in the specification's table (id as
// transaction_id; the timestamps as created_at and updated_at).
var specFields = []string{
	"transaction_id", "external_transaction_id", "external_operation", "source", "subscriber_id", "offer_id",
	"quantity", "status", "invoice_number", "invoice_code", "notification_email", "source_xml_hash",
	"product_code", "rejection_reason", "source_payload", "retry_count", "carrier_id_recarga",
	"carrier_id_codigo", "carrier_system_message", "carrier_result_code", "carrier_diagnostic",
	"requested_by_user_id", "requested_by_username", "raw_request_xml", "raw_response_xml",
	"created_at", "updated_at",
}

// TestTransactionFieldsOfTheSpecification: every record, whatever its source and status,
// shows every field of the specification's table, by its name, in the detail (null when it does
// not apply), and in the list except the raw carrier XML (raw_request_xml, raw_response_xml),
// which the list leaves to the detail (issue 19: a page of 25 was over 50 KB).
func TestTransactionFieldsOfTheSpecification(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		viewer := bearer(newUser("viewer", PermView).token(t))
		op := newUser("fields", PermCreate)
		s.do("POST", rechargePath, rechargeBodyFor("593991000001"), op.recharge(t)).expect(t, http.StatusCreated)
		s.do("POST", rechargePath, rechargeBodyFor(carriertest.SubscriberIPNotAuthorized), op.recharge(t)).expect(t, http.StatusBadGateway)
		s.do("POST", webhookPath, invoice("RECCARRIER5", 5, "593991000002"), serviceKey()).expect(t, http.StatusCreated)
		s.do("POST", webhookPath, invoice("RECCARRIER9", 9, "593991000003"), serviceKey()).expect(t, http.StatusUnprocessableEntity)
		s.do("POST", ignoredPath, map[string]any{"reason": "no number"}, serviceKey()).expect(t, http.StatusCreated)

		data := s.do("GET", "/api/v1/recargas/transactions", nil, viewer).expect(t, http.StatusOK).body["data"].([]any)
		if len(data) != 5 {
			t.Fatalf("%d records, want 5", len(data))
		}
		for _, r := range data {
			item := r.(map[string]any)
			detail := s.transaction(t, item["transaction_id"].(string))
			for _, f := range specFields {
				_, inItem := item[f]
				if xml := f == "raw_request_xml" || f == "raw_response_xml"; inItem == xml {
					t.Errorf("list item (%s %s): %s present %v", item["source"], item["status"], f, inItem)
				}
				if _, ok := detail[f]; !ok {
					t.Errorf("detail (%s %s) has no %s", item["source"], item["status"], f)
				}
			}
			if item["source"] == "dashboard" && (detail["raw_request_xml"] == nil || detail["raw_response_xml"] == nil) {
				t.Errorf("detail of a top-up without its XML: %v", detail)
			}
			if item["source"] == "workflow-webhook" && item["source_payload"] == nil {
				t.Errorf("list item of a webhook without its payload: %v", item)
			}
		}
	})
}

func TestTransactionsListAndDetail(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		viewer := bearer(newUser("viewer", PermView).token(t))
		op := newUser("lister", PermCreate, PermUnlimited)
		s.do("POST", rechargePath, rechargeBodyFor("593991000001"), op.recharge(t)).expect(t, http.StatusCreated)
		s.do("POST", rechargePath, rechargeBodyFor(carriertest.SubscriberNoBalance), op.recharge(t)).expect(t, http.StatusUnprocessableEntity)
		s.do("POST", webhookPath, invoice("RECCARRIER5", 5, "593991000002"), serviceKey()).expect(t, http.StatusCreated)
		s.do("POST", webhookPath, invoice("RECCARRIER9", 9, "593991000003"), serviceKey()).expect(t, http.StatusUnprocessableEntity)
		s.do("POST", ignoredPath, map[string]any{"reason": "no number"}, serviceKey()).expect(t, http.StatusCreated)

		list := func(query string) answer {
			return s.do("GET", "/api/v1/recargas/transactions"+query, nil, viewer).expect(t, http.StatusOK)
		}
		cases := []struct {
			query                         string
			n, total, page, perPage, pags int
		}{
			{"", 5, 5, 1, 20, 1},
			{"?per_page=2", 2, 5, 1, 2, 3},
			{"?per_page=2&page=3", 1, 5, 3, 2, 3},
			{"?per_page=2&page=4", 0, 5, 4, 2, 3},
			{"?per_page=1000", 5, 5, 1, 100, 1},
			{"?per_page=0", 1, 5, 1, 1, 5},
			{"?page=0", 5, 5, 1, 20, 1},
			// Far past the end, where the offset overflows an int64 or bun's int32 OFFSET: no
			// rows, not the first page.
			{"?page=9223372036854775807", 0, 5, 9223372036854775807, 20, 1},
			{"?page=92233720368547759&per_page=100", 0, 5, 92233720368547759, 100, 1},
			{"?page=21474838&per_page=100", 0, 5, 21474838, 100, 1},
			{"?page=2147483649&per_page=1", 0, 5, 2147483649, 1, 5},
			{"?page=21474837&per_page=100", 0, 5, 21474837, 100, 1},
			{"?status=success", 2, 2, 1, 20, 1},
			{"?status=failed", 1, 1, 1, 20, 1},
			{"?status=rejected", 1, 1, 1, 20, 1},
			// An empty list has total_pages 0 (the specification is silent; doc.go).
			{"?status=error", 0, 0, 1, 20, 0},
			{"?subscriber_id=593980000000&per_page=5", 0, 0, 1, 5, 0},
			{"?source=dashboard", 2, 2, 1, 20, 1},
			{"?source=workflow-webhook", 2, 2, 1, 20, 1},
			{"?source=workflow-ignored&status=ignored", 1, 1, 1, 20, 1},
			{"?subscriber_id=593991000002", 1, 1, 1, 20, 1},
		}
		for _, c := range cases {
			t.Run("list"+c.query, func(t *testing.T) {
				a := list(c.query)
				meta := a.obj("meta")
				data := a.body["data"].([]any)
				if len(data) != c.n || meta["total"] != float64(c.total) || meta["page"] != float64(c.page) ||
					meta["per_page"] != float64(c.perPage) || meta["total_pages"] != float64(c.pags) {
					t.Fatalf("%d rows, meta %v", len(data), meta)
				}
			})
		}
		t.Run("newest first", func(t *testing.T) {
			data := list("").body["data"].([]any)
			if data[0].(map[string]any)["source"] != "workflow-ignored" || data[4].(map[string]any)["subscriber_id"] != "593991000001" {
				t.Fatalf("order %v", data)
			}
		})
		for _, q := range []string{"?status=done", "?source=erp", "?page=x", "?per_page=1.5"} {
			t.Run("bad "+q, func(t *testing.T) {
				s.do("GET", "/api/v1/recargas/transactions"+q, nil, viewer).expect(t, http.StatusBadRequest)
			})
		}
		t.Run("detail", func(t *testing.T) {
			id := list("?status=success&source=dashboard").body["data"].([]any)[0].(map[string]any)["transaction_id"].(string)
			rec := s.transaction(t, id)
			for _, k := range []string{"raw_request_xml", "raw_response_xml", "carrier_id_recarga", "carrier_id_codigo", "carrier_system_message", "requested_by_username", "external_transaction_id", "created_at", "updated_at"} {
				if rec[k] == nil || rec[k] == "" {
					t.Errorf("detail without %s: %v", k, rec)
				}
			}
			if len(rec["carrier_calls"].([]any)) != 1 || len(rec["notifications"].([]any)) != 1 {
				t.Fatalf("detail audit %v %v", rec["carrier_calls"], rec["notifications"])
			}
		})
		t.Run("detail refusals", func(t *testing.T) {
			s.do("GET", "/api/v1/recargas/transactions/0191c6a2-7b7e-7c1a-9b2f-1a2b3c4d5e6f", nil, viewer).expect(t, http.StatusNotFound)
			s.do("GET", "/api/v1/recargas/transactions/not-a-uuid", nil, viewer).expect(t, http.StatusNotFound)
			s.do("GET", "/api/v1/recargas/transactions", nil, nil).expect(t, http.StatusUnauthorized)
			s.do("GET", "/api/v1/recargas/transactions", nil, bearer(newUser("c", PermCreate).token(t))).expect(t, http.StatusForbidden)
			id := list("").body["data"].([]any)[0].(map[string]any)["transaction_id"].(string)
			s.do("GET", "/api/v1/recargas/transactions/"+id, nil, bearer(newUser("c", PermCreate).token(t))).expect(t, http.StatusForbidden)
		})
		s.assertNoPassword(t)
	})
}

func TestInventory(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		viewer := bearer(newUser("viewer", PermView).token(t))
		a := s.do("GET", "/api/v1/recargas/inventory", nil, viewer).expect(t, http.StatusOK)
		items := a.body["data"].([]any)
		if len(items) != 4 || a.body["success"] != true {
			t.Fatalf("answer %s", a.raw)
		}
		first := items[0].(map[string]any)
		if first["offer_id"] != "31" || first["description"] != "Pin 3" || first["available"] != float64(1000) {
			t.Fatalf("first item %v", first)
		}
		s.spr.Script(carrier.FunctionQueryInventory, carriertest.Fault("350", "IP address not authorized"))
		s.do("GET", "/api/v1/recargas/inventory", nil, viewer).expect(t, http.StatusBadGateway)
		s.spr.Script(carrier.FunctionQueryInventory, carriertest.BusinessError("1", "invalid credentials"))
		s.do("GET", "/api/v1/recargas/inventory", nil, viewer).expect(t, http.StatusBadGateway)
		s.spr.Script(carrier.FunctionQueryInventory, carriertest.Hang())
		s.do("GET", "/api/v1/recargas/inventory", nil, viewer).expect(t, http.StatusGatewayTimeout)
		s.do("GET", "/api/v1/recargas/inventory", nil, nil).expect(t, http.StatusUnauthorized)
		s.do("GET", "/api/v1/recargas/inventory", nil, bearer(newUser("c", PermCreate).token(t))).expect(t, http.StatusForbidden)
		for _, b := range s.answers.bodies {
			if strings.Contains(b, testPassword) {
				t.Fatalf("an answer holds the carrier PASSWORD: %s", b)
			}
		}
	})
}

// TestReconciler drives the reconciler's passes against the fake: a late success found by
// asking, a top-up retried with the same external_transaction_id after a fault, and a record
// that stays unavailable when the carrier never answers, until its retries run out.
func TestReconciler(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, map[string]string{"RECARGAS_RECONCILE_MAX_RETRIES": "1"})
		late := s.do("POST", webhookPath, invoice("RECCARRIER5", 5, carriertest.SubscriberLateSuccess), serviceKey()).expect(t, http.StatusCreated)
		s.spr.Script(carrier.FunctionTopup, carriertest.Fault("500", "SPR restarting"))
		retried := s.do("POST", webhookPath, invoice("RECCARRIER5", 5, "593991234567"), serviceKey()).expect(t, http.StatusCreated)
		never := s.do("POST", webhookPath, invoice("RECCARRIER5", 5, carriertest.SubscriberTimeout), serviceKey()).expect(t, http.StatusCreated)
		for _, a := range []answer{late, retried, never} {
			if a.str("status") != "unavailable" {
				t.Fatalf("setup: %s", a.raw)
			}
		}
		s.clock.Advance(2 * time.Minute)
		rep, err := s.svc().Reconcile(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Checked != 3 || rep.Succeeded != 2 || rep.Retried != 2 || rep.Unresolved != 1 {
			t.Fatalf("pass = %+v", rep)
		}
		lateRec := s.transaction(t, late.str("transaction_id"))
		if lateRec["status"] != "success" || lateRec["retry_count"] != float64(1) {
			t.Fatalf("late success: %v", lateRec)
		}
		if e, _ := s.spr.Entry(lateRec["external_transaction_id"].(string)); e.Calls != 1 {
			t.Fatalf("the late success was sent again (%d calls)", e.Calls)
		}
		retriedRec := s.transaction(t, retried.str("transaction_id"))
		if retriedRec["status"] != "success" || retriedRec["retry_count"] != float64(1) {
			t.Fatalf("retried: %v", retriedRec)
		}
		// Top-up (fault), query (not found), top-up again with the same id (success).
		calls := retriedRec["carrier_calls"].([]any)
		if len(calls) != 3 {
			t.Fatalf("carrier calls %v", calls)
		}
		for _, c := range []any{calls[0], calls[2]} {
			if !strings.Contains(c.(map[string]any)["request_xml"].(string), retriedRec["external_transaction_id"].(string)) {
				t.Fatal("the retry did not carry the same external_transaction_id")
			}
		}
		neverRec := s.transaction(t, never.str("transaction_id"))
		if neverRec["status"] != "unavailable" || neverRec["retry_count"] != float64(2) {
			t.Fatalf("timeout retried: %v", neverRec)
		}
		s.clock.Advance(2 * time.Minute)
		rep, err = s.svc().Reconcile(t.Context())
		if err != nil || rep.Exhausted != 1 || rep.Retried != 0 {
			t.Fatalf("second pass = %+v %v", rep, err)
		}
		if rec := s.transaction(t, never.str("transaction_id")); rec["status"] != "unavailable" || rec["retries_exhausted_at"] == nil {
			t.Fatalf("a top-up the carrier never confirmed became %v (retries_exhausted_at %v)", rec["status"], rec["retries_exhausted_at"])
		}
		// Exhausted: no longer selected, the carrier is not asked again.
		s.clock.Advance(2 * time.Minute)
		queries := s.spr.Calls(carrier.FunctionQueryRecharge)
		if rep, err = s.svc().Reconcile(t.Context()); err != nil || rep.Checked != 0 || s.spr.Calls(carrier.FunctionQueryRecharge) != queries {
			t.Fatalf("pass after exhaustion = %+v %v", rep, err)
		}
		s.assertNoPassword(t)
	})
}
