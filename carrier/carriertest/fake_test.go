package carriertest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/upstream"
)

func topupXML(id, subscriber string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<umsprot version="1"><exec_req function="sre_topupd_76186">
<data name="EXTERNALOPERATION">RECARGA_PINES</data>
<data name="EXTERNALTRANSACTIONID">` + id + `</data>
<data name="OFFERID">31</data>
<data name="SUBSCRIBERID">` + subscriber + `</data>
<data name="QUANTITY">1</data>
</exec_req></umsprot>`
}

func post(ctx context.Context, t *testing.T, url, body string) (int, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/xml")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// The magic subscribers work from any HTTP client, without the carrier
// package: the design's table, row by row.
func TestMagicSubscribersFromPlainHTTP(t *testing.T) {
	tests := []struct {
		subscriber string
		status     int      // 0: no answer before the caller gives up
		contains   []string // in the answer body
		ledger     string
	}{
		{carriertest.SubscriberNoBalance, 200, []string{`<data name="STATUS">ERROR</data>`, `<data name="ID_CODIGO">1</data>`, "no balance"}, carrier.StatusError},
		{carriertest.SubscriberIPNotAuthorized, 500, []string{"<faultcode>350</faultcode>", "<faultstring>IP address not authorized</faultstring>"}, ""},
		{carriertest.SubscriberTimeout, 0, nil, ""},
		{carriertest.SubscriberLateSuccess, 0, nil, carrier.StatusSuccess},
		{"593987654321", 200, []string{`<data name="STATUS">SUCCESS</data>`, `<data name="ID_CODIGO">0</data>`, `<data name="ID_RECARGA">700000001</data>`}, carrier.StatusSuccess},
	}
	for _, tt := range tests {
		t.Run(tt.subscriber, func(t *testing.T) {
			t.Parallel()
			srv := carriertest.NewServer()
			defer srv.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			status, body, err := post(ctx, t, srv.URL, topupXML("PLAIN-1", tt.subscriber))
			if tt.status == 0 {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("got HTTP %d %q, %v; want no answer before the deadline", status, body, err)
				}
			} else {
				if err != nil || status != tt.status {
					t.Fatalf("got HTTP %d, %v; want %d", status, err, tt.status)
				}
				for _, s := range tt.contains {
					if !strings.Contains(body, s) {
						t.Errorf("answer lacks %s:\n%s", s, body)
					}
				}
			}
			if e, _ := srv.Entry("PLAIN-1"); e.Status != tt.ledger {
				t.Errorf("ledger status %q, want %q", e.Status, tt.ledger)
			}
		})
	}
}

func TestMalformedCalls(t *testing.T) {
	srv := carriertest.NewServer()
	defer srv.Close()
	tests := []struct {
		name     string
		body     string
		status   int
		contains string
	}{
		{"not XML", "hello", 500, "<faultcode>Client</faultcode>"},
		{"wrong version", `<umsprot version="2"><exec_req function="sre_topupd_76186"/></umsprot>`, 500, "<faultcode>Client</faultcode>"},
		{"unknown function", `<umsprot version="1"><exec_req function="sre_borrar_todo"/></umsprot>`, 500, "unknown function"},
		{"missing QUANTITY", strings.Replace(topupXML("M-1", "593987654321"), `<data name="QUANTITY">1</data>`, "", 1), 200, `<data name="ID_CODIGO">2</data>`},
		{"QUANTITY zero", strings.Replace(topupXML("M-2", "593987654321"), `>1</data>`, `>0</data>`, 1), 200, `<data name="ID_CODIGO">2</data>`},
		{"invalid number", topupXML("M-3", "0991234567"), 200, `<data name="ID_CODIGO">3</data>`},
		{"fixed-line number", topupXML("M-4", "593212345678"), 200, `<data name="ID_CODIGO">3</data>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, err := post(t.Context(), t, srv.URL, tt.body)
			if err != nil || status != tt.status || !strings.Contains(body, tt.contains) {
				t.Errorf("got HTTP %d %v:\n%s\nwant %d with %s", status, err, body, tt.status, tt.contains)
			}
		})
	}
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET answered %d", resp.StatusCode)
	}
	if e, ok := srv.Entry("M-3"); !ok || e.IDCodigo != carriertest.CodeInvalidNumber {
		t.Errorf("invalid number not recorded as refused: %+v", e)
	}
	if _, ok := srv.Entry("M-1"); ok {
		t.Error("an unreadable top-up was recorded")
	}
}

// Fifty concurrent top-ups with one id top up once and all get the same
// answer.
func TestConcurrentRepeatsTopUpOnce(t *testing.T) {
	c, fake, err := carriertest.NewMock(carrier.Config{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	before, _ := fake.Stock("31")
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		ids = map[string]int{}
	)
	for range 50 {
		wg.Go(func() {
			res, err := c.Topup(t.Context(), carrier.TopupRequest{
				ExternalOperation: carrier.ExternalOperationPins, ExternalTransactionID: "SAME-ID",
				OfferID: "31", SubscriberID: "593987654321", Quantity: 1,
			})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			ids[res.IDRecarga]++
			mu.Unlock()
		})
	}
	wg.Wait()
	after, _ := fake.Stock("31")
	if len(ids) != 1 || before.Available-after.Available != 1 {
		t.Errorf("ID_RECARGA values %v, stock %d -> %d: want one top-up", ids, before.Available, after.Available)
	}
	if e, _ := fake.Entry("SAME-ID"); e.Calls != 50 || fake.Calls(carrier.FunctionTopup) != 50 {
		t.Errorf("entry %+v, fake calls %d", e, fake.Calls(carrier.FunctionTopup))
	}
}

func TestScriptOrderAndSubscribers(t *testing.T) {
	c, fake, err := carriertest.NewMock(carrier.Config{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	fake.Script(carrier.FunctionTopup, carriertest.BusinessError("7", "first"), carriertest.Fault("soap:Server", "second"))
	fake.ScriptSubscriber(carriertest.SubscriberNoBalance, carriertest.Process())
	fake.ScriptSubscriber("593911111111", carriertest.BusinessError("9", "blocked line"))
	tests := []struct {
		id, subscriber string
		check          func(error) bool
	}{
		{"S-1", "593987654321", func(err error) bool { var be *carrier.Error; return errors.As(err, &be) && be.Code == "7" }},
		{"S-2", "593987654321", func(err error) bool { var fe *carrier.FaultError; return errors.As(err, &fe) && fe.String == "second" }},
		{"S-3", "593987654321", func(err error) bool { return err == nil }},
		{"S-4", carriertest.SubscriberNoBalance, func(err error) bool { return err == nil }},
		{"S-5", "593911111111", func(err error) bool { var be *carrier.Error; return errors.As(err, &be) && be.Code == "9" }},
		{"S-5", "593911111111", func(err error) bool { var be *carrier.Error; return errors.As(err, &be) && be.Code == "9" }},
	}
	for i, tt := range tests {
		_, err := c.Topup(t.Context(), carrier.TopupRequest{ExternalOperation: carrier.ExternalOperationPins, ExternalTransactionID: tt.id, OfferID: "31", SubscriberID: tt.subscriber, Quantity: 1})
		if !tt.check(err) {
			t.Errorf("call %d (%s): unexpected %v", i, tt.id, err)
		}
	}
	if e, _ := fake.Entry("S-5"); e.Calls != 2 || e.IDCodigo != "9" {
		t.Errorf("S-5 entry %+v", e)
	}
	if _, ok := fake.Entry("S-2"); ok {
		t.Error("a faulted call was recorded")
	}
}

// Mock mode needs no network: the configured address is never dialled.
func TestNewMockWithoutNetwork(t *testing.T) {
	cfg := carrier.Config{
		URL:  "http://127.0.0.1:1/spr", // nothing listens there
		User: "u", Password: "p", CompanyID: "c", Timeout: 300 * time.Millisecond,
		OAuth2: &carrier.OAuth2Config{TokenURL: "https://auth.invalid/token", ClientID: "cid", ClientSecret: "cs"},
	}
	c, fake, err := carriertest.NewMock(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	req := carrier.TopupRequest{ExternalOperation: carrier.ExternalOperationData, ExternalTransactionID: "MOCK-1", OfferID: "150", SubscriberID: "593987654321", Quantity: 1}
	if _, err := c.Topup(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if _, err := c.QueryRecharge(t.Context(), carrier.QueryRequest{ExternalTransactionID: "MOCK-1", OfferID: "150"}); err != nil {
		t.Fatal(err)
	}
	if n := fake.TokensIssued(); n != 1 {
		t.Errorf("%d tokens issued, want 1", n)
	}

	req.ExternalTransactionID, req.SubscriberID = "MOCK-2", carriertest.SubscriberTimeout
	if _, err := c.Topup(t.Context(), req); !carrier.IsTimeout(err) {
		t.Errorf("hang in mock mode: %v, want a timeout", err)
	}
	req.ExternalTransactionID, req.SubscriberID = "MOCK-3", carriertest.SubscriberLateSuccess
	if _, err := c.Topup(t.Context(), req); !carrier.IsTimeout(err) {
		t.Errorf("late success in mock mode: %v, want a timeout", err)
	}
	if e, _ := fake.Entry("MOCK-3"); e.Status != carrier.StatusSuccess {
		t.Errorf("late success not in the ledger: %+v", e)
	}
	fake.Script(carrier.FunctionTopup, carriertest.Drop())
	req.ExternalTransactionID, req.SubscriberID = "MOCK-4", "593987654321"
	if _, err := c.Topup(t.Context(), req); !errors.Is(err, carriertest.ErrConnectionDropped) || carrier.IsTimeout(err) || upstream.KindOf(err) != upstream.OutcomeUnknown {
		t.Errorf("drop in mock mode: %v (kind %v), want a dropped connection, outcome unknown", err, upstream.KindOf(err))
	}
}

func TestCloseReleasesHeldCalls(t *testing.T) {
	c, fake, err := carriertest.NewMock(carrier.Config{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Topup(context.Background(), carrier.TopupRequest{ExternalOperation: carrier.ExternalOperationPins, ExternalTransactionID: "HELD-1", OfferID: "31", SubscriberID: carriertest.SubscriberTimeout, Quantity: 1})
		done <- err
	}()
	for fake.Calls(carrier.FunctionTopup) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	fake.Close()
	select {
	case err := <-done:
		if !errors.Is(err, carriertest.ErrConnectionDropped) {
			t.Errorf("err = %v, want a dropped connection", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not release the held call")
	}
}

func TestServerClosesWithHeldCalls(t *testing.T) {
	srv := carriertest.NewServer()
	errc := make(chan error, 1)
	go func() {
		_, _, err := post(context.Background(), t, srv.URL, topupXML("HELD-2", carriertest.SubscriberTimeout))
		errc <- err
	}()
	for srv.Calls(carrier.FunctionTopup) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Server.Close blocked on a held request")
	}
	if err := <-errc; err == nil {
		t.Error("the held request got an answer")
	}
}

func ExampleNewMock() {
	// CARRIER_MOCK_MODE=true: the client runs against an in-process fake.
	c, fake, err := carriertest.NewMock(carrier.Config{User: "spr-user", Password: "mock-password", CompanyID: "1790000000001", Timeout: time.Second})
	if err != nil {
		panic(err)
	}
	defer fake.Close()
	ctx := context.Background()
	req := carrier.TopupRequest{ExternalOperation: carrier.ExternalOperationPins, ExternalTransactionID: "MOCK0001", OfferID: "31", SubscriberID: carriertest.SubscriberNoBalance, Quantity: 1}
	_, err = c.Topup(ctx, req)
	fmt.Println(upstream.KindOf(err), err)

	req.ExternalTransactionID, req.SubscriberID = "MOCK0002", "593987654321"
	res, err := c.Topup(ctx, req)
	fmt.Println(err, res.IDRecarga)

	res, err = c.QueryRecharge(ctx, carrier.QueryRequest{ExternalTransactionID: "MOCK0002", OfferID: "31"})
	fmt.Println(err, res.Status, res.Mensaje)
	entry, _ := fake.Entry("MOCK0002")
	fmt.Println(fake.Calls(carrier.FunctionTopup), entry.Status, entry.IDRecarga)
	// Output:
	// rejected carrier: sre_topupd_76186: STATUS=ERROR ID_CODIGO=1: no balance (SPR code 1: no balance)
	// <nil> 700000001
	// <nil> SUCCESS top-up found
	// 2 SUCCESS 700000001
}

// A nil Option is ignored and the others still apply, as carrier.New does with its options.
func TestNilOptionIgnored(t *testing.T) {
	f := carriertest.NewFake(nil, carriertest.WithStock("99", "Pin 99", 7), nil)
	defer f.Close()
	if s, ok := f.Stock("99"); !ok || s.Available != 7 {
		t.Errorf("Stock(99) = %+v, %t", s, ok)
	}
}

// An offer the fake's inventory does not hold is refused as a business error, ID_CODIGO 1
// "unknown offer" (the code the specification gives the carrier's refusals of a product), and
// recorded, so the query says the same; an offer added to the inventory tops up.
func TestTopupOfAnOfferOutsideTheInventory(t *testing.T) {
	tests := []struct {
		name, offer string
		stock       bool   // SetStock adds the offer first
		code        string // "" for a success
	}{
		{"an offer of the default inventory", "31", false, ""},
		{"an offer nobody added", "99", false, carriertest.CodeRejected},
		{"an offer added to the inventory", "99", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, fake, err := carriertest.NewMock(carrier.Config{Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			if tt.stock {
				fake.SetStock(tt.offer, "Pin 99", 5)
			}
			req := carrier.TopupRequest{ExternalOperation: carrier.ExternalOperationPins, ExternalTransactionID: "OFFER-" + tt.offer, OfferID: tt.offer, SubscriberID: "593987654321", Quantity: 1}
			_, err = c.Topup(t.Context(), req)
			entry, _ := fake.Entry(req.ExternalTransactionID)
			if tt.code == "" {
				if err != nil || entry.Status != carrier.StatusSuccess {
					t.Fatalf("offer %s: %v, ledger %+v; want a success", tt.offer, err, entry)
				}
				return
			}
			var be *carrier.Error
			if !errors.As(err, &be) || be.Code != tt.code || be.Message != carriertest.MessageUnknownOffer || upstream.KindOf(err) != upstream.Rejected {
				t.Fatalf("offer %s: err = %v, want STATUS=ERROR ID_CODIGO %s %q", tt.offer, err, tt.code, carriertest.MessageUnknownOffer)
			}
			if entry.Status != carrier.StatusError || entry.IDCodigo != tt.code {
				t.Fatalf("ledger %+v, want the refusal recorded", entry)
			}
			res, err := c.QueryRecharge(t.Context(), carrier.QueryRequest{ExternalTransactionID: req.ExternalTransactionID, OfferID: tt.offer})
			if !errors.As(err, &be) || res.Mensaje != carriertest.MessageUnknownOffer {
				t.Fatalf("query of the refused top-up: %v (%q), want the recorded refusal", err, res.Mensaje)
			}
		})
	}
}
