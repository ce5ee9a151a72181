// Package validation is the one shape of an input problem: the domain packages report every
// broken rule of an input as a [Problem] (the field, by its name in the specification or its
// path such as items[0].precio, and what is wrong), collected in an [*Error]; the services answer
// it as a 400 with one `errors` entry per problem ([Problem.String]). The rule helpers of
// [Problems] word the common rules once, so both services say them the same way.
package validation

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// Problem is one broken rule of an input.
type Problem struct {
	// Field is the field's name or path ("monto", "items[0].precio", "extra_fields.valor_1");
	// empty for a problem of the whole input.
	Field string
	// Message completes the field's name: "is required", "must be greater than zero".
	Message string
}

// String is the problem as one sentence: "monto must be greater than zero".
func (p Problem) String() string {
	if p.Field == "" {
		return p.Message
	}
	return p.Field + " " + p.Message
}

// Error is an input refused for its problems, one entry each, in the order the rules ran.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "invalid input: " + strings.Join(parts, "; ")
}

// Strings returns every problem as a sentence.
func (e *Error) Strings() []string {
	out := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p.String()
	}
	return out
}

// Problems collects the problems of one input. Each rule method checks one field, adds at most
// one problem (the first broken rule of the field) and reports whether the field passed.
type Problems []Problem

// Add records a problem.
func (p *Problems) Add(field, message string) { *p = append(*p, Problem{field, message}) }

// Err is nil without problems, else an *Error holding them.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	return &Error{Problems: p}
}

// Text checks a text field: not blank when required, at most max characters (0: no maximum).
func (p *Problems) Text(field, v string, required bool, max int) bool {
	switch {
	case strings.TrimSpace(v) == "":
		if required {
			p.Add(field, "is required")
			return false
		}
	case max > 0 && utf8.RuneCountInString(v) > max:
		p.Add(field, "must be at most "+strconv.Itoa(max)+" characters long")
		return false
	}
	return true
}

// Between checks an integer field against its bounds.
func (p *Problems) Between(field string, n, min, max int64) bool {
	switch {
	case n < min:
		p.Add(field, "must be at least "+strconv.FormatInt(min, 10))
	case n > max:
		p.Add(field, "must be at most "+strconv.FormatInt(max, 10))
	default:
		return true
	}
	return false
}

// Sign is what an amount must be besides its size.
type Sign int

const (
	// Positive amounts are greater than zero (the amount of an operation).
	Positive Sign = iota + 1
	// NonNegative amounts may be zero (a down payment, VAT, a free item).
	NonNegative
)

// Amount checks a money amount: its sign, at most decimals digits after the point (trailing
// zeros as written count: 10.100 has three) and at most intDigits digits before it (what the
// DECIMAL column and the upstream hold).
func (p *Problems) Amount(field string, d decimal.Decimal, sign Sign, decimals, intDigits int) bool {
	switch {
	case sign == Positive && !d.IsPositive():
		p.Add(field, "must be greater than zero")
	case sign == NonNegative && d.IsNegative():
		p.Add(field, "must not be negative")
	case -int(d.Exponent()) > decimals:
		p.Add(field, "must have at most "+strconv.Itoa(decimals)+" decimal places")
	case IntegerDigits(d) > intDigits:
		p.Add(field, "must have at most "+strconv.Itoa(intDigits)+" digits before the decimal point")
	default:
		return true
	}
	return false
}

// IntegerDigits counts the digits of d before the point, leading zeros aside (0 for 0.5).
func IntegerDigits(d decimal.Decimal) int {
	return max(d.NumDigits()+int(d.Exponent()), 0)
}

// PlainDecimal reports whether s is a number in plain decimal notation: an optional minus,
// digits, and optionally a point followed by digits. No exponent (1e-999999999 would make
// rounding allocate without bound), no plus, no spaces, no separators: what a DECIMAL column and
// the upstreams take as it is.
func PlainDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole, frac, hasPoint := strings.Cut(s, ".")
	return allDigits(whole) && (!hasPoint || allDigits(frac))
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
