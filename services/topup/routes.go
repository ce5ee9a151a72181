package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/internal/idempotency"
	"github.com/platform/integrations/topup"
)

// Prefix of every endpoint of the specification.
const Prefix = "/api/v1/recargas"

// Permissions of the user token.
const (
	PermCreate    = "create_recargas"
	PermView      = "view_recargas"
	PermUnlimited = "unlimited_recargas"
)

// routes mounts the endpoints with their authentication (the table is in doc.go). Every error
// is answered by mapError (errors.go).
func routes(app *fiber.App, h *handlers, authn *auth.Authenticator, actionTokens *auth.ActionTokens, keys *idempotency.Store) {
	api := app.Group(Prefix)
	bearer := auth.Require(authn, auth.Bearer)
	serviceKey := auth.Require(authn, auth.ServiceKeyHeader)
	view := auth.RequirePermission(PermView)

	// The Idempotency-Key is looked at before the action token: a retry of an answered top-up
	// with a new token replays the answer and spends nothing.
	api.Post("/recharge", bearer, auth.RequirePermission(PermCreate), idempotency.Middleware(keys, auth.Caller),
		auth.RequireActionToken(actionTokens), h.recharge)
	api.Post("/webhook/invoice-recharge", serviceKey, h.webhook)
	api.Post("/webhook/invoice-ignored", serviceKey, h.ignored)
	api.Post("/query-recharge", bearer, view, h.queryRecharge)
	// The list checks its parameters itself (listFilter), to answer every problem at once.
	api.Get("/transactions", bearer, view, h.list)
	api.Get("/transactions/:id", bearer, view, httpx.OnlyQuery(), h.get)
	api.Get("/inventory", bearer, view, httpx.OnlyQuery(), h.inventory)
}

type handlers struct {
	svc *topup.Service
}

// rechargeBody is POST /recharge; the rules are the domain's (topup.ManualRequest). Quantity
// is read by rechargeQuantity.
type rechargeBody struct {
	SubscriberID      string          `json:"subscriber_id"`
	OfferID           string          `json:"offer_id"`
	Quantity          json.RawMessage `json:"quantity"`
	ExternalOperation string          `json:"external_operation"`
	Canton            string          `json:"canton"`
}

// rechargeQuantity reads quantity, which the specification types "number", "integer >= 1": a
// JSON number whose value is an integer, so 1, 1.0 and 1e0 are all 1. Anything else (1.5, the
// string "1", true, null, absent) reads 0 and a value beyond MaxQuantity reads MaxQuantity+1,
// so that the domain names the rule broken ("must be an integer of at least 1", "must be at
// most 100"). The exponent and digits are bounded before any arithmetic: rescaling
// 1e-999999999 would take minutes.
func rechargeQuantity(raw json.RawMessage) int {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) || !json.Valid(raw) {
		return 0
	}
	d, err := decimal.NewFromString(string(raw))
	switch {
	case err != nil, d.Sign() <= 0, d.Exponent() < -maxQuantityDecimals:
		return 0
	case d.NumDigits()+int(d.Exponent()) > maxQuantityDigits:
		return topup.MaxQuantity + 1
	case !d.Equal(d.Truncate(0)):
		return 0
	}
	return int(min(d.IntPart(), topup.MaxQuantity+1))
}

// Bounds of a quantity's text before any arithmetic.
const (
	maxQuantityDecimals = 20
	maxQuantityDigits   = 10
)

// rechargeAnswer is the specification's success response (201) and, built by errorBody, its
// logical-rejection response (422 failed, 502 unavailable, 504 timeout), status naming the
// record's status (DESIGN.md).
type rechargeAnswer struct {
	Success               bool    `json:"success"`
	TransactionID         string  `json:"transaction_id"`
	ExternalTransactionID string  `json:"external_transaction_id"`
	Status                string  `json:"status"`
	CarrierIDRecarga      *string `json:"carrier_id_recarga,omitempty"`
	CarrierIDCodigo       *string `json:"carrier_id_codigo,omitempty"`
	Error                 string  `json:"error,omitempty"`
	Message               string  `json:"message"`
}

func (h *handlers) recharge(c *fiber.Ctx) error {
	p := auth.PrincipalFrom(c)
	tok, ok := auth.ActionTokenFrom(c)
	if p == nil || p.Claims == nil || !ok {
		return topup.ErrActionTokenInvalid
	}
	var b rechargeBody
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	// subscriber_id and canton are checked exactly as sent: the specification's patterns
	// (^593[89]\d{8}$, 4 digits) leave no room for blanks.
	rec, err := h.svc.Recharge(c.UserContext(), topup.ManualRequest{
		Operator: topup.Operator{
			UserID:    p.Claims.Subject,
			Username:  p.Claims.Username,
			Email:     p.Claims.Email,
			Unlimited: p.Claims.HasPermission(PermUnlimited),
		},
		ActionToken:       topup.ActionToken{ID: tok.ID, Subject: tok.Subject, ExpiresAt: tok.ExpiresAt},
		SubscriberID:      b.SubscriberID,
		OfferID:           strings.TrimSpace(b.OfferID),
		Quantity:          rechargeQuantity(b.Quantity),
		ExternalOperation: topup.Operation(b.ExternalOperation),
		Canton:            b.Canton,
	})
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(rechargeAnswer{
		Success:               true,
		TransactionID:         rec.ID.String(),
		ExternalTransactionID: rec.ExternalTransactionID,
		Status:                string(rec.Status),
		CarrierIDRecarga:      &rec.CarrierIDRecarga,
		CarrierIDCodigo:       &rec.CarrierIDCodigo,
		Message:               cmp.Or(rec.CarrierMessage, rec.CarrierSystemMessage, "top-up applied"),
	})
}

// maxAmountText bounds the text of a webhook amount before it is parsed: a megabyte of digits
// is no amount, and turning it into a decimal takes seconds of CPU.
const maxAmountText = 40

// webhookAmountProblem is the problem of an amount that is not a number.
var webhookAmountProblem = "must be a number (at most " + strconv.Itoa(maxAmountText) + " characters)"

// webhookAmount decodes amount, a JSON number (the specification's type; a string, even a
// numeric one, is the wrong type, like a number for a string member): nil when absent or null
// (the domain says it is required), an error when it is not a JSON number or longer than
// maxAmountText characters. The number is read as a decimal, never through float64.
func webhookAmount(raw json.RawMessage) (*decimal.Decimal, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var d decimal.Decimal
	if len(raw) > maxAmountText || raw[0] == '"' || d.UnmarshalJSON(raw) != nil {
		return nil, errors.New("amount " + webhookAmountProblem)
	}
	return &d, nil
}

// webhookAnswer is the specification's 201 response and, built by errorBody, its rejection
// response.
type webhookAnswer struct {
	Success               bool    `json:"success"`
	TransactionID         string  `json:"transaction_id"`
	ExternalTransactionID string  `json:"external_transaction_id,omitempty"`
	Source                string  `json:"source"`
	InvoiceNumber         *string `json:"invoice_number"`
	Status                string  `json:"status"`
	CarrierIDRecarga      string  `json:"carrier_id_recarga,omitempty"`
	Error                 string  `json:"error,omitempty"`
	// Message is a rejection's reason in words (error is its code).
	Message string `json:"message,omitempty"`
}

// webhook is POST /webhook/invoice-recharge. The body is decoded member by member
// (decodeWebhook): whatever is wrong with it, the delivery reaches the domain and is recorded.
func (h *handlers) webhook(c *fiber.Ctx) error {
	req := decodeWebhook(c.Body())
	req.NotificationEmail = strings.TrimSpace(req.NotificationEmail)
	rec, err := h.svc.Webhook(c.UserContext(), req)
	if err != nil {
		return err
	}
	a := webhookAnswer{
		Success:               rec.Status == topup.StatusSuccess,
		TransactionID:         rec.ID.String(),
		ExternalTransactionID: rec.ExternalTransactionID,
		Source:                string(rec.Source),
		InvoiceNumber:         nullable(rec.InvoiceNumber),
		Status:                string(rec.Status),
		CarrierIDRecarga:      rec.CarrierIDRecarga,
	}
	switch rec.Status {
	case topup.StatusSuccess:
	case topup.StatusUnavailable:
		// The diagnostic (transport text, SPR address) stays in the record for operators.
		a.CarrierIDRecarga = ""
		a.Error = "the carrier could not be reached or did not answer; the top-up will be reconciled"
	default:
		a.CarrierIDRecarga = ""
		a.Error = cmp.Or(rec.CarrierMessage, rec.CarrierSystemMessage, "the carrier refused the top-up")
	}
	return c.Status(http.StatusCreated).JSON(a)
}

// ignoredBody is POST /webhook/invoice-ignored: the workflow tool reports an e-mail it could
// not process. Only reason is required; payload is whatever the tool wants kept.
type ignoredBody struct {
	Reason            string          `json:"reason"`
	InvoiceNumber     string          `json:"invoice_number"`
	InvoiceCode       string          `json:"invoice_code"`
	ProductCode       string          `json:"product_code"`
	SubscriberID      string          `json:"subscriber_id"`
	NotificationEmail string          `json:"notification_email"`
	SourceXMLHash     string          `json:"source_xml_hash"`
	Payload           json.RawMessage `json:"payload"`
}

func (h *handlers) ignored(c *fiber.Ctx) error {
	var b ignoredBody
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	rec, err := h.svc.Ignore(c.UserContext(), topup.IgnoredRequest{
		Reason:            b.Reason,
		InvoiceNumber:     b.InvoiceNumber,
		InvoiceCode:       b.InvoiceCode,
		ProductCode:       b.ProductCode,
		SubscriberID:      strings.TrimSpace(b.SubscriberID),
		NotificationEmail: strings.TrimSpace(b.NotificationEmail),
		SourceXMLHash:     strings.TrimSpace(b.SourceXMLHash),
		Payload:           c.Body(),
	})
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(fiber.Map{
		"success":        true,
		"transaction_id": rec.ID.String(),
		"source":         rec.Source,
		"invoice_number": nullable(rec.InvoiceNumber),
		"status":         rec.Status,
		"reason":         rec.IgnoredReason,
	})
}

// queryBody is POST /query-recharge.
type queryBody struct {
	ExternalTransactionID string `json:"external_transaction_id"`
	OfferID               string `json:"offer_id"`
	// ConfirmCharge is the business confirming the charge of a failed transaction that the
	// carrier reports SUCCESS; it needs create_recargas besides view_recargas.
	ConfirmCharge bool `json:"confirm_charge"`
}

func (h *handlers) queryRecharge(c *fiber.Ctx) error {
	var b queryBody
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	if b.ConfirmCharge && !auth.PrincipalFrom(c).HasPermission(PermCreate) {
		return httpx.WrapError(http.StatusForbidden, "Missing permission: "+PermCreate+" (confirm_charge)", auth.ErrForbidden)
	}
	res, err := h.svc.QueryRecharge(c.UserContext(), topup.QueryRequest{
		ExternalTransactionID: strings.TrimSpace(b.ExternalTransactionID),
		OfferID:               strings.TrimSpace(b.OfferID),
		ChargeConfirmed:       b.ConfirmCharge,
	})
	if err != nil {
		return err
	}
	r := res.Remote
	out := fiber.Map{
		"success":                 res.RemoteSuccess,
		"external_transaction_id": strings.TrimSpace(b.ExternalTransactionID),
		"status":                  r.Status,
		"message":                 cmp.Or(r.Mensaje, r.SystemMessage),
		"result_code":             resultCode(r.IDCodigo),
		"carrier_id_recarga":      nullable(r.IDRecarga),
		"system_message":          nullable(r.SystemMessage),
		"transaction":             nil,
	}
	if t := res.Transaction; t != nil {
		out["transaction"] = fiber.Map{
			"transaction_id":  t.ID.String(),
			"previous_status": res.PreviousStatus,
			"status":          t.Status,
			"changed":         res.Changed,
			"incident":        t.Incident,
			"note":            nullable(res.Note),
		}
	}
	return c.JSON(out)
}

// resultCode is ID_CODIGO as the number the specification's result_code is; null when the
// carrier sent something that is not one.
func resultCode(code string) *int {
	n, err := strconv.Atoi(strings.TrimSpace(code))
	if err != nil {
		return nil
	}
	return &n
}

func (h *handlers) list(c *fiber.Ctx) error {
	f, err := listFilter(c)
	if err != nil {
		return err
	}
	f = f.Normalize()
	rows, total, err := h.svc.List(c.UserContext(), f)
	if err != nil {
		return err
	}
	data := make([]transactionJSON, len(rows))
	for i := range rows {
		data[i] = toJSON(&rows[i])
	}
	return c.JSON(fiber.Map{
		"data": data,
		"meta": fiber.Map{
			"total":       total,
			"page":        f.Page,
			"per_page":    f.PerPage,
			"total_pages": (total + f.PerPage - 1) / f.PerPage,
		},
	})
}

// listParams are the query parameters of GET /transactions; the detail and the inventory take
// none (httpx.OnlyQuery).
var listParams = []string{"page", "per_page", "subscriber_id", "status", "source", "from", "to"}

// listFilter reads page, per_page, subscriber_id, status, source, from and to; any other
// parameter is a problem (httpx.UnknownQuery), reported with the others. page and per_page must be
// integers; per_page is then clamped to 1..100 and page to >= 1. from and to are days yyyy-mm-dd
// of America/Guayaquil (topup.DayZone), both included, from not after to.
func listFilter(c *fiber.Ctx) (topup.Filter, error) {
	var f topup.Filter
	var problems []string
	if p := httpx.UnknownQuery(c, listParams...); p != "" {
		problems = append(problems, p)
	}
	intParam := func(name string, dst *int) {
		v := strings.TrimSpace(c.Query(name))
		if v == "" {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			problems = append(problems, name+" must be an integer")
			return
		}
		*dst = n
	}
	intParam("page", &f.Page)
	intParam("per_page", &f.PerPage)
	if c.Query("per_page") != "" && f.PerPage < 1 {
		f.PerPage = 1
	}
	f.SubscriberID = strings.TrimSpace(c.Query("subscriber_id"))
	if s := strings.TrimSpace(c.Query("status")); s != "" {
		if !topup.Status(s).Valid() {
			problems = append(problems, "status must be one of: pending, success, failed, unavailable, rejected, ignored, error")
		}
		f.Status = topup.Status(s)
	}
	if s := strings.TrimSpace(c.Query("source")); s != "" {
		if !topup.Source(s).Valid() {
			problems = append(problems, "source must be one of: dashboard, workflow-webhook, workflow-ignored")
		}
		f.Source = topup.Source(s)
	}
	// A date is taken exactly as written (no blanks around it, unlike the other parameters):
	// the document's pattern says so, and a blank there is a broken link, not a date.
	dayParam := func(name string, dst *topup.Day) bool {
		v := c.Query(name)
		if v == "" {
			return true
		}
		d, err := topup.ParseDay(v)
		if err != nil {
			problems = append(problems, name+" must be a date in yyyy-mm-dd format")
			return false
		}
		*dst = d
		return true
	}
	fromOK, toOK := dayParam("from", &f.From), dayParam("to", &f.To)
	if fromOK && toOK && !f.From.IsZero() && !f.To.IsZero() && f.To.Before(f.From) {
		problems = append(problems, "from must not be after to ("+f.From.String()+" > "+f.To.String()+")")
	}
	if len(problems) > 0 {
		return f, httpx.ValidationError(problems...)
	}
	return f, nil
}

// get is GET /transactions/:id, :id being the transaction_id or the external_transaction_id
// (topup.Service.Lookup: the transaction_id first).
func (h *handlers) get(c *fiber.Ctx) error {
	// Fiber leaves the path as sent; an id never needs escaping, but a client may escape it.
	key, err := url.PathUnescape(c.Params("id"))
	if err != nil {
		return topup.ErrNotFound // no id holds a broken escape
	}
	ctx := c.UserContext()
	t, err := h.svc.Lookup(ctx, key)
	if err != nil {
		return err
	}
	calls, err := h.svc.CarrierCalls(ctx, t.ID)
	if err != nil {
		return err
	}
	notes, err := h.svc.Notifications(ctx, t.ID)
	if err != nil {
		return err
	}
	out := toDetailJSON(t)
	for _, cc := range calls {
		out.CarrierCalls = append(out.CarrierCalls, carrierCallJSON{
			Function: cc.Function, Outcome: cc.Outcome, RequestXML: nullable(cc.RequestXML), ResponseXML: nullable(cc.ResponseXML),
			Diagnostic: nullable(cc.Diagnostic), DurationMS: cc.DurationMS, At: httpx.Time(cc.CreatedAt),
		})
	}
	for _, n := range notes {
		nj := notificationJSON{Kind: n.Kind, State: n.State, Attempt: n.Attempt, Recipients: n.Recipients, At: httpx.Time(n.OccurredAt),
			LastError: nullable(n.LastError), Deliveries: []deliveryJSON{}}
		for _, d := range n.Deliveries {
			nj.Deliveries = append(nj.Deliveries, deliveryJSON{Recipient: d.Recipient, State: d.State, Detail: nullable(d.Detail), At: httpx.Time(d.At)})
		}
		out.Notifications = append(out.Notifications, nj)
	}
	return c.JSON(out)
}

func (h *handlers) inventory(c *fiber.Ctx) error {
	inv, err := h.svc.Inventory(c.UserContext())
	if err != nil {
		return err
	}
	items := make([]fiber.Map, len(inv.Items))
	for i, it := range inv.Items {
		items[i] = fiber.Map{"offer_id": it.OfferID, "description": it.Description, "available": it.Available}
	}
	return c.JSON(fiber.Map{
		"success": true,
		"status":  inv.Status,
		"message": cmp.Or(inv.Mensaje, inv.SystemMessage),
		"data":    items,
	})
}
