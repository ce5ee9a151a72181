package creditsystem

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem/internal/cartera"
	"github.com/platform/integrations/creditsystem/internal/xsd"
	"github.com/platform/integrations/upstream"
)

// ConsultarDeudaTarjetaRequest asks for a card's debt (POST /pagos/consulta-deuda); one of
// the two identifiers is required.
type ConsultarDeudaTarjetaRequest struct {
	NumeroTarjeta        string
	NumeroIdentificacion string
}

// ConsultarDeudaTarjetaResponse is the debt of a card.
type ConsultarDeudaTarjetaResponse struct {
	CodigoCliente    *int64
	NombreCliente    *string
	NumeroTarjeta    *string
	PagoContado      *decimal.Decimal // amount that settles the whole debt today
	PagoMinimo       *decimal.Decimal
	ValorMora        *decimal.Decimal
	ValorGestion     *decimal.Decimal
	ValorVencido     *decimal.Decimal
	FechaProximoPago *Date
	Raw              RawAnswer
}

// ConsultarDeudaTarjeta queries the debt of a card (Cartera). After a payment timed out,
// query the debt before anything else: the payment may have been applied.
func (c *Client) ConsultarDeudaTarjeta(ctx context.Context, req ConsultarDeudaTarjetaRequest) (_ *ConsultarDeudaTarjetaResponse, err error) {
	ctx, finish := upstream.StartCall(ctx)
	defer finish(&err)
	const op = "ConsultarDeudaTarjeta"
	if req.NumeroTarjeta == "" && req.NumeroIdentificacion == "" {
		return nil, missingFields(op, []string{"NumeroTarjeta or NumeroIdentificacion"})
	}
	in := &cartera.ConsultarDeudaTarjeta{OSolicitud: xsd.NewPtr(&cartera.SolicitudConsultarDeudaTarjetaVm{
		CCodigoEmpresa:        xsd.NewString(c.cfg.CodigoEmpresa),
		CNumeroIdentificacion: xsd.NewString(req.NumeroIdentificacion),
		CNumeroTarjeta:        xsd.NewString(req.NumeroTarjeta),
		CUsuario:              xsd.NewString(c.cfg.Usuario),
	})}
	out := &cartera.ConsultarDeudaTarjetaResponse{}
	body, status, err := c.call(ctx, c.cartera, op, in, out)
	if err != nil {
		return nil, err
	}
	r := out.ConsultarDeudaTarjetaResult.V
	if r == nil {
		return nil, nilResult(op, status)
	}
	if err := businessError(op, r.LError, r.NNumeroError, r.CTextoError); err != nil {
		return nil, err
	}
	return &ConsultarDeudaTarjetaResponse{
		CodigoCliente:    intPtr(r.NCodigoCliente),
		NombreCliente:    r.CNombreCliente.Ptr(),
		NumeroTarjeta:    r.CNumeroTarjeta.Ptr(),
		PagoContado:      r.NPagoContado.Ptr(),
		PagoMinimo:       r.NPagoMinimo.Ptr(),
		ValorMora:        r.NValorMora.Ptr(),
		ValorGestion:     r.NValorGestion.Ptr(),
		ValorVencido:     r.NValorVencido.Ptr(),
		FechaProximoPago: datePtr(r.DFechaProximoPago),
		Raw:              RawAnswer{envelope: body, result: r},
	}, nil
}

// Payment method codes of FormaPago.
const (
	FormaPagoEfectivo = "001" // cash
	FormaPagoCheque   = "002" // cheque
)

// FormaPago is one payment method; the bank fields are for cheques and empty for cash.
type FormaPago struct {
	Codigo                  string
	Valor                   decimal.Decimal
	InstitucionFinanciera   string
	NumeroDocumento         string
	NumeroCuenta            string
	IdentCuentaCorrentista  string
	NombreCuentaCorrentista string
}

// GrabarPagoTarjetaRequest applies a payment (POST /pagos/aplicar). The payment rules (sum of
// FormasPago, cheque data, not above the cash amount) are the caller's to check first.
type GrabarPagoTarjetaRequest struct {
	NumeroTarjeta string
	ValorPago     decimal.Decimal
	FechaPago     Date
	FormasPago    []FormaPago
}

// validate checks the members the specification makes required in GrabarPagoTarjeta
// (cNumeroTarjeta, dFechaPago, nValorPago, iFormaPagoVm; the constants come from Config)
// and the code of each payment method. A zero ValorPago is taken as not given.
func (req GrabarPagoTarjetaRequest) validate(op string) error {
	var missing []string
	if req.NumeroTarjeta == "" {
		missing = append(missing, "NumeroTarjeta")
	}
	if req.ValorPago.IsZero() {
		missing = append(missing, "ValorPago")
	}
	if req.FechaPago.IsZero() {
		missing = append(missing, "FechaPago")
	}
	if len(req.FormasPago) == 0 {
		missing = append(missing, "FormasPago")
	}
	for i, f := range req.FormasPago {
		if f.Codigo == "" {
			missing = append(missing, fmt.Sprintf("FormasPago[%d].Codigo", i))
		}
	}
	return missingFields(op, missing)
}

// GrabarPagoTarjetaResponse is an applied payment.
type GrabarPagoTarjetaResponse struct {
	NumeroOperacion   *int64
	FacturasAfectadas []FacturaAfectada
	RubrosAplicados   []Rubro
	Cupos             []Cupo // credit lines restored by the payment
	Raw               RawAnswer
}

// FacturaAfectada is an invoice a payment (or its reversal) touched.
type FacturaAfectada struct {
	NumeroFactura *string
	Valor         *decimal.Decimal
}

// Rubro is a concept a payment was applied to; the early-payment discount has a negative Valor.
type Rubro struct {
	Codigo        *string
	TipoDocumento *string
	Valor         *decimal.Decimal
}

// GrabarPagoTarjeta applies a payment (Cartera). It moves money: after a timeout never retry
// it; query the debt to learn whether it was applied.
func (c *Client) GrabarPagoTarjeta(ctx context.Context, req GrabarPagoTarjetaRequest) (_ *GrabarPagoTarjetaResponse, err error) {
	ctx, finish := upstream.StartCall(ctx)
	defer finish(&err)
	const op = "GrabarPagoTarjeta"
	if err := req.validate(op); err != nil {
		return nil, err
	}
	var formas *cartera.ArrayOfFormaPagoVm
	if len(req.FormasPago) > 0 {
		formas = &cartera.ArrayOfFormaPagoVm{FormaPagoVm: make([]*cartera.FormaPagoVm, len(req.FormasPago))}
		for i, f := range req.FormasPago {
			formas.FormaPagoVm[i] = &cartera.FormaPagoVm{
				CCodigo:                  xsd.NewString(f.Codigo),
				CIdentCuentaCorrentista:  xsd.NewString(f.IdentCuentaCorrentista),
				CInstitucionFinanciera:   xsd.NewString(f.InstitucionFinanciera),
				CNombreCuentaCorrentista: xsd.NewString(f.NombreCuentaCorrentista),
				CNumeroCuenta:            xsd.NewString(f.NumeroCuenta),
				CNumeroDocumento:         xsd.NewString(f.NumeroDocumento),
				NValor:                   xsd.NewDecimal(f.Valor),
			}
		}
	}
	in := &cartera.GrabarPagoTarjeta{OSolicitud: xsd.NewPtr(&cartera.SolicitudGrabarPagoTarjetaVm{
		CCodigoEmpresa: xsd.NewString(c.cfg.CodigoEmpresa),
		CNumeroTarjeta: xsd.NewString(req.NumeroTarjeta),
		CTerminal:      xsd.NewString(c.cfg.Terminal),
		CUsuario:       xsd.NewString(c.cfg.Usuario),
		DFechaPago:     req.FechaPago.xsd(),
		IFormaPagoVm:   xsd.NewPtr(formas),
		NValorPago:     xsd.NewDecimal(req.ValorPago),
	})}
	out := &cartera.GrabarPagoTarjetaResponse{}
	body, status, err := c.call(ctx, c.cartera, op, in, out)
	if err != nil {
		return nil, err
	}
	r := out.GrabarPagoTarjetaResult.V
	if r == nil {
		return nil, nilResult(op, status)
	}
	if err := businessError(op, r.LError, r.NNumeroError, r.CTextoError); err != nil {
		return nil, err
	}
	return &GrabarPagoTarjetaResponse{
		NumeroOperacion:   intPtr(r.NNumeroOperacion),
		FacturasAfectadas: facturas(r.OFacturaAfectadaVm.V),
		RubrosAplicados:   rubros(r.ORubroAplicadoVm.V),
		Cupos:             cupos(r.OTipoCupoVm.V),
		Raw:               RawAnswer{envelope: body, result: r},
	}, nil
}

// GrabarReversoPagoTarjetaRequest reverses a payment (POST /pagos/reverso).
type GrabarReversoPagoTarjetaRequest struct {
	NumeroOperacion int64
	MotivoReverso   string // optional
}

// GrabarReversoPagoTarjetaResponse is a reversed payment.
type GrabarReversoPagoTarjetaResponse struct {
	FacturasAfectadas []FacturaAfectada
	RubrosRevertidos  []Rubro
	Raw               RawAnswer
}

// GrabarReversoPagoTarjeta reverses a payment (Cartera).
func (c *Client) GrabarReversoPagoTarjeta(ctx context.Context, req GrabarReversoPagoTarjetaRequest) (_ *GrabarReversoPagoTarjetaResponse, err error) {
	ctx, finish := upstream.StartCall(ctx)
	defer finish(&err)
	const op = "GrabarReversoPagoTarjeta"
	// nNumeroOperacion is required; operation numbers are positive.
	if req.NumeroOperacion <= 0 {
		return nil, missingFields(op, []string{"NumeroOperacion"})
	}
	in := &cartera.GrabarReversoPagoTarjeta{OSolicitud: xsd.NewPtr(&cartera.SolicitudGrabarReversoPagoTarjetaVm{
		CCodigoEmpresa:   xsd.NewString(c.cfg.CodigoEmpresa),
		CMotivoReverso:   xsd.NewString(req.MotivoReverso),
		CTerminal:        xsd.NewString(c.cfg.Terminal),
		CUsuario:         xsd.NewString(c.cfg.Usuario),
		NNumeroOperacion: xsd.NewInt(req.NumeroOperacion),
	})}
	out := &cartera.GrabarReversoPagoTarjetaResponse{}
	body, status, err := c.call(ctx, c.cartera, op, in, out)
	if err != nil {
		return nil, err
	}
	r := out.GrabarReversoPagoTarjetaResult.V
	if r == nil {
		return nil, nilResult(op, status)
	}
	if err := businessError(op, r.LError, r.NNumeroError, r.CTextoError); err != nil {
		return nil, err
	}
	return &GrabarReversoPagoTarjetaResponse{
		FacturasAfectadas: facturas(r.OFacturaAfectadaVm.V),
		RubrosRevertidos:  rubros(r.ORubroAplicadoVm.V),
		Raw:               RawAnswer{envelope: body, result: r},
	}, nil
}

func facturas(a *cartera.ArrayOfFacturaAfectadaVm) []FacturaAfectada {
	if a == nil {
		return nil
	}
	var out []FacturaAfectada
	for _, f := range a.FacturaAfectadaVm {
		if f != nil {
			out = append(out, FacturaAfectada{NumeroFactura: f.CNumeroFactura.Ptr(), Valor: f.NValor.Ptr()})
		}
	}
	return out
}

func rubros(a *cartera.ArrayOfRubroAplicadoVm) []Rubro {
	if a == nil {
		return nil
	}
	var out []Rubro
	for _, r := range a.RubroAplicadoVm {
		if r != nil {
			out = append(out, Rubro{Codigo: r.CCodigo.Ptr(), TipoDocumento: r.CTipoDocumento.Ptr(), Valor: r.NValor.Ptr()})
		}
	}
	return out
}
