package main

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/topup"
)

// webhookMembers are the string members of the webhook body, each with where it goes.
var webhookMembers = []struct {
	name string
	dst  func(*topup.WebhookRequest) *string
}{
	{"invoice_number", func(r *topup.WebhookRequest) *string { return &r.InvoiceNumber }},
	{"invoice_code", func(r *topup.WebhookRequest) *string { return &r.InvoiceCode }},
	{"product_code", func(r *topup.WebhookRequest) *string { return &r.ProductCode }},
	{"subscriber_id", func(r *topup.WebhookRequest) *string { return &r.SubscriberID }},
	{"notification_email", func(r *topup.WebhookRequest) *string { return &r.NotificationEmail }},
	{"source_xml_hash", func(r *topup.WebhookRequest) *string { return &r.SourceXMLHash }},
	{"canton", func(r *topup.WebhookRequest) *string { return &r.Canton }},
}

// decodeWebhook reads the webhook body member by member, so that a member of the wrong type
// (a number where a string is expected, a string or an object for amount) or a body that is not
// a JSON object does not stop the delivery before the domain: each becomes a problem in
// WebhookRequest.Problems, and the domain records the delivery rejected (INVALID_PAYLOAD).
// A member named twice, exactly or in another case, is a problem and neither value is read (the
// body could be read two ways); otherwise members are matched like encoding/json does: the exact name, else ignoring
// case; null or absent is empty. Unknown members are ignored (the payload keeps them).
func decodeWebhook(body []byte) topup.WebhookRequest {
	r := topup.WebhookRequest{Payload: body}
	var members map[string]json.RawMessage
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		r.Problems = []topup.FieldError{{Field: topup.BodyField, Message: "is required"}}
		return r
	case !json.Valid(body):
		r.Problems = []topup.FieldError{{Field: topup.BodyField, Message: "is not valid JSON"}}
		return r
	case json.Unmarshal(body, &members) != nil || members == nil:
		r.Problems = []topup.FieldError{{Field: topup.BodyField, Message: "must be a JSON object"}}
		return r
	}
	twice := map[string]bool{} // top-level names given twice: neither spelling is read
	for _, p := range httpx.DuplicateMembers(body) {
		r.Problems = append(r.Problems, topup.FieldError{Field: p.Field, Message: p.Message})
		twice[strings.ToLower(p.Field)] = true
	}
	member := func(name string) (json.RawMessage, bool) {
		if twice[name] {
			return nil, false
		}
		if raw, ok := members[name]; ok {
			return raw, true
		}
		for k, raw := range members {
			if strings.EqualFold(k, name) {
				return raw, true
			}
		}
		return nil, false
	}
	for _, m := range webhookMembers {
		raw, ok := member(m.name)
		if !ok || string(bytes.TrimSpace(raw)) == "null" {
			continue
		}
		if err := json.Unmarshal(raw, m.dst(&r)); err != nil {
			r.Problems = append(r.Problems, topup.FieldError{Field: m.name, Message: "must be a string"})
		}
	}
	if raw, ok := member("amount"); ok {
		amount, err := webhookAmount(raw)
		if err != nil {
			r.Problems = append(r.Problems, topup.FieldError{Field: "amount", Message: webhookAmountProblem})
		}
		r.Amount = amount
	}
	return r
}
