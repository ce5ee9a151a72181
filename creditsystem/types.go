package creditsystem

import (
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem/internal/xsd"
)

// Date is a calendar date, written yyyy-mm-dd in JSON and as the xs:dateTime of its midnight
// without a zone on the wire (2025-03-10T00:00:00).
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// NewDate returns the date year-month-day.
func NewDate(year int, month time.Month, day int) Date {
	return Date{Year: year, Month: month, Day: day}
}

// DateOf returns the date of t in t's location.
func DateOf(t time.Time) Date { return Date{Year: t.Year(), Month: t.Month(), Day: t.Day()} }

// ParseDate parses yyyy-mm-dd.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(xsd.DateLayout, s)
	if err != nil {
		return Date{}, fmt.Errorf("creditsystem: date %q is not yyyy-mm-dd", s)
	}
	return DateOf(t), nil
}

// IsZero reports whether d is the zero Date.
func (d Date) IsZero() bool { return d == Date{} }

// String returns yyyy-mm-dd.
func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day) }

// In returns midnight of d in loc.
func (d Date) In(loc *time.Location) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
}

// MarshalText implements encoding.TextMarshaler (JSON "yyyy-mm-dd").
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Date) UnmarshalText(b []byte) error {
	p, err := ParseDate(string(b))
	if err != nil {
		return err
	}
	*d = p
	return nil
}

func (d Date) xsd() xsd.Date {
	if d.IsZero() {
		return xsd.Date{}
	}
	return xsd.NewDate(d.Year, d.Month, d.Day)
}

func datePtr(d xsd.Date) *Date {
	if !d.Valid {
		return nil
	}
	return &Date{Year: d.Year, Month: d.Month, Day: d.Day}
}

// RawAnswer is an upstream answer as received, for audit records such as the service's
// creditsystem_auth_response. Marshalled to JSON it is the result DataContract with the SOAP
// member names (cNumeroAutorizacion, lError, ...), exact decimals as numbers, dates as
// "yyyy-mm-dd" and nil or empty members as null.
type RawAnswer struct {
	envelope []byte
	result   any
}

// XML returns the SOAP envelope as received. The slice must not be modified.
func (r RawAnswer) XML() []byte { return r.envelope }

// MarshalJSON implements json.Marshaler. Its bytes are compact: a caller that stores them may
// take them as they are rather than through json.Marshal, which checks them again.
func (r RawAnswer) MarshalJSON() ([]byte, error) {
	if r.result == nil {
		return []byte("null"), nil
	}
	return xsd.AppendJSON(make([]byte, 0, 1024), r.result)
}

// Articulo is an item of a purchase (the REST ArticuloConsumoDto).
type Articulo struct {
	CodigoArticulo     string
	TextoArticulo      string
	Cantidad           int
	Precio             decimal.Decimal
	CodigoTipoArticulo string
	// Caracteristicas are pairs "<code>:<value>" joined by "-".
	Caracteristicas string
}

// Cupo is a credit line (oTipoCupoVm item) with its operation types.
type Cupo struct {
	CodigoTipoCupo      *string
	DescripcionTipoCupo *string
	CupoAsignado        *decimal.Decimal
	CupoDisponible      *decimal.Decimal
	CupoUtilizado       *decimal.Decimal
	Operaciones         []TipoOperacion
}

// TipoOperacion is the credit available for one operation type of a line.
type TipoOperacion struct {
	CodigoTipoOperacion      *string
	DescripcionTipoOperacion *string
	CupoDisponibleOpe        *decimal.Decimal
}

func intPtr(i xsd.Int) *int64 {
	if !i.Valid {
		return nil
	}
	v := i.Value
	return &v
}

func smallIntPtr(i xsd.Int) *int {
	if !i.Valid {
		return nil
	}
	v := int(i.Value)
	return &v
}

func decimalOrNil(d *decimal.Decimal) xsd.Decimal {
	if d == nil {
		return xsd.Decimal{}
	}
	return xsd.NewDecimal(*d)
}
