package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/storage/storagetest"
	"github.com/platform/integrations/topup"
)

const rechargePath = "/api/v1/recargas/recharge"

// TestRechargeOutcomes: each carrier outcome of a manual top-up, with the status and body the
// design decides, and what the record keeps.
func TestRechargeOutcomes(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		cases := []struct {
			name, subscriber string
			status           int
			recordStatus     string
			retryCount       float64
		}{
			{"success", "593991234567", http.StatusCreated, "success", 0},
			{"business error", carriertest.SubscriberNoBalance, http.StatusUnprocessableEntity, "failed", 0},
			{"fault 350", carriertest.SubscriberIPNotAuthorized, http.StatusBadGateway, "unavailable", 1},
			{"timeout", carriertest.SubscriberTimeout, http.StatusGatewayTimeout, "unavailable", 1},
			{"late success", carriertest.SubscriberLateSuccess, http.StatusGatewayTimeout, "unavailable", 1},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				u := newUser("op-"+strings.ReplaceAll(c.name, " ", "-"), PermCreate)
				a := s.do("POST", rechargePath, rechargeBodyFor(c.subscriber), u.recharge(t)).expect(t, c.status)
				if _, err := uuid.Parse(a.str("transaction_id")); err != nil || len(a.str("external_transaction_id")) == 0 {
					t.Fatalf("body without transaction_id/external_transaction_id: %s", a.raw)
				}
				if a.str("status") != c.recordStatus || a.body["success"] != (c.status == http.StatusCreated) {
					t.Fatalf("body %s, want status %s", a.raw, c.recordStatus)
				}
				if c.status == http.StatusCreated {
					if a.str("carrier_id_recarga") == "" || a.str("carrier_id_codigo") != "0" || a.str("message") == "" {
						t.Fatalf("success body incomplete: %s", a.raw)
					}
				} else if a.str("message") != "ERROR" || a.str("error") == "" {
					t.Fatalf("logical rejection body incomplete: %s", a.raw)
				}
				rec := s.transaction(t, a.str("transaction_id"))
				if rec["status"] != c.recordStatus || rec["retry_count"] != c.retryCount || rec["source"] != "dashboard" ||
					rec["requested_by_user_id"] != u.sub || rec["requested_by_username"] != u.username || rec["canton"] != "1701" ||
					rec["external_transaction_id"] != a.str("external_transaction_id") {
					t.Fatalf("record %v", rec)
				}
				if !strings.Contains(rec["raw_request_xml"].(string), "sre_topupd_76186") {
					t.Fatalf("raw_request_xml = %v", rec["raw_request_xml"])
				}
				notes := rec["notifications"].([]any)
				wantKind := map[string]string{"success": topup.KindRechargeSuccess, "failed": topup.KindRechargeFailed, "unavailable": topup.KindRechargeUnavailable}[c.recordStatus]
				if len(notes) != 1 || notes[0].(map[string]any)["kind"] != wantKind {
					t.Fatalf("notifications = %v, want one %s", notes, wantKind)
				}
				recips := notes[0].(map[string]any)["recipients"].([]any)
				if len(recips) != 2 || recips[0] != u.email || recips[1] != testOperations {
					t.Fatalf("recipients = %v, want the operator and operations", recips)
				}
			})
		}
		s.assertNoPassword(t)
	})
}

// TestRechargeRefusals: every 4xx of the endpoint, none reaching the carrier.
func TestRechargeRefusals(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		u := newUser("refused", PermCreate)
		good := rechargeBodyFor("593991234567")
		expired := func() string {
			tok, _ := signExpired(u)
			return tok
		}
		cases := []struct {
			name    string
			body    any
			headers func() map[string]string
			status  int
			errors  []string // fields named in errors (400)
		}{
			{"no credentials", good, func() map[string]string { return nil }, 401, nil},
			{"garbage token", good, func() map[string]string { return bearer("not.a.jwt") }, 401, nil},
			{"expired token", good, func() map[string]string { return bearer(expired()) }, 401, nil},
			{"service key", good, func() map[string]string { return serviceKey() }, 401, nil},
			{"no create_recargas", good, func() map[string]string { return newUser("v", PermView).recharge(t) }, 403, nil},
			{"no action token", good, func() map[string]string { return bearer(u.token(t)) }, 401, nil},
			{"action token of another user", good, func() map[string]string {
				h := bearer(u.token(t))
				h["X-Action-Token"] = newUser("other").actionToken(t)
				return h
			}, 401, nil},
			{"expired action token", good, func() map[string]string {
				h := bearer(u.token(t))
				h["X-Action-Token"] = expiredActionToken(t, u.sub)
				return h
			}, 401, nil},
			{"action token signed with the user secret", good, func() map[string]string {
				h := bearer(u.token(t))
				h["X-Action-Token"] = u.token(t)
				return h
			}, 401, nil},
			{"malformed JSON", `{"subscriber_id":`, func() map[string]string { return u.recharge(t) }, 400, nil},
			{"every rule broken", map[string]any{"subscriber_id": "0991234567", "offer_id": "", "quantity": 0, "external_operation": "RECARGA", "canton": "17"},
				func() map[string]string { return u.recharge(t) }, 400, []string{"subscriber_id", "offer_id", "quantity", "external_operation", "canton"}},
			{"empty body", map[string]any{}, func() map[string]string { return u.recharge(t) }, 400, []string{"subscriber_id", "offer_id", "quantity", "external_operation", "canton"}},
			{"quantity not an integer", map[string]any{"subscriber_id": "593991234567", "offer_id": "31", "quantity": 1.5, "external_operation": "RECARGA_PINES", "canton": "1701"},
				func() map[string]string { return u.recharge(t) }, 400, []string{"quantity"}},
			{"subscriber starting 5937", map[string]any{"subscriber_id": "593791234567", "offer_id": "31", "quantity": 1, "external_operation": "RECARGA_PINES", "canton": "1701"},
				func() map[string]string { return u.recharge(t) }, 400, []string{"subscriber_id"}},
			{"subscriber with blanks", map[string]any{"subscriber_id": " 593991234567 ", "offer_id": "31", "quantity": 1, "external_operation": "RECARGA_PINES", "canton": "1701"},
				func() map[string]string { return u.recharge(t) }, 400, []string{"subscriber_id"}},
			{"subscriber with a trailing newline", map[string]any{"subscriber_id": "593991234567\n", "offer_id": "31", "quantity": 1, "external_operation": "RECARGA_PINES", "canton": "1701"},
				func() map[string]string { return u.recharge(t) }, 400, []string{"subscriber_id"}},
			{"subscriber of 13 digits", map[string]any{"subscriber_id": "5939912345678", "offer_id": "31", "quantity": 1, "external_operation": "RECARGA_PINES", "canton": "1701"},
				func() map[string]string { return u.recharge(t) }, 400, []string{"subscriber_id"}},
			{"canton with blanks", map[string]any{"subscriber_id": "593991234567", "offer_id": "31", "quantity": 1, "external_operation": "RECARGA_PINES", "canton": " 1701"},
				func() map[string]string { return u.recharge(t) }, 400, []string{"canton"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				a := s.do("POST", rechargePath, c.body, c.headers()).expect(t, c.status)
				if a.str("status") != "error" || a.body["statusCode"] != float64(c.status) {
					t.Fatalf("not the envelope: %s", a.raw)
				}
				errs, _ := a.body["errors"].([]any)
				for _, f := range c.errors {
					found := false
					for _, e := range errs {
						found = found || strings.HasPrefix(e.(string), f+" ")
					}
					if !found {
						t.Fatalf("errors %v do not name %s", errs, f)
					}
				}
			})
		}
		t.Run("wrong content type", func(t *testing.T) {
			h := u.recharge(t)
			h["Content-Type"] = "text/plain"
			a := s.do("POST", rechargePath, "subscriber_id=1", h)
			if a.status < 400 || a.status >= 500 {
				t.Fatalf("status %d, want a 4xx", a.status)
			}
		})
		t.Run("reused action token", func(t *testing.T) {
			h := u.recharge(t)
			s.do("POST", rechargePath, good, h).expect(t, http.StatusCreated)
			a := s.do("POST", rechargePath, good, h).expect(t, http.StatusUnauthorized)
			if !strings.Contains(a.raw, "already used") {
				t.Fatalf("body %s", a.raw)
			}
		})
		if n := s.spr.Calls(carrier.FunctionTopup); n != 1 {
			t.Fatalf("%d top-ups reached the carrier, want only the one accepted", n)
		}
	})
}

// TestActionTokenUsedConcurrently: one action token on 10 concurrent requests is accepted once.
func TestActionTokenUsedConcurrently(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		h := newUser("racer", PermCreate).recharge(t)
		counts := concurrently(10, func(int) int {
			return s.do("POST", rechargePath, rechargeBodyFor("593991234567"), h).status
		})
		if counts[http.StatusCreated] != 1 || counts[http.StatusUnauthorized] != 9 {
			t.Fatalf("statuses %v, want one 201 and nine 401", counts)
		}
		if n := s.spr.Calls(carrier.FunctionTopup); n != 1 {
			t.Fatalf("%d carrier calls, want 1", n)
		}
	})
}

// TestDailyLimitConcurrently: a user one below RECARGAS_DAILY_LIMIT (default 50) sends 20
// concurrent requests; exactly one is admitted.
func TestDailyLimitConcurrently(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		u := newUser("daily", PermCreate)
		// 49 top-ups earlier today, written directly (the throttle would take ten minutes).
		earlier := s.clock.Now().Truncate(time.Millisecond)
		for i := range topup.DefaultDailyLimit - 1 {
			rec := &topup.Transaction{
				ID: uuid.Must(uuid.NewV7()), ExternalTransactionID: carrier.NewExternalTransactionID(), ExternalOperation: topup.OperationPines,
				Source: topup.SourceDashboard, SubscriberID: "593991234567", OfferID: "31", Quantity: 1, Canton: "1701",
				Status: topup.StatusSuccess, RequestedByUserID: u.sub, CreatedAt: earlier.Add(-time.Duration(i) * time.Microsecond).UTC(), UpdatedAt: earlier.UTC(),
			}
			if _, err := tg.DB.NewInsert().Model(rec).Exec(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		headers := make([]map[string]string, 20)
		for i := range headers {
			headers[i] = u.recharge(t)
		}
		counts := concurrently(20, func(i int) int {
			return s.do("POST", rechargePath, rechargeBodyFor("593991234567"), headers[i]).status
		})
		if counts[http.StatusCreated] != 1 || counts[http.StatusTooManyRequests] != 19 {
			t.Fatalf("statuses %v, want one 201 and nineteen 429", counts)
		}
		a := s.do("POST", rechargePath, rechargeBodyFor("593991234567"), u.recharge(t)).expect(t, http.StatusTooManyRequests)
		if !strings.Contains(a.raw, "Daily") {
			t.Fatalf("body %s, want the daily limit", a.raw)
		}
		// unlimited_recargas lifts it.
		unlimited := u
		unlimited.perms = []string{PermCreate, PermUnlimited}
		s.do("POST", rechargePath, rechargeBodyFor("593991234567"), unlimited.recharge(t)).expect(t, http.StatusCreated)
	})
}

// TestThrottleConcurrently: 20 concurrent requests of one user, each with its own action
// token: exactly 5 are admitted; the others get 429 with Retry-After.
func TestThrottleConcurrently(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		throttleRun(t, s, []*instance{s.instances[0]})
	})
}

// TestThrottleAcrossInstances: the same with two service instances on one PostgreSQL.
func TestThrottleAcrossInstances(t *testing.T) {
	s := newStack(t, storagetest.Postgres(t), nil)
	s.addInstance(nil)
	throttleRun(t, s, s.instances)
}

func throttleRun(t *testing.T, s *stack, instances []*instance) {
	u := newUser("busy", PermCreate, PermUnlimited)
	headers := make([]map[string]string, 20)
	for i := range headers {
		headers[i] = u.recharge(t)
	}
	var mu sync.Mutex
	var retryAfter []string
	counts := concurrently(20, func(i int) int {
		a := s.doOn(instances[i%len(instances)], "POST", rechargePath, rechargeBodyFor("593991234567"), headers[i])
		if a.status == http.StatusTooManyRequests {
			mu.Lock()
			retryAfter = append(retryAfter, a.header.Get("Retry-After"))
			mu.Unlock()
		}
		return a.status
	})
	if counts[http.StatusCreated] != 5 || counts[http.StatusTooManyRequests] != 15 {
		t.Fatalf("statuses %v, want five 201 and fifteen 429", counts)
	}
	for _, ra := range retryAfter {
		if ra == "" || ra == "0" {
			t.Fatalf("429 without a Retry-After: %q", retryAfter)
		}
	}
	if n := s.spr.Calls(carrier.FunctionTopup); n != 5 {
		t.Fatalf("%d carrier calls, want 5", n)
	}
	// Another user is not throttled by this one.
	s.do("POST", rechargePath, rechargeBodyFor("593991234567"), newUser("calm", PermCreate).recharge(t)).expect(t, http.StatusCreated)
	// A minute later the window has moved.
	s.clock.Advance(61 * time.Second)
	s.do("POST", rechargePath, rechargeBodyFor("593991234567"), u.recharge(t)).expect(t, http.StatusCreated)
}

// concurrently runs f(0..n-1) at once and counts the statuses.
func concurrently(n int, f func(i int) int) map[int]int {
	var (
		mu     sync.Mutex
		counts = map[int]int{}
		wg     sync.WaitGroup
		start  = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-start
			st := f(i)
			mu.Lock()
			counts[st]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return counts
}

// TestRechargeQuantityBounds: quantity is an integer from 1 to topup.MaxQuantity; a larger one
// is a 400 naming quantity on both databases (2147483648 was a 500 on PostgreSQL, whose
// column is INTEGER) and never reaches the carrier.
func TestRechargeQuantityBounds(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		u := newUser("quantities", PermCreate, PermView)
		for _, q := range []any{topup.MaxQuantity + 1, 2147483648, 99999999999, 1000000} {
			body := rechargeBodyFor("593991234567")
			body["quantity"] = q
			a := s.do("POST", rechargePath, body, u.recharge(t)).expect(t, http.StatusBadRequest)
			errs, _ := a.body["errors"].([]any)
			if len(errs) != 1 || !strings.HasPrefix(errs[0].(string), "quantity ") {
				t.Fatalf("quantity %v: body %s, want one error about quantity", q, a.raw)
			}
		}
		if n := s.spr.Calls(carrier.FunctionTopup); n != 0 {
			t.Fatalf("%d top-ups reached the carrier", n)
		}
		body := rechargeBodyFor("593991234567")
		body["quantity"] = topup.MaxQuantity
		a := s.do("POST", rechargePath, body, u.recharge(t)).expect(t, http.StatusCreated)
		if rec := s.transaction(t, a.str("transaction_id")); rec["quantity"] != float64(topup.MaxQuantity) ||
			!strings.Contains(rec["raw_request_xml"].(string), `<data name="QUANTITY">100</data>`) {
			t.Fatalf("record %v", rec)
		}
	})
}

// TestRechargeOversizedTokenClaims: claims the store cannot keep (a jti over 200 bytes, a
// subject over 100, a NUL in either) are an invalid action token, 401, on both databases,
// where PostgreSQL answered 500; an over-long or NUL-carrying username or e-mail does not
// refuse a valid request: the record keeps what fits.
func TestRechargeOversizedTokenClaims(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		userToken := func(c auth.Claims) string {
			c.Permissions, c.ExpiresAt = []string{PermCreate}, time.Now().Add(time.Hour)
			tok, err := auth.SignUserToken([]byte(testJWTSecret), c)
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}
		actionToken := func(sub, jti string) string {
			tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
				"sub": sub, "act": "recharge", "jti": jti, "exp": time.Now().Add(time.Minute).Unix(),
			}).SignedString([]byte(testActionSecret))
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}
		long := strings.Repeat("u", 101)
		for _, c := range []struct{ name, sub, jti string }{
			{"jti of 201 bytes", "claims-a", strings.Repeat("j", 201)},
			{"jti with a NUL", "claims-b", "jti\x00x"},
			{"subject of 101 bytes", long, "jti-long-sub"},
			{"subject with a NUL", "sub\x00x", "jti-nul-sub"},
		} {
			t.Run(c.name, func(t *testing.T) {
				h := map[string]string{"Authorization": "Bearer " + userToken(auth.Claims{Subject: c.sub}), "X-Action-Token": actionToken(c.sub, c.jti)}
				a := s.do("POST", rechargePath, rechargeBodyFor("593991234567"), h).expect(t, http.StatusUnauthorized)
				if a.str("status") != "error" {
					t.Fatalf("not the envelope: %s", a.raw)
				}
			})
		}
		if n := s.spr.Calls(carrier.FunctionTopup); n != 0 {
			t.Fatalf("%d top-ups reached the carrier", n)
		}
		t.Run("long username and e-mail", func(t *testing.T) {
			name := "op\x00" + strings.Repeat("n", 300)
			email := strings.Repeat("e", 250) + "@example.com"
			h := map[string]string{
				"Authorization":  "Bearer " + userToken(auth.Claims{Subject: "claims-ok", Username: name, Email: email}),
				"X-Action-Token": actionToken("claims-ok", "jti-claims-ok"),
			}
			a := s.do("POST", rechargePath, rechargeBodyFor("593991234567"), h).expect(t, http.StatusCreated)
			rec := s.transaction(t, a.str("transaction_id"))
			if rec["requested_by_user_id"] != "claims-ok" || rec["requested_by_username"] != "op"+strings.Repeat("n", 198) || rec["requested_by_email"] != nil {
				t.Fatalf("record %v", rec)
			}
		})
	})
}

// TestRechargeLongCarrierReply: whatever length the SPR gives ID_RECARGA, ID_CODIGO and the
// result attribute, the outcome is recorded and answered (201 success, 422 failed) on both
// databases. Before, PostgreSQL refused the write (VARCHAR(100)/(20)): a 500, and a top-up the
// carrier had made stayed pending.
func TestRechargeLongCarrierReply(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		u := newUser("long-reply", PermCreate)
		id, code, result := strings.Repeat("7", 150), strings.Repeat("9", 40), strings.Repeat("R", 150)
		reply := func(status, code, id string) string {
			return `<?xml version="1.0" encoding="UTF-8"?><umsprot version="1"><exec_rsp result="` + result + `" diagnostic="OK">` +
				`<data name="MENSAJE">m</data><data name="ID_RECARGA">` + id + `</data><data name="ID_CODIGO">` + code + `</data>` +
				`<data name="STATUS">` + status + `</data></exec_rsp></umsprot>`
		}
		s.spr.Script(carrier.FunctionTopup, carriertest.Raw(http.StatusOK, reply("SUCCESS", "0", id)), carriertest.Raw(http.StatusOK, reply("ERROR", code, "1")))

		a := s.do("POST", rechargePath, rechargeBodyFor("593991234567"), u.recharge(t)).expect(t, http.StatusCreated)
		if a.str("carrier_id_recarga") != id {
			t.Fatalf("body %s", a.raw)
		}
		if rec := s.transaction(t, a.str("transaction_id")); rec["status"] != "success" || rec["carrier_id_recarga"] != id || rec["carrier_result_code"] != result {
			t.Fatalf("record %v", rec)
		}
		a = s.do("POST", rechargePath, rechargeBodyFor("593991234567"), u.recharge(t)).expect(t, http.StatusUnprocessableEntity)
		if a.str("status") != "failed" || a.str("carrier_id_codigo") != code {
			t.Fatalf("body %s", a.raw)
		}
		if rec := s.transaction(t, a.str("transaction_id")); rec["status"] != "failed" || rec["carrier_id_codigo"] != code {
			t.Fatalf("record %v", rec)
		}
	})
}

// TestRechargeQuantityNumbers: quantity is a JSON number whose value is an integer: 1.0, 1e0
// and 2.00 are accepted as 1, 1 and 2 (before, 1.0 was a 400); a fraction, a string, a
// boolean, an extreme exponent or a value out of range is a 400 naming quantity, answered at
// once and never sent.
func TestRechargeQuantityNumbers(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, nil)
		cases := []struct {
			name, quantity string
			want           int // 0: refused
		}{
			{"1.0 is 1", `1.0`, 1},
			{"1e0 is 1", `1e0`, 1},
			{"2.00 is 2", `2.00`, 2},
			{"100.0 is the maximum", `100.0`, 100},
			{"1.5 is not an integer", `1.5`, 0},
			{"a string", `"1"`, 0},
			{"a boolean", `true`, 0},
			{"null", `null`, 0},
			{"0.0", `0.0`, 0},
			{"-1.0", `-1.0`, 0},
			{"101.0 is above the maximum", `101.0`, 0},
			{"huge exponent", `1e999999999`, 0},
			{"huge negative exponent", `1e-999999999`, 0},
		}
		sent := 0
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				u := newUser(fmt.Sprintf("qty-%d", i), PermCreate)
				body := `{"subscriber_id":"593991234567","offer_id":"31","quantity":` + c.quantity + `,"external_operation":"RECARGA_PINES","canton":"1701"}`
				start := time.Now()
				if c.want == 0 {
					a := s.do("POST", rechargePath, body, u.recharge(t)).expect(t, http.StatusBadRequest)
					errs, _ := a.body["errors"].([]any)
					if len(errs) != 1 || !strings.HasPrefix(errs[0].(string), "quantity ") {
						t.Fatalf("body %s, want one error about quantity", a.raw)
					}
					if d := time.Since(start); d > 2*time.Second {
						t.Fatalf("answered in %v", d)
					}
					return
				}
				sent++
				a := s.do("POST", rechargePath, body, u.recharge(t)).expect(t, http.StatusCreated)
				rec := s.transaction(t, a.str("transaction_id"))
				if rec["quantity"] != float64(c.want) || !strings.Contains(rec["raw_request_xml"].(string), fmt.Sprintf(`<data name="QUANTITY">%d</data>`, c.want)) {
					t.Fatalf("record quantity %v, want %d", rec["quantity"], c.want)
				}
			})
		}
		if n := s.spr.Calls(carrier.FunctionTopup); n != sent {
			t.Fatalf("%d top-ups reached the carrier, want %d", n, sent)
		}
	})
}

// TestMockModeOffers: in mock mode the built-in SPR knows the offers of its inventory and of the
// product mapping (a configured one included) and refuses any other with the carrier's
// business error, ID_CODIGO 1 "unknown offer": a manual top-up of offer 99 is failed (422).
func TestMockModeOffers(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := newStack(t, tg, map[string]string{
			"CARRIER_MOCK_MODE": "true",
			"RECARGAS_PRODUCTS": `[{"product_code":"RECCARRIER20","offer_id":"200","external_operation":"RECARGA_PINES","description":"Pin 20","amount":"20.00"}]`,
		})
		cases := []struct {
			name, offer  string
			status       int
			recordStatus string
			code         string // carrier_id_codigo
		}{
			{"an offer of the inventory", "31", http.StatusCreated, "success", "0"},
			{"an offer of the configured mapping", "200", http.StatusCreated, "success", "0"},
			{"an offer in neither", "99", http.StatusUnprocessableEntity, "failed", carriertest.CodeRejected},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				u := newUser("mock-"+c.offer, PermCreate)
				body := rechargeBodyFor("593991234567")
				body["offer_id"] = c.offer
				a := s.do("POST", rechargePath, body, u.recharge(t)).expect(t, c.status)
				if a.str("status") != c.recordStatus || a.str("carrier_id_codigo") != c.code {
					t.Fatalf("body %s, want status %s, carrier_id_codigo %s", a.raw, c.recordStatus, c.code)
				}
				if c.status != http.StatusCreated && a.str("error") != carriertest.MessageUnknownOffer {
					t.Fatalf("error %q, want %q", a.str("error"), carriertest.MessageUnknownOffer)
				}
			})
		}
		if n := s.spr.Calls(carrier.FunctionTopup); n != 0 {
			t.Fatalf("the loopback SPR got %d top-ups; mock mode must use the built-in one", n)
		}
	})
}
