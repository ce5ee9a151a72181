package creditsystemtest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// The in-memory creditsystem: cards with one credit line, authorizations, consumptions with
// their amortization tables, payments. Arithmetic is exact (decimal) and adds up: the
// installments of a table sum to the invoiced capital plus the total interest, the rubros of a
// payment sum to the amount paid.

var (
	monthlyRate  = decimal.RequireFromString("0.015") // flat interest per month
	moraRate     = decimal.RequireFromString("0.02")  // on overdue amounts
	warrantyRate = decimal.RequireFromString("0.05")  // extended warranty, spread over the term
	downRate     = decimal.RequireFromString("0.10")  // minimum down payment on long terms
)

// Fake business error codes (nNumeroError). Only 2 and 51 are part of the design; the others
// are this fake's own and documented in doc.go.
const (
	CodeMissingAccess       = 1
	CodeCardNotFound        = 2
	CodeMissingCard         = 3
	CodeAuthNotFound        = 20
	CodeInvalidState        = 21
	CodeInvoiceAboveAuth    = 22
	CodeConsumoNotFound     = 23
	CodeInvalidAmount       = 30
	CodeInsufficientCredit  = 51
	CodeInvalidOTP          = 60
	CodePaymentSumMismatch  = 70
	CodePaymentAboveContado = 71
	CodeInvalidFormaPago    = 72
	CodeNoDebt              = 73
	CodePaymentRejected     = 74
	CodePaymentNotFound     = 80
	CodePaymentReversed     = 81
)

// MaxPlazo is the longest term, in monthly installments, the fake accepts (30 years). The fake
// builds one amortization row per installment, so GrabarAutorizacion with a longer nPlazo (and
// GrabarConsumo adopting an earlier run's authorization with one, see WithFirstAuthorization)
// answers lError true, nNumeroError CodeInvalidAmount (30) instead of building it.
const MaxPlazo = 360

// validPlazo reports whether plazo is a term the fake builds a table for. Every path that
// reaches table checks it first.
func validPlazo(plazo int) bool { return plazo >= 1 && plazo <= MaxPlazo }

func errPlazo(plazo int) *bizErr {
	return biz(CodeInvalidAmount, "Monto o plazo inválido: el plazo %d no está entre 1 y %d cuotas", plazo, MaxPlazo)
}

type bizErr struct {
	code int
	msg  string
}

func (e *bizErr) Error() string { return fmt.Sprintf("%d: %s", e.code, e.msg) }

func biz(code int, format string, args ...any) *bizErr {
	return &bizErr{code: code, msg: fmt.Sprintf(format, args...)}
}

func round2(d decimal.Decimal) decimal.Decimal { return d.Round(2) }

type card struct {
	numero         string
	identificacion string
	cliente        string
	codigoCliente  int64
	activacion     time.Time
	asignado       decimal.Decimal
	utilizado      decimal.Decimal
	ultimaCompra   *time.Time
	ultimoPago     *time.Time
}

func (c *card) disponible() decimal.Decimal { return c.asignado.Sub(c.utilizado) }

const (
	estadoAutorizada = "AUTORIZADA"
	estadoConsumida  = "CONSUMIDA"
	estadoReversada  = "REVERSADA"
)

type auth struct {
	id              string
	numeroOperacion int64
	card            *card
	monto           decimal.Decimal
	plazo           int
	estado          string
	otp             string
}

type cuota struct {
	numero        int
	vence         time.Time
	capital       decimal.Decimal
	interes       decimal.Decimal
	pagadoCapital decimal.Decimal
	pagadoInteres decimal.Decimal
}

func (q *cuota) capPend() decimal.Decimal { return q.capital.Sub(q.pagadoCapital) }
func (q *cuota) intPend() decimal.Decimal { return q.interes.Sub(q.pagadoInteres) }

type consumo struct {
	auth            *auth
	card            *card
	factura         string
	facturado       decimal.Decimal
	numeroOperacion int64
	cuotas          []*cuota
	activo          bool
}

type aplicacion struct {
	cuota   *cuota
	capital decimal.Decimal
	interes decimal.Decimal
}

type rubroPago struct {
	codigo, tipoDocumento string
	valor                 decimal.Decimal
}

type facturaPago struct {
	factura string
	valor   decimal.Decimal
}

type pago struct {
	numeroOperacion int64
	card            *card
	aplicaciones    []aplicacion
	capital         decimal.Decimal
	rubros          []rubroPago
	facturas        []facturaPago
	reversado       bool
}

type bank struct {
	now      func() time.Time
	line     decimal.Decimal
	cards    map[string]*card // by card number and by identification
	auths    map[string]*auth
	consumos []*consumo
	pagos    map[int64]*pago
	seqOp    int64
	seqAuth  int
	seqCli   int64
	// adoptBelow is the first authorization number of this run when WithFirstAuthorization
	// set one (0 otherwise): see earlierAuth.
	adoptBelow int
	// fixedLines (WithFixedCreditLines): no operation consumes or restores a line, see use.
	fixedLines bool
}

func newBank(now func() time.Time, line decimal.Decimal, fixedLines bool) *bank {
	return &bank{
		now:        now,
		line:       line,
		fixedLines: fixedLines,
		cards:      map[string]*card{},
		auths:      map[string]*auth{},
		pagos:      map[int64]*pago{},
		seqOp:      100000,
	}
}

// use moves a card's used credit by delta (positive: an operation takes credit, negative: it
// gives it back). With fixed lines it does nothing: every card keeps its whole line.
func (b *bank) use(c *card, delta decimal.Decimal) {
	if b.fixedLines {
		return
	}
	c.utilizado = c.utilizado.Add(delta)
}

// usedAfter is the used credit an answer reports after an operation that took own of the line
// (zero for a query or an operation that gives credit back). Normally it is the card's running
// total; with fixed lines the line is never consumed, so it is the operation's own amount alone
// (within 0 and the line): GrabarConsumo of 3000.00 on a 5000.00 line reports 2000.00
// available, whatever came before.
func (b *bank) usedAfter(c *card, own decimal.Decimal) decimal.Decimal {
	if !b.fixedLines {
		return c.utilizado
	}
	return decimal.Min(decimal.Max(own, decimal.Zero), c.asignado)
}

func (b *bank) today() time.Time {
	t := b.now()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

func (b *bank) nextOp() int64 {
	b.seqOp++
	return b.seqOp
}

// card finds or opens the card of a customer. IdentificacionCardNotFound, as card number or as
// identification, is a customer without card.
func (b *bank) card(numero, identificacion string) (*card, *bizErr) {
	if numero == IdentificacionCardNotFound || identificacion == IdentificacionCardNotFound {
		return nil, biz(CodeCardNotFound, "Cliente no tiene tarjeta")
	}
	if numero == "" && identificacion == "" {
		return nil, biz(CodeMissingCard, "Debe indicar el número de tarjeta o la identificación")
	}
	if c, ok := b.cards[numero]; ok && numero != "" {
		return c, nil
	}
	if c, ok := b.cards[identificacion]; ok && identificacion != "" {
		return c, nil
	}
	key := numero
	if key == "" {
		key = identificacion
	}
	if identificacion == "" {
		identificacion = key
	}
	b.seqCli++
	c := &card{
		numero:         key,
		identificacion: identificacion,
		cliente:        "CLIENTE " + identificacion,
		codigoCliente:  1000 + b.seqCli,
		activacion:     b.today().AddDate(-1, 0, 0),
		asignado:       b.line,
	}
	b.cards[key] = c
	b.cards[identificacion] = c
	return c, nil
}

// table splits capital and flat interest over plazo installments; the last one takes the
// rounding remainder so that both columns add up exactly.
// Callers check validPlazo first: the table has one row per installment.
func table(capital decimal.Decimal, plazo int, first time.Time) (cuotas []*cuota, interesTotal decimal.Decimal) {
	n := decimal.NewFromInt(int64(plazo))
	interesTotal = round2(capital.Mul(monthlyRate).Mul(n))
	capCuota := capital.Div(n).RoundDown(2)
	intCuota := interesTotal.Div(n).RoundDown(2)
	capRest, intRest := capital, interesTotal
	for i := 1; i <= plazo; i++ {
		q := &cuota{numero: i, vence: first.AddDate(0, i-1, 0), capital: capCuota, interes: intCuota}
		if i == plazo {
			q.capital, q.interes = capRest, intRest
		}
		capRest, intRest = capRest.Sub(q.capital), intRest.Sub(q.interes)
		cuotas = append(cuotas, q)
	}
	return cuotas, interesTotal
}

type alternativa struct {
	plazo                  int
	cuotaMensual           decimal.Decimal
	interesTotal           decimal.Decimal
	deudaTotal             decimal.Decimal
	cuotaGarantiaExtendida *decimal.Decimal
	cuotaEntradaMinima     *decimal.Decimal
}

var plazos = []int{3, 6, 9, 12, 18, 24}

func (b *bank) alternativas(numero string, monto decimal.Decimal) ([]alternativa, *bizErr) {
	if _, err := b.card(numero, ""); err != nil {
		return nil, err
	}
	if !monto.IsPositive() {
		return nil, biz(CodeInvalidAmount, "Monto inválido")
	}
	var out []alternativa
	for _, p := range plazos {
		cuotas, interes := table(monto, p, b.today())
		a := alternativa{
			plazo:        p,
			cuotaMensual: cuotas[0].capital.Add(cuotas[0].interes),
			interesTotal: interes,
			deudaTotal:   monto.Add(interes),
		}
		if p >= 12 {
			g := round2(monto.Mul(warrantyRate).Div(decimal.NewFromInt(int64(p))))
			a.cuotaGarantiaExtendida = &g
		}
		if p >= 18 {
			e := round2(monto.Mul(downRate))
			a.cuotaEntradaMinima = &e
		}
		out = append(out, a)
	}
	return out, nil
}

func (b *bank) autorizar(numero, identificacion string, monto decimal.Decimal, plazo int, otp string) (*auth, *bizErr) {
	c, err := b.card(numero, identificacion)
	if err != nil {
		return nil, err
	}
	if monto.Equal(MontoInsufficientCredit) {
		return nil, biz(CodeInsufficientCredit, "Cupo insuficiente")
	}
	if !monto.IsPositive() || plazo < 1 {
		return nil, biz(CodeInvalidAmount, "Monto o plazo inválido")
	}
	if !validPlazo(plazo) {
		return nil, errPlazo(plazo)
	}
	if c.disponible().LessThan(monto) {
		return nil, biz(CodeInsufficientCredit, "Cupo insuficiente")
	}
	b.seqAuth++
	a := &auth{
		id:              fmt.Sprintf("AUT%07d", b.seqAuth),
		numeroOperacion: b.nextOp(),
		card:            c,
		monto:           monto,
		plazo:           plazo,
		estado:          estadoAutorizada,
		otp:             otp,
	}
	b.auths[a.id] = a
	b.use(c, monto)
	return a, nil
}

func (b *bank) consumir(autorizacion, numero, identificacion, factura, otp string, monto, facturado decimal.Decimal, plazo int, fecha time.Time) (*consumo, *bizErr) {
	c, err := b.card(numero, identificacion)
	if err != nil {
		return nil, err
	}
	if otp == OTPInvalid {
		return nil, biz(CodeInvalidOTP, "Código de seguridad (OTP) inválido")
	}
	a, ok := b.auths[autorizacion]
	if !ok && plazo > MaxPlazo && b.adoptable(autorizacion) {
		// Adopting it would build a table of plazo rows (its own authorizations were checked).
		return nil, errPlazo(plazo)
	}
	if !ok {
		a, ok = b.earlierAuth(autorizacion, c, monto, plazo)
	}
	if !ok {
		return nil, biz(CodeAuthNotFound, "La autorización %s no existe", autorizacion)
	}
	if a.estado != estadoAutorizada {
		return nil, biz(CodeInvalidState, "La autorización %s está %s", autorizacion, a.estado)
	}
	if !validPlazo(a.plazo) {
		return nil, errPlazo(a.plazo)
	}
	if !facturado.IsPositive() || facturado.GreaterThan(a.monto) {
		return nil, biz(CodeInvoiceAboveAuth, "El monto facturado debe ser positivo y no mayor al autorizado")
	}
	if fecha.IsZero() || factura == "" {
		return nil, biz(CodeInvalidAmount, "Factura o fecha de factura inválida")
	}
	cuotas, _ := table(facturado, a.plazo, fecha.AddDate(0, 1, 0))
	k := &consumo{auth: a, card: a.card, factura: factura, facturado: facturado, numeroOperacion: b.nextOp(), cuotas: cuotas, activo: true}
	b.consumos = append(b.consumos, k)
	a.estado = estadoConsumida
	b.use(a.card, facturado.Sub(a.monto))
	f := fecha
	a.card.ultimaCompra = &f
	return k, nil
}

func (b *bank) reversarAutorizacion(autorizacion, numero, identificacion string) *bizErr {
	c, err := b.card(numero, identificacion)
	if err != nil {
		return err
	}
	a, ok := b.auths[autorizacion]
	if !ok {
		// The reversal carries no amount: an adopted authorization holds nothing of the line.
		a, ok = b.earlierAuth(autorizacion, c, decimal.Zero, 1)
	}
	if !ok {
		return biz(CodeAuthNotFound, "La autorización %s no existe", autorizacion)
	}
	if a.estado != estadoAutorizada {
		return biz(CodeInvalidState, "La autorización %s está %s", autorizacion, a.estado)
	}
	a.estado = estadoReversada
	b.use(a.card, a.monto.Neg())
	return nil
}

func (b *bank) reversarConsumo(referencia, numero string) *bizErr {
	c, err := b.card(numero, "")
	if err != nil {
		return err
	}
	for _, k := range b.consumos {
		if k.factura != referencia || k.card != c {
			continue
		}
		if !k.activo {
			return biz(CodeInvalidState, "El consumo de la factura %s ya fue reversado", referencia)
		}
		k.activo = false
		pend := decimal.Zero
		for _, q := range k.cuotas {
			pend = pend.Add(q.capPend())
		}
		b.use(c, pend.Neg())
		return nil
	}
	if b.adoptBelow > 0 {
		// Development fake behind a database that outlives it: the consumption was most
		// likely recorded by an earlier run (see earlierAuth); its installments are gone
		// with that run's memory, so there is no pending capital to release.
		return nil
	}
	return biz(CodeConsumoNotFound, "No existe un consumo con la factura %s", referencia)
}

// earlierAuth adopts an authorization an earlier run of the fake issued. With
// WithFirstAuthorization the fake sits in front of a database that outlives it (a development
// service restarted on its data directory): an id AUT<n> below this run's first number can only
// come from an earlier run, whose memory is gone while the service still holds the record. The
// fake takes it as a live authorization of the request's card for monto and plazo (from the
// request, as the service resends those of the original authorization) instead of answering 20
// to every call on it after a restart.
func (b *bank) earlierAuth(id string, c *card, monto decimal.Decimal, plazo int) (*auth, bool) {
	if !b.adoptable(id) {
		return nil, false
	}
	if monto.IsNegative() {
		monto = decimal.Zero
	}
	if plazo < 1 {
		plazo = 1
	}
	a := &auth{id: id, numeroOperacion: b.nextOp(), card: c, monto: monto, plazo: plazo, estado: estadoAutorizada}
	b.auths[id] = a
	b.use(c, monto)
	return a, true
}

// adoptable reports whether earlierAuth would take id as an earlier run's authorization.
func (b *bank) adoptable(id string) bool {
	if b.adoptBelow <= 0 || !strings.HasPrefix(id, "AUT") {
		return false
	}
	n, err := strconv.Atoi(id[len("AUT"):])
	return err == nil && n >= 1 && n < b.adoptBelow
}

type deuda struct {
	card           *card
	capital        decimal.Decimal // pending capital, all installments
	interesVencido decimal.Decimal
	interesFuturo  decimal.Decimal
	vencido        decimal.Decimal
	mora           decimal.Decimal
	minimo         decimal.Decimal
	contado        decimal.Decimal
	proximo        *time.Time
}

func (b *bank) deuda(c *card) deuda {
	today := b.today()
	d := deuda{card: c}
	for _, k := range b.consumos {
		if k.card != c || !k.activo {
			continue
		}
		for _, q := range k.cuotas {
			cp, ip := q.capPend(), q.intPend()
			if cp.IsZero() && ip.IsZero() {
				continue
			}
			d.capital = d.capital.Add(cp)
			if q.vence.Before(today) {
				d.vencido = d.vencido.Add(cp).Add(ip)
				d.interesVencido = d.interesVencido.Add(ip)
			} else {
				d.interesFuturo = d.interesFuturo.Add(ip)
				if d.proximo == nil || q.vence.Before(*d.proximo) {
					v := q.vence
					d.proximo = &v
				}
			}
		}
	}
	d.mora = round2(d.vencido.Mul(moraRate))
	d.minimo = d.vencido.Add(d.mora)
	if d.proximo != nil {
		for _, k := range b.consumos {
			if k.card != c || !k.activo {
				continue
			}
			for _, q := range k.cuotas {
				if !q.vence.Before(today) && !q.vence.After(*d.proximo) {
					d.minimo = d.minimo.Add(q.capPend()).Add(q.intPend())
				}
			}
		}
	}
	d.contado = d.capital.Add(d.interesVencido).Add(d.mora)
	return d
}

type formaPago struct {
	codigo                                                              string
	valor                                                               decimal.Decimal
	institucion, documento, cuenta, identCorrentista, nombreCorrentista string
}

func (b *bank) pagar(numero string, valor decimal.Decimal, fecha time.Time, formas []formaPago) (*pago, *bizErr) {
	c, err := b.card(numero, "")
	if err != nil {
		return nil, err
	}
	if !valor.IsPositive() || fecha.IsZero() {
		return nil, biz(CodeInvalidAmount, "Valor o fecha de pago inválidos")
	}
	suma := decimal.Zero
	for _, f := range formas {
		bank := []string{f.institucion, f.documento, f.cuenta, f.identCorrentista, f.nombreCorrentista}
		switch f.codigo {
		case "001":
			for _, v := range bank {
				if v != "" {
					return nil, biz(CodeInvalidFormaPago, "El pago en efectivo no lleva datos bancarios")
				}
			}
		case "002":
			for _, v := range bank {
				if v == "" {
					return nil, biz(CodeInvalidFormaPago, "El pago con cheque requiere todos los datos bancarios")
				}
			}
		default:
			return nil, biz(CodeInvalidFormaPago, "Forma de pago %q desconocida", f.codigo)
		}
		suma = suma.Add(f.valor)
	}
	if !suma.Equal(valor) {
		return nil, biz(CodePaymentSumMismatch, "La suma de las formas de pago (%s) difiere del valor del pago (%s)", suma.StringFixed(2), valor.StringFixed(2))
	}
	d := b.deuda(c)
	if !d.contado.IsPositive() {
		return nil, biz(CodeNoDebt, "La tarjeta no tiene deuda")
	}
	if valor.GreaterThan(d.contado) {
		return nil, biz(CodePaymentAboveContado, "El valor del pago excede el pago de contado (%s)", d.contado.StringFixed(2))
	}
	p := &pago{numeroOperacion: b.nextOp(), card: c}
	full := valor.Equal(d.contado)
	rest := valor
	today := b.today()
	var interes, capital decimal.Decimal
	perFactura := map[*consumo]decimal.Decimal{}
	var orden []*consumo

	if d.mora.IsPositive() {
		m := decimal.Min(rest, d.mora)
		rest = rest.Sub(m)
		p.rubros = append(p.rubros, rubroPago{"MOR", "FAC", m})
	}
	for _, k := range b.consumos {
		if k.card != c || !k.activo {
			continue
		}
		for _, q := range k.cuotas {
			ip, cp := q.intPend(), q.capPend()
			var payI, payC decimal.Decimal
			if full {
				payC = cp
				// Interest not yet due is forgiven: charged, then given back as the
				// early-payment discount rubro below.
				payI = ip
			} else {
				payI = decimal.Min(rest, ip)
				rest = rest.Sub(payI)
				payC = decimal.Min(rest, cp)
				rest = rest.Sub(payC)
			}
			if payI.IsZero() && payC.IsZero() {
				continue
			}
			q.pagadoInteres = q.pagadoInteres.Add(payI)
			q.pagadoCapital = q.pagadoCapital.Add(payC)
			p.aplicaciones = append(p.aplicaciones, aplicacion{cuota: q, capital: payC, interes: payI})
			interes, capital = interes.Add(payI), capital.Add(payC)
			if _, seen := perFactura[k]; !seen {
				orden = append(orden, k)
			}
			applied := payI.Add(payC)
			if full && !q.vence.Before(today) {
				applied = applied.Sub(payI)
			}
			perFactura[k] = perFactura[k].Add(applied)
		}
	}
	if interes.IsPositive() {
		p.rubros = append(p.rubros, rubroPago{"INT", "FAC", interes})
	}
	if capital.IsPositive() {
		p.rubros = append(p.rubros, rubroPago{"CAP", "FAC", capital})
	}
	if full && d.interesFuturo.IsPositive() {
		p.rubros = append(p.rubros, rubroPago{"DPP", "NC", d.interesFuturo.Neg()})
	}
	for i, k := range orden {
		v := perFactura[k]
		if i == 0 && d.mora.IsPositive() {
			v = v.Add(decimal.Min(valor, d.mora))
		}
		p.facturas = append(p.facturas, facturaPago{k.factura, v})
	}
	p.capital = capital
	b.use(c, capital.Neg())
	f := fecha
	c.ultimoPago = &f
	b.pagos[p.numeroOperacion] = p
	return p, nil
}

func (b *bank) reversarPago(numeroOperacion int64) (*pago, *bizErr) {
	p, ok := b.pagos[numeroOperacion]
	if !ok {
		return nil, biz(CodePaymentNotFound, "No existe el pago %d", numeroOperacion)
	}
	if p.reversado {
		return nil, biz(CodePaymentReversed, "El pago %d ya fue reversado", numeroOperacion)
	}
	for _, a := range p.aplicaciones {
		a.cuota.pagadoCapital = a.cuota.pagadoCapital.Sub(a.capital)
		a.cuota.pagadoInteres = a.cuota.pagadoInteres.Sub(a.interes)
	}
	b.use(p.card, p.capital)
	p.reversado = true
	return p, nil
}
