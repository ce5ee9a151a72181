package topup

import (
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

var (
	// subscriberRe is the specification's pattern: 12 digits, 593 then 8 or 9.
	subscriberRe = regexp.MustCompile(`^593[89]\d{8}$`)
	cantonRe     = regexp.MustCompile(`^\d{4}$`)
	sha256Re     = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)
	// hashKeyRe is what source_xml_hash accepts: a SHA-256 in hex is what the workflow tool
	// sends, but the key is only compared, so any visible token up to 128 characters will do.
	hashKeyRe = regexp.MustCompile(`^[!-~]{1,128}$`)
)

// MaxQuantity is the largest quantity of a manual top-up. The specification says only
// "integer >= 1 (the dashboard sends 1)"; an upper bound keeps a typo from buying thousands of
// pins and keeps the value inside the INTEGER column (2147483648 was a 500 on PostgreSQL).
const MaxQuantity = 100

// Field size limits (the specification gives none; these fit the columns).
const (
	maxOfferID = 64
	maxInvoice = 100
	maxEmail   = 254
	maxReason  = 2000
	maxProduct = 64
	// Columns of the operator and the action token (the token's claims are not bounded by
	// their issuer).
	maxUserID   = 100
	maxTokenID  = 200
	maxUsername = 200
	// A webhook amount is below 10^11, so that even rounded to two decimals it fits the
	// DECIMAL(14,2) column, and has at most 20 decimals.
	maxAmountIntDigits = 11
	maxAmountDecimals  = 20
)

// storable reports whether a token claim can be kept as it is in a key column: not empty, at
// most max bytes, no control characters (PostgreSQL refuses NUL in text). A claim that cannot
// would make the insert fail, a 500 for what is a bad token.
func storable(v string, max int) bool {
	return v != "" && len(v) <= max && strings.IndexFunc(v, unicode.IsControl) < 0
}

// clipText drops control characters and keeps at most max characters.
func clipText(v string, max int) string {
	v = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, v)
	if utf8.RuneCountInString(v) <= max {
		return v
	}
	return string([]rune(v)[:max])
}

// normalizeHash trims the key and lower-cases a hex SHA-256, so that the same digest in
// either case is the same invoice; other tokens are kept as they are.
func normalizeHash(h string) string {
	h = strings.TrimSpace(h)
	if sha256Re.MatchString(h) {
		return strings.ToLower(h)
	}
	return h
}

type fieldErrors []FieldError

func (f *fieldErrors) add(field, msg string) { *f = append(*f, FieldError{Field: field, Message: msg}) }

// text checks a free-text field: at most max characters and no control characters (NUL cannot
// be stored in PostgreSQL text, and none belongs in these fields).
func (f *fieldErrors) text(field, v string, required bool, max int) bool {
	switch {
	case strings.TrimSpace(v) == "":
		if required {
			f.add(field, "is required")
			return false
		}
		return true
	case utf8.RuneCountInString(v) > max:
		f.add(field, "must be at most "+strconv.Itoa(max)+" characters")
		return false
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		f.add(field, "must not contain control characters")
		return false
	}
	return true
}

func (f *fieldErrors) subscriber(field, v string) bool {
	if v == "" {
		f.add(field, "is required")
		return false
	}
	if !subscriberRe.MatchString(v) {
		f.add(field, "must be 12 digits starting with 5938 or 5939 (^593[89]\\d{8}$)")
		return false
	}
	return true
}

func (f *fieldErrors) email(field, v string, required bool) bool {
	if v == "" {
		if required {
			f.add(field, "is required")
			return false
		}
		return true
	}
	if len(v) > maxEmail {
		f.add(field, "must be at most "+strconv.Itoa(maxEmail)+" characters")
		return false
	}
	if a, err := mail.ParseAddress(v); err != nil || a.Address != v {
		f.add(field, "must be an e-mail address")
		return false
	}
	return true
}

func (f *fieldErrors) canton(field, v string, required bool) bool {
	if v == "" {
		if required {
			f.add(field, "is required")
			return false
		}
		return true
	}
	if !cantonRe.MatchString(v) {
		f.add(field, "must be a 4-digit INEC canton code")
		return false
	}
	return true
}

func (r ManualRequest) validate() []FieldError {
	var f fieldErrors
	f.subscriber("subscriber_id", r.SubscriberID)
	f.text("offer_id", r.OfferID, true, maxOfferID)
	switch {
	case r.Quantity < 1:
		f.add("quantity", "must be an integer of at least 1")
	case r.Quantity > MaxQuantity:
		f.add("quantity", "must be at most "+strconv.Itoa(MaxQuantity))
	}
	if !r.ExternalOperation.Valid() {
		f.add("external_operation", "must be RECARGA_DATOS or RECARGA_PINES")
	}
	f.canton("canton", r.Canton, true)
	return f
}
