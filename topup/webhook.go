package topup

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// WebhookRequest is POST /webhook/invoice-recharge. Payload is the request body as received
// (JSON), kept in source_payload.
type WebhookRequest struct {
	InvoiceNumber     string
	InvoiceCode       string
	ProductCode       string
	SubscriberID      string
	Amount            *decimal.Decimal
	NotificationEmail string
	SourceXMLHash     string
	Canton            string
	Payload           []byte
	// Problems are what the caller found decoding Payload: a member of the wrong type (e.g.
	// a number for invoice_number), or a body that is not a JSON object (Field BodyField).
	// Each makes the request invalid, recorded rejected with INVALID_PAYLOAD like a broken
	// field rule; the member's own rules are not checked (its value could not be read).
	Problems []FieldError
}

// validate checks the field rules (package doc, "Webhook") and reports which fields passed.
func (r WebhookRequest) validate() (fieldErrors, map[string]bool) {
	var f fieldErrors
	ok := map[string]bool{
		"invoice_number":     f.text("invoice_number", r.InvoiceNumber, true, maxInvoice),
		"invoice_code":       f.text("invoice_code", r.InvoiceCode, false, maxInvoice),
		"subscriber_id":      f.subscriber("subscriber_id", r.SubscriberID),
		"notification_email": f.email("notification_email", r.NotificationEmail, false),
		"canton":             f.canton("canton", r.Canton, false),
	}
	if f.text("product_code", r.ProductCode, true, maxProduct) {
		if !strings.HasPrefix(r.ProductCode, ProductPrefix) {
			f.add("product_code", "must match "+ProductPrefix+"*")
		} else {
			ok["product_code"] = true
		}
	}
	// The bounds are checked on the exponent and the digits before any arithmetic: comparing
	// 1e999999999 (or 1e-999999999) with anything rescales it to a billion digits, which
	// would hold the request, and a CPU, for minutes.
	switch {
	case r.Amount == nil:
		f.add("amount", "is required")
	case !r.Amount.IsPositive():
		f.add("amount", "must be a positive number")
	case r.Amount.Exponent() < -maxAmountDecimals:
		f.add("amount", "must have at most "+strconv.Itoa(maxAmountDecimals)+" decimal places")
	case r.Amount.NumDigits()+int(r.Amount.Exponent()) > maxAmountIntDigits:
		f.add("amount", "is too large")
	default:
		ok["amount"] = true
	}
	switch {
	case r.SourceXMLHash == "":
		f.add("source_xml_hash", "is required")
	case !hashKeyRe.MatchString(r.SourceXMLHash):
		f.add("source_xml_hash", "must be the invoice XML's SHA-256 (up to 128 visible characters, no spaces)")
	default:
		ok["source_xml_hash"] = true
	}
	return f, ok
}

// Webhook runs an automatic top-up for an invoice the workflow tool parsed (the rules are the
// package doc's, "Webhook"). It returns the record and nil when the invoice was processed,
// whatever the carrier said: success, failed or unavailable (the service owns the retries).
// Otherwise nothing reaches the carrier, the delivery is recorded rejected, and it returns a
// *ValidationError (broken field rule), a *DuplicateError (source_xml_hash already recorded)
// or a *RejectedError (no mapping, amount mismatch).
func (s *Service) Webhook(ctx context.Context, r WebhookRequest) (*Transaction, error) {
	r.SourceXMLHash = normalizeHash(r.SourceXMLHash)
	fields, ok := r.validate()
	fields = mergeProblems(fields, ok, r.Problems)
	now := dbTime(s.now())
	base := Transaction{
		ID:            uuid.Must(uuid.NewV7()),
		Source:        SourceWorkflowWebhook,
		Quantity:      1, // fixed by the specification
		SourcePayload: sanitizePayload(r.Payload),
		CreatedAt:     now,
		UpdatedAt:     now,
	}
	// Only fields that passed their rule are copied into columns (an oversized one would not
	// fit); the payload keeps everything.
	copyIf := func(field string, dst *string, v string) {
		if ok[field] {
			*dst = strings.TrimSpace(v)
		}
	}
	copyIf("invoice_number", &base.InvoiceNumber, r.InvoiceNumber)
	copyIf("invoice_code", &base.InvoiceCode, r.InvoiceCode)
	copyIf("subscriber_id", &base.SubscriberID, r.SubscriberID)
	copyIf("notification_email", &base.NotificationEmail, r.NotificationEmail)
	copyIf("product_code", &base.ProductCode, r.ProductCode)
	copyIf("canton", &base.Canton, r.Canton)
	if ok["amount"] {
		base.Amount = decimal.NullDecimal{Decimal: *r.Amount, Valid: true}
	}
	if base.Canton == "" && ok["subscriber_id"] {
		base.Canton = s.cfg.DefaultCanton
	}

	if len(fields) > 0 {
		rec := base
		rec.Status = StatusRejected
		rec.RejectionReason = ReasonInvalidPayload + ": " + describeFields(fields)
		if err := s.store.Insert(ctx, &rec, s.notice(&rec)); err != nil {
			return nil, err
		}
		return nil, &ValidationError{Fields: fields, Transaction: &rec}
	}

	// The hash is looked up in the transaction of the insert (Store.InsertInvoice), after the
	// mapping: a repeated delivery is a duplicate whatever its mapping says.
	base.SourceXMLHash = r.SourceXMLHash

	product, mapped := s.products.Lookup(base.ProductCode)
	switch {
	// rejection_reason is the bare code (the design's "reason AMOUNT_MISMATCH"); the words
	// go to the answer and the notification.
	case !mapped:
		base.Status = StatusRejected
		base.RejectionReason = ReasonProductNotMapped
		base.rejectionDetail = fmt.Sprintf("%s: no product mapping for product_code %s", ReasonProductNotMapped, base.ProductCode)
	case !product.AmountMatches(*r.Amount):
		base.Status = StatusRejected
		base.OfferID, base.ExternalOperation = product.OfferID, product.ExternalOperation
		base.RejectionReason = ReasonAmountMismatch
		base.rejectionDetail = fmt.Sprintf("%s: amount %s differs from %s expected for %s", ReasonAmountMismatch,
			amountAsSent(*r.Amount), product.Amount.StringFixed(2), product.ProductCode)
	}
	if base.Status == StatusRejected {
		holder, err := s.store.InsertInvoice(ctx, &base, s.notice(&base))
		if err != nil {
			return nil, err
		}
		if holder != nil {
			return nil, s.duplicate(ctx, base, holder)
		}
		return nil, &RejectedError{Transaction: &base, Detail: base.rejectionDetail}
	}

	t := base
	t.Status = StatusPending
	t.OfferID = product.OfferID
	t.ExternalOperation = product.ExternalOperation
	t.ExternalTransactionID = s.newExtID()
	holder, err := s.store.InsertInvoice(ctx, &t, nil)
	if err != nil {
		return nil, err
	}
	if holder != nil {
		return nil, s.duplicate(ctx, base, holder)
	}
	rec, err := s.execute(ctx, &t)
	var ce *CarrierError
	if errors.As(err, &ce) {
		return ce.Transaction, nil
	}
	return rec, err
}

// amountAsSent writes an invoice amount with every decimal it was sent with and at least
// two: rounded to cents, 3.014 would read 3.01, an amount the tolerance accepts.
func amountAsSent(d decimal.Decimal) string {
	return d.StringFixed(max(2, -d.Exponent()))
}

// duplicate records a repeated delivery of an invoice as rejected (the specification's table)
// without its hash, which stays with the original record (the payload keeps it), and returns
// the *DuplicateError.
func (s *Service) duplicate(ctx context.Context, base Transaction, orig *Transaction) error {
	rec := base
	rec.ID = uuid.Must(uuid.NewV7())
	rec.SourceXMLHash = ""
	rec.Status = StatusRejected
	rec.RejectionReason = fmt.Sprintf("%s: invoice already processed by transaction %s", ReasonDuplicate, orig.ID)
	rec.DuplicateOf = orig.ID.String()
	if err := s.store.InsertDuplicate(ctx, &rec, s.notice(&rec)); err != nil {
		return err
	}
	return &DuplicateError{Original: orig, Transaction: &rec, Reason: ReasonDuplicate}
}

// mergeProblems adds the caller's decoding problems to the field rules' ones: a member
// with a decoding problem is reported by it alone and is not copied into a column; a body
// that could not be read at all is reported alone.
func mergeProblems(fields fieldErrors, ok map[string]bool, problems []FieldError) fieldErrors {
	if len(problems) == 0 {
		return fields
	}
	bad := make(map[string]bool, len(problems))
	for _, p := range problems {
		bad[p.Field] = true
		ok[p.Field] = false
	}
	if bad[BodyField] {
		for k := range ok {
			ok[k] = false
		}
		return append(fieldErrors(nil), problems...)
	}
	out := append(fieldErrors(nil), problems...)
	for _, f := range fields {
		if !bad[f.Field] {
			out = append(out, f)
		}
	}
	return out
}

// IgnoredRequest is POST /webhook/invoice-ignored: the workflow tool reports an e-mail it could
// not process (not a top-up, or no number). Reason is required; the other fields are what the
// tool could read, stored when they fit; Payload is the whole body.
type IgnoredRequest struct {
	Reason            string
	InvoiceNumber     string
	InvoiceCode       string
	ProductCode       string
	SubscriberID      string
	NotificationEmail string
	SourceXMLHash     string
	Payload           []byte
}

// Ignore records an ignored e-mail for the audit: status ignored, source workflow-ignored, no
// carrier call and no notification (the specification's events table names none). Its
// source_xml_hash is kept only in the payload, so that the same invoice can still be sent to
// the top-up webhook once it is fixed.
func (s *Service) Ignore(ctx context.Context, r IgnoredRequest) (*Transaction, error) {
	var f fieldErrors
	f.text("reason", r.Reason, true, maxReason)
	f.text("invoice_number", r.InvoiceNumber, false, maxInvoice)
	f.text("invoice_code", r.InvoiceCode, false, maxInvoice)
	f.text("product_code", r.ProductCode, false, maxProduct)
	f.email("notification_email", r.NotificationEmail, false)
	if r.SubscriberID != "" && len(r.SubscriberID) > 32 {
		f.add("subscriber_id", "must be at most 32 characters")
	} else {
		f.text("subscriber_id", r.SubscriberID, false, 32)
	}
	if r.SourceXMLHash != "" && !hashKeyRe.MatchString(r.SourceXMLHash) {
		f.add("source_xml_hash", "must be the invoice XML's SHA-256 (up to 128 visible characters, no spaces)")
	}
	if len(f) > 0 {
		return nil, &ValidationError{Fields: f}
	}
	now := dbTime(s.now())
	t := &Transaction{
		ID:                uuid.Must(uuid.NewV7()),
		Source:            SourceWorkflowIgnored,
		Status:            StatusIgnored,
		Quantity:          1,
		IgnoredReason:     strings.TrimSpace(r.Reason),
		InvoiceNumber:     strings.TrimSpace(r.InvoiceNumber),
		InvoiceCode:       strings.TrimSpace(r.InvoiceCode),
		ProductCode:       strings.TrimSpace(r.ProductCode),
		SubscriberID:      strings.TrimSpace(r.SubscriberID),
		NotificationEmail: r.NotificationEmail,
		SourcePayload:     sanitizePayload(r.Payload),
		CreatedAt:         now,
		UpdatedAt:         now,
	}
	if err := s.store.Insert(ctx, t, nil); err != nil {
		return nil, err
	}
	return t, nil
}

// sanitizePayload keeps a request body as received for the source_payload column (TEXT, so
// the audit shows the exact bytes), only replacing what no text column can hold: invalid UTF-8
// and NUL bytes.
func sanitizePayload(body []byte) string {
	return strings.ReplaceAll(strings.ToValidUTF8(string(body), "\uFFFD"), "\x00", "\uFFFD")
}
