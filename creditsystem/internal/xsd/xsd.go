// Package xsd holds the XML Schema value types that the post-processed gowsdl code uses in
// place of gowsdl's own choices (float64, *string, soap.XSDDateTime).
//
// Every type carries a Valid flag, because WCF marks absent values with xsi:nil="true" and
// gowsdl v0.5.0 decodes both that and an empty element to a zero value (or a pointer to
// one), which loses the difference between "0" and "no value" that the credit service must
// return as JSON null. On the way out an invalid value is omitted (minOccurs="0"), which a
// WCF DataContractSerializer reads as null.
package xsd

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// InstanceNamespace is the namespace of the xsi:nil attribute.
const InstanceNamespace = "http://www.w3.org/2001/XMLSchema-instance"

// Texter is implemented by every type of this package; the fake server uses it to write
// WCF-style XML without going through encoding/xml.
type Texter interface {
	// XMLText returns the lexical form and whether there is a value at all.
	XMLText() (string, bool)
}

// isNil reports whether the element carries xsi:nil="true".
func isNil(start xml.StartElement) bool {
	for _, a := range start.Attr {
		if a.Name.Local == "nil" && a.Name.Space == InstanceNamespace {
			v := strings.TrimSpace(a.Value)
			return v == "true" || v == "1"
		}
	}
	return false
}

// text reads the character data of an element; child elements are an error, since every
// type here is a simple type.
func text(d *xml.Decoder, start xml.StartElement) (string, error) {
	var b strings.Builder
	for {
		tok, err := d.Token()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.StartElement:
			return "", fmt.Errorf("xsd: element <%s> inside simple element <%s>", t.Name.Local, start.Name.Local)
		case xml.EndElement:
			return b.String(), nil
		}
	}
}

// String is a nillable xs:string. An empty element decodes as invalid: the specification
// turns empty nodes into null just like nil ones.
type String struct {
	Value string
	Valid bool
}

// NewString returns a valid String; an empty s gives an invalid one (omitted on the wire).
func NewString(s string) String { return String{Value: s, Valid: s != ""} }

// Ptr returns nil for an invalid String.
func (s String) Ptr() *string {
	if !s.Valid {
		return nil
	}
	v := s.Value
	return &v
}

// XMLText implements Texter.
func (s String) XMLText() (string, bool) { return s.Value, s.Valid }

// MarshalXML omits an invalid value.
func (s String) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	if !s.Valid {
		return nil
	}
	return e.EncodeElement(s.Value, start)
}

// UnmarshalXML implements xml.Unmarshaler.
func (s *String) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	v, err := text(d, start)
	if err != nil {
		return err
	}
	if isNil(start) || v == "" {
		*s = String{}
		return nil
	}
	*s = String{Value: v, Valid: true}
	return nil
}

// MarshalJSON writes null for an invalid value.
func (s String) MarshalJSON() ([]byte, error) {
	if !s.Valid {
		return []byte("null"), nil
	}
	return json.Marshal(s.Value)
}

// Decimal is an xs:decimal carried as an exact decimal, never as a float: gowsdl's float64
// writes 1000000 as "1e+06", which xs:decimal (and .NET) rejects.
type Decimal struct {
	Decimal decimal.Decimal
	Valid   bool
}

// NewDecimal returns a valid Decimal.
func NewDecimal(d decimal.Decimal) Decimal { return Decimal{Decimal: d, Valid: true} }

// Ptr returns nil for an invalid Decimal.
func (d Decimal) Ptr() *decimal.Decimal {
	if !d.Valid {
		return nil
	}
	v := d.Decimal
	return &v
}

// FormatDecimal writes plain decimal text with at least two decimal places, the way money
// is written in the specification (1000000.00, 0.01); more places are kept as they are.
func FormatDecimal(d decimal.Decimal) string {
	if d.Exponent() >= -2 || d.Equal(d.Truncate(2)) {
		return d.StringFixed(2)
	}
	return d.String() // plain text, trailing zeros dropped, never an exponent
}

// maxDecimalLen bounds what we accept from the wire: numeric(18,2) needs 21 characters;
// the margin is for other scales, the bound is against absurd input.
const maxDecimalLen = 64

// ParseDecimal parses the xs:decimal lexical form: an optional sign, digits, an optional
// fraction. Exponents are not part of xs:decimal and are refused.
func ParseDecimal(s string) (decimal.Decimal, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxDecimalLen {
		return decimal.Decimal{}, fmt.Errorf("xsd: invalid decimal %q", clip(s))
	}
	digits, dot := 0, false
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.' && !dot:
			dot = true
		case (r == '-' || r == '+') && i == 0:
		default:
			return decimal.Decimal{}, fmt.Errorf("xsd: invalid decimal %q", clip(s))
		}
	}
	if digits == 0 {
		return decimal.Decimal{}, fmt.Errorf("xsd: invalid decimal %q", clip(s))
	}
	if s[0] == '+' {
		s = s[1:]
	}
	return decimal.NewFromString(s)
}

// XMLText implements Texter.
func (d Decimal) XMLText() (string, bool) {
	if !d.Valid {
		return "", false
	}
	return FormatDecimal(d.Decimal), true
}

// MarshalXML omits an invalid value and writes plain decimal text otherwise.
func (d Decimal) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	if !d.Valid {
		return nil
	}
	return e.EncodeElement(FormatDecimal(d.Decimal), start)
}

// UnmarshalXML implements xml.Unmarshaler.
func (d *Decimal) UnmarshalXML(dec *xml.Decoder, start xml.StartElement) error {
	v, err := text(dec, start)
	if err != nil {
		return err
	}
	if isNil(start) || strings.TrimSpace(v) == "" {
		*d = Decimal{}
		return nil
	}
	n, err := ParseDecimal(v)
	if err != nil {
		return err
	}
	*d = Decimal{Decimal: n, Valid: true}
	return nil
}

// MarshalJSON writes the exact decimal as a JSON number, or null.
func (d Decimal) MarshalJSON() ([]byte, error) {
	if !d.Valid {
		return []byte("null"), nil
	}
	return []byte(FormatDecimal(d.Decimal)), nil
}

// Int is an xs:int or xs:long.
type Int struct {
	Value int64
	Valid bool
}

// NewInt returns a valid Int.
func NewInt(v int64) Int { return Int{Value: v, Valid: true} }

// XMLText implements Texter.
func (i Int) XMLText() (string, bool) {
	if !i.Valid {
		return "", false
	}
	return strconv.FormatInt(i.Value, 10), true
}

// MarshalXML omits an invalid value.
func (i Int) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	if !i.Valid {
		return nil
	}
	return e.EncodeElement(strconv.FormatInt(i.Value, 10), start)
}

// UnmarshalXML implements xml.Unmarshaler.
func (i *Int) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	v, err := text(d, start)
	if err != nil {
		return err
	}
	v = strings.TrimSpace(v)
	if isNil(start) || v == "" {
		*i = Int{}
		return nil
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(v, "+"), 10, 64)
	if err != nil {
		return fmt.Errorf("xsd: invalid integer %q", clip(v))
	}
	*i = Int{Value: n, Valid: true}
	return nil
}

// MarshalJSON writes a JSON number or null.
func (i Int) MarshalJSON() ([]byte, error) {
	if !i.Valid {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, i.Value, 10), nil
}

// Date is a calendar date carried in an xs:dateTime (System.DateTime). It is written as
// midnight without a zone (2025-03-10T00:00:00), the way WCF's DataContractSerializer writes a
// DateTime of Kind Unspecified: the WSDL types every date member xs:dateTime, and a bare
// yyyy-mm-dd (the specification's notation for dFechaPago) is not one, so a
// schema-validating server faults on it. It is read from either a date or a dateTime, keeping
// the date as written (no time-zone conversion). .NET's DateTime.MinValue (0001-01-01), which
// WCF sends for an unset DateTime, reads as no value. JSON and String keep yyyy-mm-dd.
type Date struct {
	Year  int
	Month time.Month
	Day   int
	Valid bool
}

// DateLayout is the JSON and String form of a Date, and its date part on the wire.
const DateLayout = "2006-01-02"

// midnight completes a date into the xs:dateTime that goes on the wire.
const midnight = "T00:00:00"

// NewDate returns a valid Date.
func NewDate(year int, month time.Month, day int) Date {
	return Date{Year: year, Month: month, Day: day, Valid: true}
}

var dateTimeLayouts = []string{
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02Z07:00",
}

// ParseDate accepts yyyy-mm-dd and the xs:dateTime forms WCF writes.
func ParseDate(s string) (Date, error) {
	s = strings.TrimSpace(s)
	if len(s) < len(DateLayout) || len(s) > 40 {
		return Date{}, fmt.Errorf("xsd: invalid date %q", clip(s))
	}
	t, err := time.Parse(DateLayout, s[:len(DateLayout)])
	if err != nil {
		return Date{}, fmt.Errorf("xsd: invalid date %q", clip(s))
	}
	if len(s) > len(DateLayout) {
		ok := false
		for _, layout := range dateTimeLayouts {
			if _, err := time.Parse(layout, s); err == nil {
				ok = true
				break
			}
		}
		if !ok {
			return Date{}, fmt.Errorf("xsd: invalid date %q", clip(s))
		}
	}
	if t.Year() == 1 && t.Month() == time.January && t.Day() == 1 {
		return Date{}, nil
	}
	return NewDate(t.Year(), t.Month(), t.Day()), nil
}

// String formats a valid date as yyyy-mm-dd and an invalid one as "".
func (d Date) String() string {
	if !d.Valid {
		return ""
	}
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
}

// XMLText implements Texter: the xs:dateTime yyyy-mm-ddT00:00:00.
func (d Date) XMLText() (string, bool) {
	if !d.Valid {
		return "", false
	}
	return d.String() + midnight, true
}

// MarshalXML omits an invalid value and writes yyyy-mm-ddT00:00:00 otherwise.
func (d Date) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	s, ok := d.XMLText()
	if !ok {
		return nil
	}
	return e.EncodeElement(s, start)
}

// UnmarshalXML implements xml.Unmarshaler.
func (d *Date) UnmarshalXML(dec *xml.Decoder, start xml.StartElement) error {
	v, err := text(dec, start)
	if err != nil {
		return err
	}
	if isNil(start) || strings.TrimSpace(v) == "" {
		*d = Date{}
		return nil
	}
	p, err := ParseDate(v)
	if err != nil {
		return err
	}
	*d = p
	return nil
}

// MarshalJSON writes "yyyy-mm-dd" or null.
func (d Date) MarshalJSON() ([]byte, error) {
	if !d.Valid {
		return []byte("null"), nil
	}
	return json.Marshal(d.String())
}

func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}

// Ptr is a nillable DataContract member (a complex type or a list). encoding/xml allocates a
// pointer for <x i:nil="true"/> and for <x/>, so a plain *T cannot tell them from a value;
// Ptr leaves V nil for both, as the specification's "nil or empty becomes null" asks, and
// for an absent element. An element with at least one child element is a value, even when
// every member it carries is a zero value (<x><lError>false</lError></x>).
type Ptr[T any] struct {
	V *T
}

// NewPtr returns a Ptr holding v.
func NewPtr[T any](v *T) Ptr[T] { return Ptr[T]{V: v} }

// Pointer is implemented by every Ptr; the fake server uses it to write members.
type Pointer interface {
	// Pointee returns the *T held, or nil.
	Pointee() any
}

// Pointee implements Pointer.
func (p Ptr[T]) Pointee() any {
	if p.V == nil {
		return nil
	}
	return p.V
}

// MarshalXML omits a nil value.
func (p Ptr[T]) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	if p.V == nil {
		return nil
	}
	return e.EncodeElement(p.V, start)
}

// UnmarshalXML implements xml.Unmarshaler. Whether the element is empty is decided by its
// tokens, not by the decoded value: a value whose members all decode to zero is still a value.
func (p *Ptr[T]) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	p.V = nil
	if isNil(start) {
		return d.Skip()
	}
	if r, ok := counterOf(d); ok {
		// Under DecodeByLocalName or another Ptr: decode in place and count the child
		// elements read.
		v := new(T)
		before := r.startsRead()
		if err := d.DecodeElement(v, &start); err != nil {
			return err
		}
		if r.startsRead() > before {
			p.V = v
		}
		return nil
	}
	for {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return nil // no child element: an empty element
		case xml.StartElement:
			// The first child is already read: replay start and it in front of the rest.
			v := new(T)
			r := &replay{toks: []xml.Token{start.Copy(), t.Copy()}, d: d}
			if err := decodeCounted(r, v); err != nil {
				return err
			}
			p.V = v
			return nil
		}
		// Character data, comments and processing instructions are not content of a
		// complex type.
	}
}

// replay yields toks and then the tokens of d up to the end element that closes toks[0].
type replay struct {
	toks   []xml.Token
	d      *xml.Decoder
	depth  int
	starts int
}

func (r *replay) startsRead() int { return r.starts }

func (r *replay) Token() (xml.Token, error) {
	var tok xml.Token
	if len(r.toks) > 0 {
		tok, r.toks = r.toks[0], r.toks[1:]
	} else {
		if r.depth == 0 {
			return nil, io.EOF
		}
		t, err := r.d.Token()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		tok = t
	}
	switch t := tok.(type) {
	case xml.StartElement:
		r.depth++
		r.starts++
	case xml.EndElement:
		r.depth--
	case xml.CharData:
		return t.Copy(), nil
	}
	return tok, nil
}

// MarshalJSON writes null for a nil value.
func (p Ptr[T]) MarshalJSON() ([]byte, error) {
	if p.V == nil {
		return []byte("null"), nil
	}
	return json.Marshal(p.V)
}
