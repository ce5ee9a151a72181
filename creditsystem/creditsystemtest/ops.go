package creditsystemtest

import (
	"reflect"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/creditsystem/internal/cartera"
	"github.com/platform/integrations/creditsystem/internal/central"
	"github.com/platform/integrations/creditsystem/internal/xsd"
)

type handled struct {
	result   any
	biz      *bizErr
	hang     bool
	fault    string
	faultMsg string
}

type opSpec struct {
	newRequest func() any
	newResult  func() any
	handle     func(b *bank, req any) handled
}

func fail(e *bizErr) handled { return handled{biz: e} }

// access checks the constants every request carries.
func access(usuario, empresa xsd.String, terminal *xsd.String) *bizErr {
	if !usuario.Valid || !empresa.Valid || (terminal != nil && !terminal.Valid) {
		return biz(CodeMissingAccess, "Parámetros de acceso incompletos (usuario, empresa, terminal)")
	}
	return nil
}

func str(s string) xsd.String           { return xsd.NewString(s) }
func dec(d decimal.Decimal) xsd.Decimal { return xsd.NewDecimal(d) }
func num(i int64) xsd.Int               { return xsd.NewInt(i) }

func date(t *time.Time) xsd.Date {
	if t == nil {
		return xsd.Date{}
	}
	return xsd.NewDate(t.Year(), t.Month(), t.Day())
}

func timeOf(d xsd.Date) time.Time {
	if !d.Valid {
		return time.Time{}
	}
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
}

// cupoVm is the card's line as an answer reports it, with used credit utilizado (see
// bank.usedAfter).
func cupoVm(c *card, utilizado decimal.Decimal) xsd.Ptr[cartera.ArrayOfTipoCupoVm] {
	disp := c.asignado.Sub(utilizado)
	return xsd.NewPtr(&cartera.ArrayOfTipoCupoVm{TipoCupoVm: []*cartera.TipoCupoVm{{
		CCodigoTipoCupo:      str("001"),
		CDescripcionTipoCupo: str("CREDITO DIRECTO"),
		NCupoAsignado:        dec(c.asignado),
		NCupoDisponible:      dec(disp),
		NCupoUtilizado:       dec(utilizado),
		OTipoOperacionVm: xsd.NewPtr(&cartera.ArrayOfTipoOperacionVm{TipoOperacionVm: []*cartera.TipoOperacionVm{{
			CCodigoTipoOperacion:      str("001"),
			CDescripcionTipoOperacion: str("COMPRA EN ALMACEN"),
			NCupoDisponibleOpe:        dec(disp),
		}}}),
	}}})
}

func facturasVm(fs []facturaPago) xsd.Ptr[cartera.ArrayOfFacturaAfectadaVm] {
	a := &cartera.ArrayOfFacturaAfectadaVm{}
	for _, f := range fs {
		a.FacturaAfectadaVm = append(a.FacturaAfectadaVm, &cartera.FacturaAfectadaVm{CNumeroFactura: str(f.factura), NValor: dec(f.valor)})
	}
	return xsd.NewPtr(a)
}

func rubrosVm(rs []rubroPago) xsd.Ptr[cartera.ArrayOfRubroAplicadoVm] {
	a := &cartera.ArrayOfRubroAplicadoVm{}
	for _, r := range rs {
		a.RubroAplicadoVm = append(a.RubroAplicadoVm, &cartera.RubroAplicadoVm{CCodigo: str(r.codigo), CTipoDocumento: str(r.tipoDocumento), NValor: dec(r.valor)})
	}
	return xsd.NewPtr(a)
}

var specs = map[string]opSpec{
	"ConsultarTarjeta": {
		newRequest: func() any { return &cartera.ConsultarTarjeta{} },
		newResult:  func() any { return &cartera.RespuestaConsultarTarjetaVm{} },
		handle: func(b *bank, req any) handled {
			s := req.(*cartera.ConsultarTarjeta).OSolicitud.V
			if s == nil {
				return fail(biz(CodeMissingAccess, "Solicitud vacía"))
			}
			if err := access(s.CUsuario, s.CCodigoEmpresa, &s.CTerminal); err != nil {
				return fail(err)
			}
			// The magic customer without card wins in either field.
			c, err := b.card(s.CNumeroTarjeta.Value, s.CNumeroIdentificacion.Value)
			if err != nil {
				return fail(err)
			}
			act := c.activacion
			return handled{result: &cartera.RespuestaConsultarTarjetaVm{
				CCliente:           str(c.cliente),
				CNumeroTarjeta:     str(c.numero),
				DFechaActivacion:   date(&act),
				DFechaUltimaCompra: date(c.ultimaCompra),
				DFechaUltimoPago:   date(c.ultimoPago),
				NNumeroError:       num(0),
				OTipoCupoVm:        cupoVm(c, b.usedAfter(c, decimal.Zero)),
			}}
		},
	},
	"ConsultarAlternativaFinanciacion": {
		newRequest: func() any { return &central.ConsultarAlternativaFinanciacion{} },
		newResult:  func() any { return &central.RespuestaConsultarAlternativaFinanciacionVm{} },
		handle: func(b *bank, req any) handled {
			s := req.(*central.ConsultarAlternativaFinanciacion).OSolicitud.V
			if s == nil {
				return fail(biz(CodeMissingAccess, "Solicitud vacía"))
			}
			if err := access(s.CUsuario, s.CCodigoEmpresa, &s.CTerminal); err != nil {
				return fail(err)
			}
			alts, err := b.alternativas(s.CNumeroTarjeta.Value, s.NMonto.Decimal)
			if err != nil {
				return fail(err)
			}
			list := &central.ArrayOfAlternativaFinanciacionVm{}
			out := &central.RespuestaConsultarAlternativaFinanciacionVm{NNumeroError: num(0), OAlternativaFinanciacionVm: xsd.NewPtr(list)}
			for _, a := range alts {
				vm := &central.AlternativaFinanciacionVm{
					NCuotaMensual: dec(a.cuotaMensual),
					NDeudaTotal:   dec(a.deudaTotal),
					NInteresTotal: dec(a.interesTotal),
					NPlazo:        num(int64(a.plazo)),
				}
				if a.cuotaGarantiaExtendida != nil {
					vm.NCuotaGarantiaExtendida = dec(*a.cuotaGarantiaExtendida)
				}
				if a.cuotaEntradaMinima != nil {
					vm.NCuotaEntradaMinima = dec(*a.cuotaEntradaMinima)
				}
				list.AlternativaFinanciacionVm = append(list.AlternativaFinanciacionVm, vm)
			}
			return handled{result: out}
		},
	},
	"GrabarAutorizacion": {
		newRequest: func() any { return &cartera.GrabarAutorizacion{} },
		newResult:  func() any { return &cartera.RespuestaGrabarAutorizacionVm{} },
		handle: func(b *bank, req any) handled {
			s := req.(*cartera.GrabarAutorizacion).OSolicitud.V
			if s == nil {
				return fail(biz(CodeMissingAccess, "Solicitud vacía"))
			}
			if err := access(s.CUsuario, s.CCodigoEmpresa, &s.CTerminal); err != nil {
				return fail(err)
			}
			if s.CNumeroTarjeta.Value != IdentificacionCardNotFound && s.CNumeroIdentificacion.Value != IdentificacionCardNotFound && s.NMonto.Decimal.Equal(MontoTimeout) {
				return handled{hang: true}
			}
			a, err := b.autorizar(s.CNumeroTarjeta.Value, s.CNumeroIdentificacion.Value, s.NMonto.Decimal, int(s.NPlazo.Value), s.CCodigoOtp.Value)
			if err != nil {
				return fail(err)
			}
			return handled{result: &cartera.RespuestaGrabarAutorizacionVm{
				CNumeroAutorizacion:     str(a.id),
				LBiometriaRequerida:     false,
				LCodigoSeguridadEnviado: true,
				NNumeroError:            num(0),
				NNumeroOperacion:        num(a.numeroOperacion),
			}}
		},
	},
	"GrabarConsumo": {
		newRequest: func() any { return &cartera.GrabarConsumo{} },
		newResult:  func() any { return &cartera.RespuestaGrabarConsumoVm{} },
		handle: func(b *bank, req any) handled {
			s := req.(*cartera.GrabarConsumo).OSolicitud.V
			if s == nil {
				return fail(biz(CodeMissingAccess, "Solicitud vacía"))
			}
			if err := access(s.CUsuario, s.CCodigoEmpresa, &s.CTerminal); err != nil {
				return fail(err)
			}
			if s.CNumeroFactura.Value == NumeroFacturaFault {
				return handled{fault: "a:InternalServiceFault", faultMsg: "Error interno del servicio al grabar el consumo de la factura " + NumeroFacturaFault}
			}
			k, err := b.consumir(s.CNumeroAutorizacion.Value, s.CNumeroTarjeta.Value, s.CNumeroIdentificacion.Value,
				s.CNumeroFactura.Value, s.CCodigoOtp.Value, s.NMonto.Decimal, s.NMontoFacturado.Decimal, int(s.NPlazo.Value), timeOf(s.DFechaFactura))
			if err != nil {
				return fail(err)
			}
			tabla := &cartera.ArrayOfCuotaAmortizacionVm{}
			for _, q := range k.cuotas {
				v := q.vence
				tabla.CuotaAmortizacionVm = append(tabla.CuotaAmortizacionVm, &cartera.CuotaAmortizacionVm{
					DFechaVencimiento: date(&v),
					NNumeroCuota:      num(int64(q.numero)),
					NValorCapital:     dec(q.capital),
					NValorCuota:       dec(q.capital.Add(q.interes)),
					NValorInteres:     dec(q.interes),
				})
			}
			first := k.cuotas[0].vence
			return handled{result: &cartera.RespuestaGrabarConsumoVm{
				CNumeroAutorizacion:  str(k.auth.id),
				DFechaMaxPago:        date(&first),
				NNumeroError:         num(0),
				NNumeroOperacion:     num(k.numeroOperacion),
				OTablaAmortizacionVm: xsd.NewPtr(tabla),
				OTipoCupoVm:          cupoVm(k.card, b.usedAfter(k.card, k.facturado)),
			}}
		},
	},
	"GrabarReversoAutorizacion": {
		newRequest: func() any { return &cartera.GrabarReversoAutorizacion{} },
		newResult:  func() any { return &cartera.RespuestaGrabarReversoAutorizacionVm{} },
		handle: func(b *bank, req any) handled {
			s := req.(*cartera.GrabarReversoAutorizacion).OSolicitud.V
			if s == nil {
				return fail(biz(CodeMissingAccess, "Solicitud vacía"))
			}
			if err := access(s.CUsuario, s.CCodigoEmpresa, &s.CTerminal); err != nil {
				return fail(err)
			}
			if err := b.reversarAutorizacion(s.CNumeroAutorizacion.Value, s.CNumeroTarjeta.Value, s.CNumeroIdentificacion.Value); err != nil {
				return fail(err)
			}
			return handled{result: &cartera.RespuestaGrabarReversoAutorizacionVm{NNumeroError: num(0)}}
		},
	},
	"GrabarReversoConsumo": {
		newRequest: func() any { return &cartera.GrabarReversoConsumo{} },
		newResult:  func() any { return &cartera.RespuestaGrabarReversoConsumoVm{} },
		handle: func(b *bank, req any) handled {
			s := req.(*cartera.GrabarReversoConsumo).OSolicitud.V
			if s == nil {
				return fail(biz(CodeMissingAccess, "Solicitud vacía"))
			}
			if err := access(s.CUsuario, s.CCodigoEmpresa, &s.CTerminal); err != nil {
				return fail(err)
			}
			if err := b.reversarConsumo(s.CNumeroReferencia.Value, s.CNumeroTarjeta.Value); err != nil {
				return fail(err)
			}
			return handled{result: &cartera.RespuestaGrabarReversoConsumoVm{NNumeroError: num(0)}}
		},
	},
	"ConsultarDeudaTarjeta": {
		newRequest: func() any { return &cartera.ConsultarDeudaTarjeta{} },
		newResult:  func() any { return &cartera.RespuestaConsultarDeudaTarjetaVm{} },
		handle: func(b *bank, req any) handled {
			s := req.(*cartera.ConsultarDeudaTarjeta).OSolicitud.V
			if s == nil {
				return fail(biz(CodeMissingAccess, "Solicitud vacía"))
			}
			if err := access(s.CUsuario, s.CCodigoEmpresa, nil); err != nil {
				return fail(err)
			}
			c, err := b.card(s.CNumeroTarjeta.Value, s.CNumeroIdentificacion.Value)
			if err != nil {
				return fail(err)
			}
			d := b.deuda(c)
			return handled{result: &cartera.RespuestaConsultarDeudaTarjetaVm{
				CNombreCliente:    str(c.cliente),
				CNumeroTarjeta:    str(c.numero),
				DFechaProximoPago: date(d.proximo),
				NCodigoCliente:    num(c.codigoCliente),
				NNumeroError:      num(0),
				NPagoContado:      dec(d.contado),
				NPagoMinimo:       dec(d.minimo),
				NValorGestion:     dec(decimal.Zero),
				NValorMora:        dec(d.mora),
				NValorVencido:     dec(d.vencido),
			}}
		},
	},
	"GrabarPagoTarjeta": {
		newRequest: func() any { return &cartera.GrabarPagoTarjeta{} },
		newResult:  func() any { return &cartera.RespuestaGrabarPagoTarjetaVm{} },
		handle: func(b *bank, req any) handled {
			s := req.(*cartera.GrabarPagoTarjeta).OSolicitud.V
			if s == nil {
				return fail(biz(CodeMissingAccess, "Solicitud vacía"))
			}
			if err := access(s.CUsuario, s.CCodigoEmpresa, &s.CTerminal); err != nil {
				return fail(err)
			}
			var formas []formaPago
			if s.IFormaPagoVm.V != nil {
				for _, f := range s.IFormaPagoVm.V.FormaPagoVm {
					if f == nil {
						continue
					}
					formas = append(formas, formaPago{
						codigo: f.CCodigo.Value, valor: f.NValor.Decimal,
						institucion: f.CInstitucionFinanciera.Value, documento: f.CNumeroDocumento.Value,
						cuenta: f.CNumeroCuenta.Value, identCorrentista: f.CIdentCuentaCorrentista.Value,
						nombreCorrentista: f.CNombreCuentaCorrentista.Value,
					})
				}
			}
			valor, known := s.NValorPago.Decimal, s.CNumeroTarjeta.Value != IdentificacionCardNotFound
			switch {
			case known && valor.Equal(ValorPagoRejected):
				return fail(biz(CodePaymentRejected, "Pago rechazado: la cartera del cliente está bloqueada para recaudación"))
			case known && valor.Equal(ValorPagoTimeout):
				return handled{hang: true}
			}
			p, err := b.pagar(s.CNumeroTarjeta.Value, valor, timeOf(s.DFechaPago), formas)
			if err != nil {
				return fail(err)
			}
			if valor.Equal(ValorPagoLateSuccess) {
				return handled{hang: true}
			}
			return handled{result: &cartera.RespuestaGrabarPagoTarjetaVm{
				NNumeroError:       num(0),
				NNumeroOperacion:   num(p.numeroOperacion),
				OFacturaAfectadaVm: facturasVm(p.facturas),
				ORubroAplicadoVm:   rubrosVm(p.rubros),
				OTipoCupoVm:        cupoVm(p.card, b.usedAfter(p.card, decimal.Zero)),
			}}
		},
	},
	"GrabarReversoPagoTarjeta": {
		newRequest: func() any { return &cartera.GrabarReversoPagoTarjeta{} },
		newResult:  func() any { return &cartera.RespuestaGrabarReversoPagoTarjetaVm{} },
		handle: func(b *bank, req any) handled {
			s := req.(*cartera.GrabarReversoPagoTarjeta).OSolicitud.V
			if s == nil {
				return fail(biz(CodeMissingAccess, "Solicitud vacía"))
			}
			if err := access(s.CUsuario, s.CCodigoEmpresa, &s.CTerminal); err != nil {
				return fail(err)
			}
			if s.CMotivoReverso.Value == MotivoReversoFault {
				return handled{fault: "a:InternalServiceFault", faultMsg: "Error interno del servicio al reversar el pago " + strconv.FormatInt(s.NNumeroOperacion.Value, 10)}
			}
			p, err := b.reversarPago(s.NNumeroOperacion.Value)
			if err != nil {
				return fail(err)
			}
			return handled{result: &cartera.RespuestaGrabarReversoPagoTarjetaVm{
				NNumeroError:       num(0),
				OFacturaAfectadaVm: facturasVm(p.facturas),
				ORubroAplicadoVm:   rubrosVm(p.rubros),
			}}
		},
	},
}

// errorResult is the operation's answer with only the error triple set.
func (f *Fake) errorResult(op string, code int, msg string) any {
	res := specs[op].newResult()
	v := reflect.ValueOf(res).Elem()
	v.FieldByName("LError").SetBool(true)
	v.FieldByName("NNumeroError").Set(reflect.ValueOf(xsd.NewInt(int64(code))))
	v.FieldByName("CTextoError").Set(reflect.ValueOf(xsd.NewString(msg)))
	return res
}
