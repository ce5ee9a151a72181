package topup

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/shopspring/decimal"
)

// ProductPrefix is the prefix every ERP top-up product code carries ("RECCARRIER*").
const ProductPrefix = "RECCARRIER"

// AmountTolerance is the largest difference between a webhook amount and the mapped amount
// that still counts as equal; a larger one is rejected with ReasonAmountMismatch.
var AmountTolerance = decimal.RequireFromString("0.01")

// Product maps an ERP product code to the carrier offer (the two are never mixed) and carries
// the commercial amount the invoice must show.
type Product struct {
	ProductCode       string          `json:"product_code"`
	OfferID           string          `json:"offer_id"`
	ExternalOperation Operation       `json:"external_operation"`
	Description       string          `json:"description"`
	Amount            decimal.Decimal `json:"amount"`
}

// Products is the product mapping. It is configuration: DefaultProducts is the specification's
// table, ParseProducts and LoadProducts replace it (RECARGAS_PRODUCTS_FILE or
// RECARGAS_PRODUCTS in the service).
type Products struct {
	list   []Product
	byCode map[string]Product
}

// DefaultProducts is the specification's provisional table. The amounts are not in the
// specification: they are the face value each product code names (RECCARRIER3 -> 3.00, ...).
func DefaultProducts() *Products {
	p, err := NewProducts([]Product{
		{ProductCode: "RECCARRIER3", OfferID: "31", ExternalOperation: OperationPines, Description: "Pin 3", Amount: decimal.RequireFromString("3.00")},
		{ProductCode: "RECCARRIER5", OfferID: "30", ExternalOperation: OperationPines, Description: "Pin 5", Amount: decimal.RequireFromString("5.00")},
		{ProductCode: "RECCARRIER10", OfferID: "151", ExternalOperation: OperationPines, Description: "Pin 10", Amount: decimal.RequireFromString("10.00")},
		{ProductCode: "RECCARRIERDATOS3", OfferID: "150", ExternalOperation: OperationDatos, Description: "Data 3", Amount: decimal.RequireFromString("3.00")},
		{ProductCode: "RECCARRIERDATOS5", OfferID: "150", ExternalOperation: OperationDatos, Description: "Data 5", Amount: decimal.RequireFromString("5.00")},
	})
	if err != nil {
		panic(err) // the table above is a constant
	}
	return p
}

// NewProducts validates rows: a RECCARRIER* code given once, an offer id, a valid operation
// and a positive amount.
func NewProducts(rows []Product) (*Products, error) {
	if len(rows) == 0 {
		return nil, errors.New("topup: product mapping is empty")
	}
	p := &Products{byCode: make(map[string]Product, len(rows))}
	for i, r := range rows {
		r.ProductCode = strings.TrimSpace(r.ProductCode)
		r.OfferID = strings.TrimSpace(r.OfferID)
		switch {
		case !strings.HasPrefix(r.ProductCode, ProductPrefix):
			return nil, fmt.Errorf("topup: product mapping row %d: product_code %q does not start with %s", i+1, r.ProductCode, ProductPrefix)
		case r.OfferID == "":
			return nil, fmt.Errorf("topup: product mapping row %d (%s): offer_id is empty", i+1, r.ProductCode)
		case !r.ExternalOperation.Valid():
			return nil, fmt.Errorf("topup: product mapping row %d (%s): external_operation %q is not RECARGA_DATOS or RECARGA_PINES", i+1, r.ProductCode, r.ExternalOperation)
		case !r.Amount.IsPositive():
			return nil, fmt.Errorf("topup: product mapping row %d (%s): amount must be positive", i+1, r.ProductCode)
		}
		if _, dup := p.byCode[r.ProductCode]; dup {
			return nil, fmt.Errorf("topup: product mapping: product_code %s given twice", r.ProductCode)
		}
		p.byCode[r.ProductCode] = r
		p.list = append(p.list, r)
	}
	return p, nil
}

// ParseProducts reads a JSON array of Product, e.g.
//
//	[{"product_code":"RECCARRIER3","offer_id":"31","external_operation":"RECARGA_PINES","description":"Pin 3","amount":"3.00"}]
func ParseProducts(data []byte) (*Products, error) {
	var rows []Product
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rows); err != nil {
		return nil, fmt.Errorf("topup: product mapping: %w", err)
	}
	return NewProducts(rows)
}

// LoadProducts reads ParseProducts' format from a file.
func LoadProducts(path string) (*Products, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("topup: product mapping: %w", err)
	}
	return ParseProducts(data)
}

// Lookup returns the mapping of an ERP product code.
func (p *Products) Lookup(productCode string) (Product, bool) {
	r, ok := p.byCode[strings.TrimSpace(productCode)]
	return r, ok
}

// All returns the rows in their configured order.
func (p *Products) All() []Product { return append([]Product(nil), p.list...) }

// AmountMatches reports whether an invoice amount equals the mapped one within AmountTolerance.
func (r Product) AmountMatches(amount decimal.Decimal) bool {
	return amount.Sub(r.Amount).Abs().LessThanOrEqual(AmountTolerance)
}
