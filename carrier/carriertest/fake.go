package carriertest

import (
	"context"
	"crypto/subtle"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/internal/umsprot"
)

// Magic subscribers: a top-up for one of them gets the outcome its name
// says, from any HTTP client, without scripting.
const (
	// SubscriberNoBalance answers STATUS=ERROR, ID_CODIGO 1, "no balance":
	// a *carrier.Error, kind upstream.Rejected.
	SubscriberNoBalance = "593990000001"
	// SubscriberIPNotAuthorized answers a SOAP fault with faultcode 350 in
	// HTTP 500: carrier.ErrIPNotAuthorized, kind upstream.Fault.
	SubscriberIPNotAuthorized = "593990000002"
	// SubscriberTimeout never answers; the caller times out. Nothing is
	// committed.
	SubscriberTimeout = "593990000003"
	// SubscriberLateSuccess commits the top-up as SUCCESS and then holds the
	// connection without answering until the caller gives up.
	SubscriberLateSuccess = "593990000004"
)

// ID_CODIGO values the fake answers. The specification names only 0 and,
// for the query, 1; the others are the fake's.
const (
	CodeSuccess        = "0"
	CodeRejected       = "1" // no balance, invalid credentials, not found, wrong product, unknown offer
	CodeInvalidRequest = "2" // a data element missing or unreadable
	CodeInvalidNumber  = "3" // SUBSCRIBERID not ^593[89]\d{8}$
	CodeDuplicateID    = "4" // EXTERNALTRANSACTIONID reused with different data
	CodeOutOfStock     = "5" // the offer's CANTIDAD is below QUANTITY
)

// MENSAJE texts the fake answers.
const (
	MessageApplied             = "top-up applied"
	MessageFound               = "top-up found"
	MessageInventory           = "inventory"
	MessageNoBalance           = "no balance"
	MessageInvalidCredentials  = "invalid credentials"
	MessageNotFound            = "transaction not found"
	MessageWrongProduct        = "wrong product for the query"
	MessageInvalidNumber       = "invalid subscriber number"
	MessageDuplicateID         = "EXTERNALTRANSACTIONID already used with different data"
	MessageOutOfStock          = "offer out of stock"
	MessageUnknownOffer        = "unknown offer"
	FaultStringIPNotAuthorized = "IP address not authorized"
)

// TokenPath is where a fake configured WithOAuth2 issues tokens.
const TokenPath = "/oauth/token"

var subscriberPattern = regexp.MustCompile(`^593[89]\d{8}$`)

// Entry is the ledger's record of one EXTERNALTRANSACTIONID.
type Entry struct {
	ExternalTransactionID string
	ExternalOperation     string
	OfferID               string
	SubscriberID          string
	Quantity              int
	Status                string // SUCCESS or ERROR
	IDCodigo              string
	IDRecarga             string // set on SUCCESS
	Mensaje               string
	// Calls counts the top-up calls that carried this id, the first included.
	// Only the first one acted.
	Calls int
}

// Stock is the inventory of one offer.
type Stock struct {
	OfferID     string
	Description string
	Available   int64
}

// Option configures a Fake. A nil Option is ignored, as the clients' New does.
type Option func(*Fake)

// WithCredentials makes sre_consulta_recarga and sre_consulta_inventario
// check USERID, PASSWORD and COMPANYID; a mismatch answers STATUS=ERROR,
// ID_CODIGO 1, "invalid credentials". Without it any credentials pass.
func WithCredentials(user, password, companyID string) Option {
	return func(f *Fake) { f.creds = &[3]string{user, password, companyID} }
}

// WithOAuth2 makes the fake issue client-credentials tokens at TokenPath,
// valid for lifetime, and refuse SPR calls without a valid one with HTTP 401.
func WithOAuth2(clientID, clientSecret string, lifetime time.Duration) Option {
	return func(f *Fake) { f.oauth = &oauthConfig{id: clientID, secret: clientSecret, lifetime: lifetime} }
}

// WithStock sets the stock of an offer, adding it to the inventory if new.
// A top-up of an offer that is not in the inventory is refused (ID_CODIGO 1,
// MessageUnknownOffer).
func WithStock(offerID, description string, available int64) Option {
	return func(f *Fake) { f.setStock(offerID, description, available) }
}

type oauthConfig struct {
	id, secret string
	lifetime   time.Duration
}

// Fake is an in-memory SPR. It is an http.Handler; NewServer puts it on
// loopback and Transport runs it in the caller's process. Safe for
// concurrent use.
type Fake struct {
	mu          sync.Mutex
	creds       *[3]string
	oauth       *oauthConfig
	tokens      map[string]time.Time
	issued      int
	ledger      map[string]*Entry
	stock       []*Stock
	subscribers map[string]Reaction
	scripts     map[string][]Reaction
	calls       map[string]int
	seq         int
	done        chan struct{}
	closeOnce   sync.Once
}

// NewFake returns a fake SPR with the default inventory (offers 31 "Pin 3",
// 30 "Pin 5", 151 "Pin 10" and 150 "Datos", 1000 units each) and the magic
// subscribers.
func NewFake(opts ...Option) *Fake {
	f := &Fake{
		tokens:  map[string]time.Time{},
		ledger:  map[string]*Entry{},
		scripts: map[string][]Reaction{},
		calls:   map[string]int{},
		done:    make(chan struct{}),
		subscribers: map[string]Reaction{
			SubscriberNoBalance:       BusinessError(CodeRejected, MessageNoBalance),
			SubscriberIPNotAuthorized: Fault("350", FaultStringIPNotAuthorized),
			SubscriberTimeout:         Hang(),
			SubscriberLateSuccess:     LateSuccess(),
		},
	}
	f.setStock("31", "Pin 3", 1000)
	f.setStock("30", "Pin 5", 1000)
	f.setStock("151", "Pin 10", 1000)
	f.setStock("150", "Datos", 1000)
	for _, o := range opts {
		if o != nil {
			o(f)
		}
	}
	return f
}

func (f *Fake) setStock(offerID, description string, available int64) {
	for _, s := range f.stock {
		if s.OfferID == offerID {
			s.Description, s.Available = description, available
			return
		}
	}
	f.stock = append(f.stock, &Stock{OfferID: offerID, Description: description, Available: available})
}

// Close releases every held request. The fake answers nothing afterwards
// that it was holding.
func (f *Fake) Close() { f.closeOnce.Do(func() { close(f.done) }) }

// Script queues reactions for the next calls of function (for example
// carrier.FunctionTopup), one per call, in order, before anything else the
// fake would do.
func (f *Fake) Script(function string, reactions ...Reaction) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scripts[function] = append(f.scripts[function], reactions...)
}

// ScriptSubscriber sets the reaction to every new top-up of subscriberID,
// replacing a magic one. A repeated EXTERNALTRANSACTIONID still answers its
// original result.
func (f *Fake) ScriptSubscriber(subscriberID string, r Reaction) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.subscribers[subscriberID] = r
}

// Calls returns how many calls of function the fake received (after the
// OAuth2 check, when configured), whatever it did with them.
func (f *Fake) Calls(function string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[function]
}

// Entry returns the ledger's record of an EXTERNALTRANSACTIONID.
func (f *Fake) Entry(externalTransactionID string) (Entry, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.ledger[externalTransactionID]
	if !ok {
		return Entry{}, false
	}
	return *e, true
}

// SetStock sets the stock of an offer, as WithStock does, at any time.
func (f *Fake) SetStock(offerID, description string, available int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setStock(offerID, description, available)
}

// Stock returns the inventory of an offer.
func (f *Fake) Stock(offerID string) (Stock, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.stock {
		if s.OfferID == offerID {
			return *s, true
		}
	}
	return Stock{}, false
}

// TokensIssued returns how many OAuth2 tokens the fake issued.
func (f *Fake) TokensIssued() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.issued
}

// action is what the handler writes, or holds, or drops.
type action struct {
	status int
	body   []byte
	hold   bool
	drop   bool
	gate   *Gate // the answer waits for it (Until)
}

// ServeHTTP answers SPR documents POSTed to any path, and token requests at
// TokenPath when configured WithOAuth2.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.oauth != nil && r.URL.Path == TokenPath {
		f.serveToken(w, r)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "POST an umsprot document", http.StatusMethodNotAllowed)
		return
	}
	if f.oauth != nil && !f.validBearer(r.Header.Get("Authorization")) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		http.Error(w, "invalid or missing bearer token", http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, carrier.MaxAnswerSize))
	if err != nil {
		return
	}
	var a action
	req, err := umsprot.DecodeRequest(body)
	if err != nil {
		a = faultAction(Fault("Client", "malformed umsprot document: "+err.Error()))
	} else {
		f.mu.Lock()
		f.calls[req.Function]++
		f.mu.Unlock()
		a = f.handle(r.Context(), req)
	}
	if a.gate != nil {
		a.gate.reach()
		select {
		case <-a.gate.open:
			if a.hold {
				// The gate ends a hold as a dropped connection.
				panic(http.ErrAbortHandler)
			}
		case <-r.Context().Done():
			panic(http.ErrAbortHandler)
		case <-f.done:
			panic(http.ErrAbortHandler)
		}
	}
	switch {
	case a.hold:
		select {
		case <-r.Context().Done():
		case <-f.done:
		}
		panic(http.ErrAbortHandler)
	case a.drop:
		panic(http.ErrAbortHandler)
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

func (f *Fake) handle(ctx context.Context, req *umsprot.Request) action {
	f.mu.Lock()
	r := Process()
	if q := f.scripts[req.Function]; len(q) > 0 {
		r, f.scripts[req.Function] = q[0], q[1:]
	}
	f.mu.Unlock()
	return f.apply(ctx, r, req, true)
}

func (f *Fake) apply(ctx context.Context, r Reaction, req *umsprot.Request, bySubscriber bool) action {
	if r.after > 0 {
		select {
		case <-time.After(r.after):
		case <-f.done:
			return action{drop: true}
		}
	}
	a := f.react(ctx, r, req, bySubscriber)
	if r.gate != nil {
		// A subscriber's gate, set in the inner apply, survives an
		// ungated scripted Process around it.
		a.gate = r.gate
	}
	return a
}

func (f *Fake) react(ctx context.Context, r Reaction, req *umsprot.Request, bySubscriber bool) action {
	switch r.kind {
	case kindHang:
		return action{hold: true}
	case kindDrop:
		return action{drop: true}
	case kindFault:
		return faultAction(r)
	case kindRaw:
		return action{status: r.status, body: []byte(r.text)}
	case kindBusinessError:
		e := errorEntry(r.code, r.text)
		if req.Function == carrier.FunctionTopup {
			if t, ok := parseTopup(req); ok {
				// Recorded when the id is new, so that the query and a
				// repeat agree with what the caller was told.
				f.commit(t, "", e)
			}
		}
		return answer(e)
	case kindLateSuccess:
		a := f.process(ctx, req, bySubscriber)
		a.hold = true
		return a
	default:
		return f.process(ctx, req, bySubscriber)
	}
}

func (f *Fake) process(ctx context.Context, req *umsprot.Request, bySubscriber bool) action {
	switch req.Function {
	case carrier.FunctionTopup:
		return f.topup(ctx, req, bySubscriber)
	case carrier.FunctionQueryRecharge:
		return f.query(req)
	case carrier.FunctionQueryInventory:
		return f.inventory(req)
	default:
		return faultAction(Fault("Client", "unknown function "+req.Function))
	}
}

func (f *Fake) topup(ctx context.Context, req *umsprot.Request, bySubscriber bool) action {
	t, ok := parseTopup(req)
	if !ok {
		return answer(errorEntry(CodeInvalidRequest, "EXTERNALOPERATION, EXTERNALTRANSACTIONID, OFFERID, SUBSCRIBERID and QUANTITY are required"))
	}
	if bySubscriber {
		f.mu.Lock()
		sr, scripted := f.subscribers[t.SubscriberID]
		_, known := f.ledger[t.ExternalTransactionID]
		f.mu.Unlock()
		if scripted && !known {
			return f.apply(ctx, sr, req, false)
		}
	}
	var outcome Entry
	switch {
	case !subscriberPattern.MatchString(t.SubscriberID):
		outcome = errorEntry(CodeInvalidNumber, MessageInvalidNumber)
	case !f.offers(t.OfferID):
		outcome = errorEntry(CodeRejected, MessageUnknownOffer)
	default:
		outcome = Entry{Status: carrier.StatusSuccess, IDCodigo: CodeSuccess, Mensaje: MessageApplied}
	}
	return f.commit(t, t.OfferID, outcome)
}

// offers reports whether the inventory holds offerID.
func (f *Fake) offers(offerID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.stock {
		if s.OfferID == offerID {
			return true
		}
	}
	return false
}

// commit records the outcome of a new id and answers it; a known id answers
// its original result and changes nothing. takeStock names the offer whose
// stock a success consumes.
func (f *Fake) commit(t Entry, takeStock string, outcome Entry) action {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.ledger[t.ExternalTransactionID]; ok {
		if e.ExternalOperation != t.ExternalOperation || e.OfferID != t.OfferID ||
			e.SubscriberID != t.SubscriberID || e.Quantity != t.Quantity {
			return answer(errorEntry(CodeDuplicateID, MessageDuplicateID))
		}
		e.Calls++
		return answer(*e)
	}
	if outcome.Status == carrier.StatusSuccess && takeStock != "" {
		for _, s := range f.stock {
			if s.OfferID != takeStock {
				continue
			}
			if s.Available < int64(t.Quantity) {
				outcome = errorEntry(CodeOutOfStock, MessageOutOfStock)
				break
			}
			s.Available -= int64(t.Quantity)
		}
	}
	if outcome.Status == carrier.StatusSuccess {
		f.seq++
		outcome.IDRecarga = strconv.Itoa(700000000 + f.seq)
	}
	e := t
	e.Status, e.IDCodigo, e.IDRecarga, e.Mensaje, e.Calls = outcome.Status, outcome.IDCodigo, outcome.IDRecarga, outcome.Mensaje, 1
	f.ledger[e.ExternalTransactionID] = &e
	return answer(e)
}

func parseTopup(req *umsprot.Request) (Entry, bool) {
	var e Entry
	fields := []struct {
		name string
		dst  *string
	}{
		{"EXTERNALOPERATION", &e.ExternalOperation},
		{"EXTERNALTRANSACTIONID", &e.ExternalTransactionID},
		{"OFFERID", &e.OfferID},
		{"SUBSCRIBERID", &e.SubscriberID},
	}
	for _, fl := range fields {
		v, _ := req.Value(fl.name)
		*fl.dst = strings.TrimSpace(v)
		if *fl.dst == "" {
			return e, false
		}
	}
	if e.ExternalOperation != carrier.ExternalOperationData && e.ExternalOperation != carrier.ExternalOperationPins {
		return e, false
	}
	q, _ := req.Value("QUANTITY")
	n, err := strconv.Atoi(strings.TrimSpace(q))
	if err != nil || n < 1 {
		return e, false
	}
	e.Quantity = n
	return e, true
}

func (f *Fake) credentialsOK(req *umsprot.Request) bool {
	if f.creds == nil {
		return true
	}
	ok := true
	for i, name := range []string{"USERID", "PASSWORD", "COMPANYID"} {
		v, _ := req.Value(name)
		ok = subtle.ConstantTimeCompare([]byte(v), []byte(f.creds[i])) == 1 && ok
	}
	return ok
}

func (f *Fake) query(req *umsprot.Request) action {
	if !f.credentialsOK(req) {
		return answer(errorEntry(CodeRejected, MessageInvalidCredentials))
	}
	id, _ := req.Value("EXTERNALTRANSACTIONID")
	offer, _ := req.Value("OFFERID")
	id, offer = strings.TrimSpace(id), strings.TrimSpace(offer)
	if id == "" || offer == "" {
		return answer(errorEntry(CodeInvalidRequest, "EXTERNALTRANSACTIONID and OFFERID are required"))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.ledger[id]
	switch {
	case !ok:
		return answer(errorEntry(CodeRejected, MessageNotFound))
	case e.OfferID != offer:
		return answer(errorEntry(CodeRejected, MessageWrongProduct))
	case e.Status == carrier.StatusSuccess:
		found := *e
		found.Mensaje = MessageFound
		return answer(found)
	default:
		return answer(*e)
	}
}

func (f *Fake) inventory(req *umsprot.Request) action {
	if !f.credentialsOK(req) {
		return answer(errorEntry(CodeRejected, MessageInvalidCredentials))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	data := statusData(Entry{Status: carrier.StatusSuccess, IDCodigo: CodeSuccess, Mensaje: MessageInventory})
	for _, s := range f.stock {
		data = append(data,
			umsprot.Data{Name: "OFFERID", Value: s.OfferID},
			umsprot.Data{Name: "DESCRIPCION", Value: s.Description},
			umsprot.Data{Name: "CANTIDAD", Value: strconv.FormatInt(s.Available, 10)},
		)
	}
	return respond(data)
}

func errorEntry(code, message string) Entry {
	return Entry{Status: carrier.StatusError, IDCodigo: code, Mensaje: message}
}

// statusData lays out the status elements in the specification's order.
func statusData(e Entry) []umsprot.Data {
	system := "OK"
	if e.Status != carrier.StatusSuccess {
		system = "SPR code " + e.IDCodigo + ": " + e.Mensaje
	}
	data := []umsprot.Data{
		{Name: "MENSAJE", Value: e.Mensaje},
		{Name: "SYSTEMMESSAGE", Value: system},
	}
	if e.IDRecarga != "" {
		data = append(data, umsprot.Data{Name: "ID_RECARGA", Value: e.IDRecarga})
	}
	return append(data,
		umsprot.Data{Name: "ID_CODIGO", Value: e.IDCodigo},
		umsprot.Data{Name: "STATUS", Value: e.Status},
	)
}

func answer(e Entry) action { return respond(statusData(e)) }

// respond wraps data in an exec_rsp. result "0" and diagnostic "OK" say the
// function ran; STATUS says how it went.
func respond(data []umsprot.Data) action {
	b, err := umsprot.MarshalResponse(umsprot.Response{Result: "0", Diagnostic: "OK", Data: data})
	if err != nil {
		return faultAction(Fault("Server", err.Error()))
	}
	return action{status: http.StatusOK, body: b}
}

func faultAction(r Reaction) action {
	b, err := umsprot.MarshalFault(umsprot.Fault{Code: r.code, String: r.text})
	if err != nil {
		return action{status: http.StatusInternalServerError, body: []byte(err.Error())}
	}
	status := r.status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	return action{status: status, body: b}
}

func (f *Fake) serveToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.ParseForm() != nil || r.PostForm.Get("grant_type") != "client_credentials" {
		writeJSONError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if subtle.ConstantTimeCompare([]byte(id), []byte(f.oauth.id)) != 1 ||
		subtle.ConstantTimeCompare([]byte(secret), []byte(f.oauth.secret)) != 1 {
		writeJSONError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	f.mu.Lock()
	f.issued++
	token := fmt.Sprintf("fake-token-%d", f.issued)
	f.tokens[token] = time.Now().Add(f.oauth.lifetime)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":%d}`, token, int(f.oauth.lifetime/time.Second))
}

func writeJSONError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":%q}`, code)
}

func (f *Fake) validBearer(header string) bool {
	token, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	exp, ok := f.tokens[token]
	return ok && time.Now().Before(exp)
}
