package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/go-playground/validator/v10"
	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/platform/integrations/internal/validation"
)

// validate is built once with the tags of this package and never changed: rules of values are
// the domain packages', so there is nothing for a service to register.
var validate = newValidator()

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
	return v
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
	problems, err := Decode(c, dst)
	if err != nil {
		return err
	}
	return Invalid(problems, nil)
}

// Decode is Bind for a handler whose domain validates the input: a body that cannot be read at
// all is a 400 *Error; otherwise it returns the problems of the members (a wrong JSON type, a
// failed `validate` tag: presence and syntax), for [Invalid] to answer together with the
// domain's.
func Decode(c *fiber.Ctx, dst any) ([]validation.Problem, error) {
	body := c.Body()
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, ValidationError("request body is required")
	}
	if bytes.Equal(bytes.TrimSpace(body), []byte("null")) {
		// encoding/json leaves dst untouched for null: it would read as an empty object.
		return nil, ValidationError("request body must be a JSON object")
	}
	if dups := DuplicateMembers(body); len(dups) > 0 {
		return nil, ValidationError(texts(dups)...)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(dst); err != nil {
		var syn *json.SyntaxError
		if !errors.As(err, &syn) && !errors.Is(err, io.ErrUnexpectedEOF) {
			// encoding/json reports only the first mistyped member, without array indexes or map
			// keys; name every one of them by its JSON path, then the rules the other members
			// break (the decoder filled those in).
			if typed := typeProblems(body, dst); len(typed) > 0 {
				return append(typed, ruleProblems(dst, typed)...), nil
			}
		}
		return nil, ValidationError(decodeProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, ValidationError("request body must contain a single JSON value")
	}
	if hasNULEscape(body) {
		return nil, ValidationError(nulProblem)
	}
	return ruleProblems(dst, nil), nil
}

// Invalid is the 400 of a request whose members did not decode or whose input the domain
// refused (a *validation.Error): every decoding problem first, then the domain's problems except
// those at or below a member that already has one (a mistyped member also reads as missing). It
// returns nil when there is no problem; a domain error of another kind is returned as it is.
func Invalid(decoded []validation.Problem, domain error) error {
	var ve *validation.Error
	if domain != nil && !errors.As(domain, &ve) {
		return domain
	}
	problems := decoded
	if ve != nil {
		for _, p := range ve.Problems {
			if !underMistyped(p.Field, decoded) {
				problems = append(problems, p)
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return ValidationError(texts(problems)...)
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
	return Invalid(ruleProblems(v, nil), nil)
}

func texts(ps []validation.Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// ruleProblems are the failed `validate` rules of dst, except those at or below a member that
// holds a mistyped value (the decoder left it zero, so it would also read as "is required"). The
// rules of every other member, siblings in the same array included, are reported.
func ruleProblems(dst any, typed []validation.Problem) []validation.Problem {
	var verrs validator.ValidationErrors
	if !errors.As(validate.Struct(dst), &verrs) {
		return nil
	}
	root := reflect.TypeOf(dst)
	var out []validation.Problem
	for _, fe := range verrs {
		if p := describe(root, fe); !underMistyped(p.Field, typed) {
			out = append(out, p)
		}
	}
	return out
}

// underMistyped reports whether the JSON path is one of the mistyped paths or lies below one
// ("items[0].precio" is below "items[0]" and "items", not below "items[1]").
func underMistyped(path string, typed []validation.Problem) bool {
	for _, t := range typed {
		if path == t.Field {
			return true
		}
		if rest, ok := strings.CutPrefix(path, t.Field); ok && t.Field != "" && (rest[0] == '.' || rest[0] == '[') {
			return true
		}
	}
	return false
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

// typeProblems decodes every member of the JSON object body on its own, down to the leaves,
// into the matching field of the struct dst points to (fields matched like encoding/json: exact
// name first, then ignoring case; fields of embedded structs promoted) and returns one problem
// per value that does not fit, named by its JSON path (items[1].cantidad, extra_fields.valor_1),
// in field order (map keys sorted). It returns nil when dst is not a pointer to a struct or body
// is not an object.
func typeProblems(body []byte, dst any) []validation.Problem {
	t := reflect.TypeOf(dst)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil {
		return nil
	}
	return typeProblemsAt(nil, "", t.Elem(), body)
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// typeProblemsAt appends the problems of decoding raw into a value of type t at path.
func typeProblemsAt(problems []validation.Problem, path string, t reflect.Type, raw json.RawMessage) []validation.Problem {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return problems // null fits every type
	}
	leaf := func() []validation.Problem {
		return appendTypeProblem(problems, path, json.Unmarshal(raw, reflect.New(t).Interface()))
	}
	for {
		// A type that decodes itself (decimal.Decimal, time.Time...) is one value.
		if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
			return leaf()
		}
		if t.Kind() != reflect.Pointer {
			break
		}
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) != nil {
			return leaf()
		}
		for _, f := range jsonFields(t) {
			if v, ok := memberOf(members, f.name); ok {
				problems = typeProblemsAt(problems, joinPath(path, f.name), f.typ, v)
			}
		}
		return problems
	case reflect.Slice, reflect.Array:
		var elems []json.RawMessage
		if t.Elem().Kind() == reflect.Uint8 || json.Unmarshal(raw, &elems) != nil {
			return leaf() // []byte is base64 text
		}
		for i, e := range elems {
			problems = typeProblemsAt(problems, fmt.Sprintf("%s[%d]", path, i), t.Elem(), e)
		}
		return problems
	case reflect.Map:
		var members map[string]json.RawMessage
		if t.Key().Kind() != reflect.String || json.Unmarshal(raw, &members) != nil {
			return leaf()
		}
		for _, k := range slices.Sorted(maps.Keys(members)) {
			problems = typeProblemsAt(problems, joinPath(path, k), t.Elem(), members[k])
		}
		return problems
	case reflect.Interface:
		return problems // any JSON value fits
	}
	return leaf()
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// memberOf finds the member for the field name like encoding/json: exact name first, then
// ignoring case.
func memberOf(members map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	if v, ok := members[name]; ok {
		return v, true
	}
	for _, k := range slices.Sorted(maps.Keys(members)) {
		if strings.EqualFold(k, name) {
			return members[k], true
		}
	}
	return nil, false
}

// jsonField is a struct field as encoding/json sees it.
type jsonField struct {
	name string
	typ  reflect.Type
}

// jsonFields lists the JSON members of struct type t in field order, with the fields of
// embedded structs without a JSON name promoted (the shallowest field wins a name, as in
// encoding/json).
func jsonFields(t reflect.Type) []jsonField {
	type found struct {
		jsonField
		depth int
	}
	var all []found
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if f.Anonymous {
				if name == "" && ft.Kind() == reflect.Struct {
					if depth < 8 {
						walk(ft, depth+1)
					}
					continue
				}
				if !f.IsExported() {
					continue
				}
			} else if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			all = append(all, found{jsonField{name, f.Type}, depth})
		}
	}
	walk(t, 0)
	best := map[string]int{}
	for _, f := range all {
		if d, ok := best[f.name]; !ok || f.depth < d {
			best[f.name] = f.depth
		}
	}
	var out []jsonField
	for _, f := range all {
		if d, ok := best[f.name]; ok && d == f.depth {
			out = append(out, f.jsonField)
			delete(best, f.name)
		}
	}
	return out
}

// appendTypeProblem adds the problem of decoding the value at path (nil err: none).
func appendTypeProblem(problems []validation.Problem, path string, err error) []validation.Problem {
	var typ *json.UnmarshalTypeError
	switch {
	case err == nil:
		return problems
	case errors.As(err, &typ) && typ.Field != "":
		p := joinPath(path, typ.Field)
		return append(problems, validation.Problem{Field: p, Message: "must be " + article(jsonKind(typ.Type))})
	case errors.As(err, &typ):
		return append(problems, validation.Problem{Field: path, Message: "must be " + article(jsonKind(typ.Type))})
	}
	return append(problems, validation.Problem{Field: path, Message: "has an invalid value"})
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

// fieldPath is the JSON path of the failed field: the validator's namespace without the
// top-level struct, with the members of embedded structs promoted as encoding/json promotes
// them and map keys written as members (extra_fields.x, not extra_fields[x]). root is the type
// that was validated.
func fieldPath(root reflect.Type, fe validator.FieldError) string {
	ns := fe.Namespace()
	i := strings.IndexAny(ns, ".[")
	if i < 0 {
		return ns
	}
	if root != nil {
		if p, ok := jsonPath(root, ns[i:]); ok && p != "" {
			return strings.TrimPrefix(p, ".")
		}
	}
	return strings.TrimPrefix(ns[i:], ".")
}

// jsonPath rewrites the rest of a validator namespace (".items[0].codigo", ".Base.codigo",
// ".extra_fields[x]") walking type t; ok is false when the namespace does not fit t.
func jsonPath(t reflect.Type, ns string) (string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if ns == "" {
		return "", true
	}
	switch {
	case ns[0] == '.' && t.Kind() == reflect.Struct:
		rest := ns[1:]
		end := strings.IndexAny(rest, ".[")
		if end < 0 {
			end = len(rest)
		}
		f, ok := validatorField(t, rest[:end])
		if !ok {
			return "", false
		}
		sub, ok := jsonPath(f.Type, rest[end:])
		if !ok {
			return "", false
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			return sub, true // promoted, as encoding/json decodes it
		}
		if name == "" || name == "-" {
			name = f.Name
		}
		return "." + name + sub, true
	case ns[0] == '[' && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		end := strings.IndexByte(ns, ']')
		if end < 0 {
			return "", false
		}
		sub, ok := jsonPath(t.Elem(), ns[end+1:])
		return ns[:end+1] + sub, ok
	case ns[0] == '[' && t.Kind() == reflect.Map:
		// The key may itself hold ']': take the first split whose rest fits the element type.
		for j := 1; j < len(ns); j++ {
			if ns[j] != ']' {
				continue
			}
			if sub, ok := jsonPath(t.Elem(), ns[j+1:]); ok {
				return "." + ns[1:j] + sub, true
			}
		}
	}
	return "", false
}

// validatorField is the field of struct t the validator names name (its JSON name, or its Go
// name when it has none).
func validatorField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if n == "" || n == "-" {
			n = f.Name
		}
		if n == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func describe(root reflect.Type, fe validator.FieldError) validation.Problem {
	f := fieldPath(root, fe)
	return validation.Problem{Field: f, Message: strings.TrimPrefix(describeText(f, fe), f+" ")}
}

func describeText(f string, fe validator.FieldError) string {
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

// decimalText is the text of a numeric_string field: a string (the
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

func validateNumericString(fl validator.FieldLevel) bool {
	s, ok := decimalText(fl)
	return ok && validation.PlainDecimal(s)
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
