package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-playground/validator/v10"
	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"
)

var (
	validate = newValidator()
	// messagesMu guards customMessages; RegisterValidation is meant for start-up, but a test that
	// registers while another validates must not race.
	messagesMu     sync.RWMutex
	customMessages = map[string]string{}
)

func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			return ""
		case "":
			return f.Name
		}
		return name
	})
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(v.RegisterValidation("numeric_string", validateNumericString))
	must(v.RegisterValidation("date_ymd", validateDateYMD))
	must(v.RegisterValidation("positive", validatePositive))
	must(v.RegisterValidation("max_decimals", validateMaxDecimals))
	must(v.RegisterValidation("max_integer_digits", validateMaxIntegerDigits))
	return v
}

// RegisterValidation adds a validation tag for Bind and Validate; message completes
// "<field> ..." in the errors list (e.g. "must be a mobile number 593 then 8 or 9 and 8 digits").
// Call it at start-up, before serving requests: the validator is not safe for concurrent
// registration and use.
func RegisterValidation(tag string, fn validator.Func, message string) error {
	if err := validate.RegisterValidation(tag, fn); err != nil {
		return err
	}
	messagesMu.Lock()
	customMessages[tag] = message
	messagesMu.Unlock()
	return nil
}

// Bind decodes the JSON request body into dst (a pointer to a struct) and validates it with the
// `validate` tags. The body is read as JSON whatever Content-Type the request declares (none,
// text/plain, a form type...): callers and tools often send JSON under another type, and a body
// that is not JSON gets the same 400 as malformed JSON, never a 415. Every failure is a 400
// *Error with one `errors` entry per problem: an empty, malformed or mistyped body, a body
// holding the NUL character (\u0000, which PostgreSQL cannot store), and each failed rule,
// naming the field by its full JSON path (e.g. "items[0].cantidad is required",
// "extra_fields.x must be ..."). Unknown fields are ignored.
func Bind(c *fiber.Ctx, dst any) error {
	body := c.Body()
	if len(bytes.TrimSpace(body)) == 0 {
		return ValidationError("request body is required")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			// encoding/json reports only the first mistyped member; name every one of them, then
			// the rules the other members break (the decoder filled those in).
			if problems := typeProblems(body, dst); len(problems) > 0 {
				return ValidationError(append(problems, ruleProblems(dst, problems)...)...)
			}
		}
		return ValidationError(decodeProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return ValidationError("request body must contain a single JSON value")
	}
	if hasNULEscape(body) {
		return ValidationError(nulProblem)
	}
	return Validate(dst)
}

const nulProblem = `request body must not contain the NUL character (\u0000)`

// hasNULEscape reports whether the (valid) JSON text b holds a \u0000 escape. PostgreSQL stores
// NUL neither in text (bun drops it silently, so what is stored differs from what was answered)
// nor in jsonb (the insert fails), so such a body is refused up front on every engine.
func hasNULEscape(b []byte) bool {
	for i := bytes.IndexByte(b, '\\'); i >= 0 && i+1 < len(b); {
		if b[i+1] == 'u' && i+6 <= len(b) && string(b[i+2:i+6]) == "0000" {
			return true
		}
		// Skip the escaped character, so the second backslash of \\ never starts an escape.
		next := bytes.IndexByte(b[i+2:], '\\')
		if next < 0 {
			return false
		}
		i += 2 + next
	}
	return false
}

// Validate runs the `validate` tags of v (a struct or pointer to one) and returns the 400 *Error
// of Bind, or nil. Use it for query parameters decoded by hand.
func Validate(v any) error {
	err := validate.Struct(v)
	if err == nil {
		return nil
	}
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) {
		// InvalidValidationError: dst is not a struct, a programming error.
		return WrapError(http.StatusInternalServerError, http.StatusText(http.StatusInternalServerError), err)
	}
	problems := make([]string, 0, len(verrs))
	for _, fe := range verrs {
		problems = append(problems, describe(fe))
	}
	return ValidationError(problems...)
}

// ruleProblems are the failed `validate` rules of dst, except those of the members already
// named in typed (a mistyped member would otherwise also read as "is required").
func ruleProblems(dst any, typed []string) []string {
	var verrs validator.ValidationErrors
	if !errors.As(validate.Struct(dst), &verrs) {
		return nil
	}
	mistyped := map[string]bool{}
	for _, p := range typed {
		mistyped[topField(p)] = true
	}
	var out []string
	for _, fe := range verrs {
		if p := describe(fe); !mistyped[topField(p)] {
			out = append(out, p)
		}
	}
	return out
}

// topField is the top-level member a problem names ("items[0].cantidad ..." -> "items").
func topField(problem string) string {
	if i := strings.IndexAny(problem, " .["); i >= 0 {
		return problem[:i]
	}
	return problem
}

func decodeProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF):
		return "request body is not valid JSON"
	case errors.As(err, &typ):
		if typ.Field == "" {
			return "request body must be a JSON " + jsonKind(typ.Type)
		}
		return typ.Field + " must be " + article(jsonKind(typ.Type))
	default:
		// An UnmarshalJSON method refused a value, e.g. a decimal that is not a number.
		return "request body contains an invalid value"
	}
}

// typeProblems decodes each member of the JSON object body on its own into the matching field of
// the struct dst points to (matched like encoding/json: exact name first, then ignoring case) and
// returns one problem per member of the wrong type, in field order. It returns nil when dst is
// not a pointer to a struct or body is not an object.
func typeProblems(body []byte, dst any) []string {
	t := reflect.TypeOf(dst)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return nil
	}
	t = t.Elem()
	var problems []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || (f.Anonymous && name == "") {
			continue
		}
		if name == "" {
			name = f.Name
		}
		raw, ok := members[name]
		if !ok {
			for k, v := range members {
				if strings.EqualFold(k, name) {
					raw, ok = v, true
					break
				}
			}
		}
		if !ok {
			continue
		}
		var elems []json.RawMessage
		if f.Type.Kind() == reflect.Slice && json.Unmarshal(raw, &elems) == nil {
			// encoding/json names no index inside arrays: decode element by element so the
			// problem reads items[1].cantidad, like the rule problems do.
			for i, e := range elems {
				problems = appendTypeProblem(problems, fmt.Sprintf("%s[%d]", name, i), json.Unmarshal(e, reflect.New(f.Type.Elem()).Interface()))
			}
			continue
		}
		problems = appendTypeProblem(problems, name, json.Unmarshal(raw, reflect.New(f.Type).Interface()))
	}
	return problems
}

// appendTypeProblem adds the problem of decoding the member at path (nil err: none).
func appendTypeProblem(problems []string, path string, err error) []string {
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return problems
	case errors.As(err, &typ) && typ.Field != "":
		return append(problems, path+"."+typ.Field+" must be "+article(jsonKind(typ.Type)))
	case errors.As(err, &typ):
		return append(problems, path+" must be "+article(jsonKind(typ.Type)))
	}
	return append(problems, path+" has an invalid value")
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(decimal.Decimal{}) {
		return "number"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	default:
		return "object"
	}
}

func article(kind string) string {
	switch kind[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + kind
	}
	return "a " + kind
}

// fieldPath is the JSON path of the failed field without the top-level struct name.
func fieldPath(fe validator.FieldError) string {
	ns := fe.Namespace()
	if _, rest, ok := strings.Cut(ns, "."); ok {
		return rest
	}
	return ns
}

func describe(fe validator.FieldError) string {
	f := fieldPath(fe)
	p := fe.Param()
	switch fe.Tag() {
	case "required", "required_if", "required_unless", "required_with", "required_with_all",
		"required_without", "required_without_all":
		return f + " is required"
	case "excluded_if", "excluded_unless", "excluded_with", "excluded_with_all", "excluded_without", "excluded_without_all":
		return f + " must not be given here"
	case "max":
		return f + " must be " + sizeText("at most", p, fe.Kind())
	case "min":
		return f + " must be " + sizeText("at least", p, fe.Kind())
	case "len":
		return f + " must be " + sizeText("exactly", p, fe.Kind())
	case "lte":
		return f + " must be " + sizeText("at most", p, fe.Kind())
	case "gte":
		return f + " must be " + sizeText("at least", p, fe.Kind())
	case "lt":
		return f + " must be less than " + p
	case "gt":
		return f + " must be greater than " + p
	case "eq":
		return f + " must be " + p
	case "ne":
		return f + " must not be " + p
	case "oneof":
		return f + " must be one of: " + strings.Join(strings.Fields(p), ", ")
	case "email":
		return f + " must be a valid e-mail address"
	case "uuid", "uuid4", "uuid_rfc4122", "uuid4_rfc4122":
		return f + " must be a UUID"
	case "url", "http_url", "uri":
		return f + " must be a URL"
	case "number":
		return f + " must contain only digits"
	case "numeric":
		return f + " must be numeric"
	case "boolean":
		return f + " must be a boolean"
	case "numeric_string":
		return f + " must be a numeric string"
	case "date_ymd":
		return f + " must be a date in yyyy-mm-dd format"
	case "positive":
		return f + " must be greater than zero"
	case "max_decimals":
		return f + " must have at most " + p + " decimal places"
	case "max_integer_digits":
		return f + " must have at most " + p + " digits before the decimal point"
	}
	messagesMu.RLock()
	msg, ok := customMessages[fe.Tag()]
	messagesMu.RUnlock()
	if ok {
		return f + " " + msg
	}
	return fmt.Sprintf("%s is invalid (%s)", f, fe.Tag())
}

func sizeText(bound, n string, k reflect.Kind) string {
	switch k {
	case reflect.String:
		return bound + " " + n + " characters long"
	case reflect.Slice, reflect.Array, reflect.Map:
		return "a list of " + bound + " " + n + " items"
	default:
		return bound + " " + n
	}
}

// decimalText is the text of a numeric_string/positive/max_decimals field: a string (the
// validator dereferences pointers) or a decimal. ok is false for any other type.
func decimalText(fl validator.FieldLevel) (string, bool) {
	switch v := fl.Field().Interface().(type) {
	case string:
		return v, true
	case decimal.Decimal:
		return v.String(), true
	case decimal.NullDecimal:
		if !v.Valid {
			return "", false
		}
		return v.Decimal.String(), true
	}
	return "", false
}

// isNumericString accepts plain decimal text: an optional minus, digits, and optionally a point
// followed by digits. No exponent, no plus, no spaces, no thousands separators, no leading or
// trailing point: what decimal(18,2) columns and SOAP decimals accept as is.
func isNumericString(s string) bool {
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasPoint := strings.Cut(s, ".")
	if !allDigits(intPart) {
		return false
	}
	return !hasPoint || allDigits(frac)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func validateNumericString(fl validator.FieldLevel) bool {
	s, ok := decimalText(fl)
	return ok && isNumericString(s)
}

// validatePositive: the value is numeric text (or a decimal) greater than zero. Combine with
// omitempty for optional fields.
func validatePositive(fl validator.FieldLevel) bool {
	s, ok := decimalText(fl)
	if !ok || !isNumericString(s) {
		return false
	}
	d, err := decimal.NewFromString(s)
	return err == nil && d.IsPositive()
}

// validateMaxDecimals: at most N digits after the point (max_decimals=2 for money).
func validateMaxDecimals(fl validator.FieldLevel) bool {
	s, ok := decimalText(fl)
	if !ok || !isNumericString(s) {
		return false
	}
	n, err := strconv.Atoi(fl.Param())
	if err != nil {
		return false
	}
	_, frac, _ := strings.Cut(s, ".")
	return len(frac) <= n
}

// validateMaxIntegerDigits: at most N digits before the point, leading zeros aside
// (max_integer_digits=16 for a DECIMAL(18,2) column).
func validateMaxIntegerDigits(fl validator.FieldLevel) bool {
	s, ok := decimalText(fl)
	if !ok || !isNumericString(s) {
		return false
	}
	n, err := strconv.Atoi(fl.Param())
	if err != nil {
		return false
	}
	whole, _, _ := strings.Cut(strings.TrimLeft(s, "+-"), ".")
	return len(strings.TrimLeft(whole, "0")) <= n
}

// validateDateYMD: a real calendar date written yyyy-mm-dd (2024-02-30 fails).
func validateDateYMD(fl validator.FieldLevel) bool {
	s, ok := fl.Field().Interface().(string)
	if !ok || len(s) != len(time.DateOnly) {
		return false
	}
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}
