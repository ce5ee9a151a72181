package carrier

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/platform/integrations/carrier/internal/umsprot"
	"github.com/platform/integrations/upstream"
)

// TopupRequest is one pin or data top-up (sre_topupd_76186).
type TopupRequest struct {
	ExternalOperation     string // ExternalOperationData or ExternalOperationPins
	ExternalTransactionID string // our unique id; see NewExternalTransactionID
	OfferID               string // carrier offer id, never an ERP product code
	SubscriberID          string // 12 digits, 593 then 8 or 9
	Quantity              int    // at least 1
}

func (r TopupRequest) validate() error {
	var problems []string
	if r.ExternalOperation != ExternalOperationData && r.ExternalOperation != ExternalOperationPins {
		problems = append(problems, fmt.Sprintf("EXTERNALOPERATION must be %s or %s", ExternalOperationData, ExternalOperationPins))
	}
	problems = required(problems, "EXTERNALTRANSACTIONID", r.ExternalTransactionID)
	problems = required(problems, "OFFERID", r.OfferID)
	problems = required(problems, "SUBSCRIBERID", r.SubscriberID)
	if r.Quantity < 1 {
		problems = append(problems, "QUANTITY must be at least 1")
	}
	return invalid(FunctionTopup, problems)
}

// Topup executes a top-up. The carrier keys it by ExternalTransactionID:
// sending the same id again must not top up twice, which is what makes a
// retry after reconciliation safe. A timed-out top-up is never retried here.
//
// The returned *Result is never nil, also when err is not: it carries the
// Exchange for the audit log. err is nil only for STATUS=SUCCESS with
// ID_CODIGO=0; otherwise it is an *Error, a *FaultError, a *TransportError or
// wraps ErrInvalidRequest (see the package doc, "Errors").
func (c *Client) Topup(ctx context.Context, r TopupRequest) (_ *Result, err error) {
	ctx, finish := upstream.StartCall(ctx)
	defer finish(&err)
	if err := r.validate(); err != nil {
		return &Result{Exchange: Exchange{Function: FunctionTopup}}, err
	}
	res, _, err := c.call(ctx, FunctionTopup, r.ExternalTransactionID, []umsprot.Data{
		{Name: "EXTERNALOPERATION", Value: r.ExternalOperation},
		{Name: "EXTERNALTRANSACTIONID", Value: r.ExternalTransactionID},
		{Name: "OFFERID", Value: r.OfferID},
		{Name: "SUBSCRIBERID", Value: r.SubscriberID},
		{Name: "QUANTITY", Value: strconv.Itoa(r.Quantity)},
	})
	return res, err
}

// QueryRequest asks for the carrier's record of a top-up
// (sre_consulta_recarga). Both fields are required.
type QueryRequest struct {
	ExternalTransactionID string
	OfferID               string
}

// QueryRecharge returns the carrier's state of a top-up, for reconciliation.
// A nil error means the carrier has it as SUCCESS. The carrier answers
// STATUS=ERROR with ID_CODIGO 1 (an *Error) when it does not know the id,
// when the offer does not match, or when the credentials are wrong; only
// MENSAJE tells these apart. The Result is never nil, as for Topup.
func (c *Client) QueryRecharge(ctx context.Context, r QueryRequest) (_ *Result, err error) {
	ctx, finish := upstream.StartCall(ctx)
	defer finish(&err)
	var problems []string
	problems = required(problems, "EXTERNALTRANSACTIONID", r.ExternalTransactionID)
	problems = required(problems, "OFFERID", r.OfferID)
	if err := invalid(FunctionQueryRecharge, problems); err != nil {
		return &Result{Exchange: Exchange{Function: FunctionQueryRecharge}}, err
	}
	res, _, err := c.call(ctx, FunctionQueryRecharge, r.ExternalTransactionID, append(c.credentials(),
		umsprot.Data{Name: "EXTERNALTRANSACTIONID", Value: r.ExternalTransactionID},
		umsprot.Data{Name: "OFFERID", Value: r.OfferID},
	))
	return res, err
}

// Inventory returns the stock of every offer (sre_consulta_inventario). The
// specification leaves the call's shape open: it is sent with the
// credentials, like sre_consulta_recarga, and the answer carries, after
// the usual status elements, one OFFERID, DESCRIPCION, CANTIDAD run per
// offer. A successful answer whose items cannot be read is
// ErrMalformedAnswer. The *Inventory is never nil, as Topup's Result.
func (c *Client) Inventory(ctx context.Context) (_ *Inventory, err error) {
	ctx, finish := upstream.StartCall(ctx)
	defer finish(&err)
	res, rsp, err := c.call(ctx, FunctionQueryInventory, "", c.credentials())
	inv := &Inventory{Result: *res}
	if err != nil {
		return inv, err
	}
	items, perr := inventoryItems(rsp)
	if perr != nil {
		err = &TransportError{Op: FunctionQueryInventory, HTTPStatus: res.Exchange.HTTPStatus, Err: fmt.Errorf("%w: %s", ErrMalformedAnswer, c.scrub(perr.Error()))}
		inv.Diagnostic = c.scrub(err.Error())
		return inv, err
	}
	inv.Items = items
	return inv, nil
}

func (c *Client) credentials() []umsprot.Data {
	return []umsprot.Data{
		{Name: "USERID", Value: c.cfg.User},
		{Name: "PASSWORD", Value: c.cfg.Password},
		{Name: "COMPANYID", Value: c.cfg.CompanyID},
	}
}

func inventoryItems(rsp *umsprot.Response) ([]InventoryItem, error) {
	var (
		items   []InventoryItem
		counted []bool
	)
	for _, d := range rsp.Data {
		v := strings.TrimSpace(d.Value)
		switch d.Name {
		case "OFFERID":
			items = append(items, InventoryItem{OfferID: v})
			counted = append(counted, false)
		case "DESCRIPCION", "CANTIDAD":
			if len(items) == 0 {
				return nil, fmt.Errorf("%s before any OFFERID", d.Name)
			}
			last := len(items) - 1
			if d.Name == "DESCRIPCION" {
				items[last].Description = v
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("CANTIDAD %q of offer %s is not a count", v, items[last].OfferID)
			}
			items[last].Available = n
			counted[last] = true
		}
	}
	for i, ok := range counted {
		if !ok {
			return nil, fmt.Errorf("offer %s has no CANTIDAD", items[i].OfferID)
		}
	}
	return items, nil
}

func required(problems []string, name, v string) []string {
	if strings.TrimSpace(v) == "" {
		return append(problems, name+" is required")
	}
	return problems
}

func invalid(fn string, problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s: %s", ErrInvalidRequest, fn, strings.Join(problems, "; "))
}
