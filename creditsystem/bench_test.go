package creditsystem_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
)

// Round trips against the fake on loopback, and the same calls with an in-memory transport
// that answers the bytes the fake produced, which measures encode + decode without the
// network (and without the fake's own work).
func BenchmarkConsultarTarjeta(b *testing.B) {
	req := creditsystem.ConsultarTarjetaRequest{Identificacion: ident1}
	call := func(c *creditsystem.Client) error {
		_, err := c.ConsultarTarjeta(context.Background(), req)
		return err
	}
	benchmark(b, call)
}

func BenchmarkGrabarAutorizacion(b *testing.B) {
	req := creditsystem.GrabarAutorizacionRequest{
		Identificacion: ident1, NumeroTarjeta: card1, CodigoProducto: "001", Plazo: 6,
		Monto: dec("0.01"), PuntoVenta: "PV-QUITO-01",
		Articulos: []creditsystem.Articulo{{TextoArticulo: "CABLE USB", Cantidad: 1, Precio: dec("0.01")}},
	}
	call := func(c *creditsystem.Client) error {
		_, err := c.GrabarAutorizacion(context.Background(), req)
		return err
	}
	benchmark(b, call)
}

func benchmark(b *testing.B, call func(*creditsystem.Client) error) {
	srv, c := newFake(b, creditsystemtest.WithCreditLine(dec("1000000000000.00")))
	b.Run("loopback", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := call(c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("no-network", func(b *testing.B) {
		var answer []byte
		rec := &http.Client{Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			res, err := srv.Client().Transport.RoundTrip(r)
			if err == nil {
				answer, err = io.ReadAll(res.Body)
				res.Body = io.NopCloser(bytes.NewReader(answer))
			}
			return res, err
		})}
		cfg := srv.Config()
		if err := call(newClient(b, cfg, creditsystem.WithHTTPClient(rec))); err != nil {
			b.Fatal(err)
		}
		hdr := http.Header{"Content-Type": {"text/xml; charset=utf-8"}}
		mem := &http.Client{Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			_, _ = io.Copy(io.Discard, r.Body)
			return &http.Response{StatusCode: 200, Header: hdr, Body: io.NopCloser(bytes.NewReader(answer)), ContentLength: int64(len(answer)), Request: r}, nil
		})}
		c := newClient(b, cfg, creditsystem.WithHTTPClient(mem))
		b.ReportAllocs()
		for b.Loop() {
			if err := call(c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRawAnswerJSON: an answer's Raw marshalled to JSON, as the credit service stores it
// with each record and attempt (through json.Marshal, and by its MarshalJSON alone).
func BenchmarkRawAnswerJSON(b *testing.B) {
	_, c := newFake(b, creditsystemtest.WithCreditLine(dec("1000000000000.00")))
	tarjeta, err := c.ConsultarTarjeta(context.Background(), creditsystem.ConsultarTarjetaRequest{Identificacion: ident1})
	if err != nil {
		b.Fatal(err)
	}
	auth, err := c.GrabarAutorizacion(context.Background(), creditsystem.GrabarAutorizacionRequest{
		Identificacion: ident1, NumeroTarjeta: card1, CodigoProducto: "001", Plazo: 6,
		Monto: dec("0.01"), PuntoVenta: "PV-QUITO-01",
		Articulos: []creditsystem.Articulo{{TextoArticulo: "CABLE USB", Cantidad: 1, Precio: dec("0.01")}},
	})
	if err != nil {
		b.Fatal(err)
	}
	consumo, err := c.GrabarConsumo(context.Background(), creditsystem.GrabarConsumoRequest{
		NumeroAutorizacion: *auth.NumeroAutorizacion, NumeroFactura: factura, MontoFacturado: dec("0.01"),
		FechaFactura: creditsystem.NewDate(2025, 3, 10), CodigoProducto: "001",
		Identificacion: ident1, NumeroTarjeta: card1, Plazo: 6, Monto: dec("0.01"),
	})
	if err != nil {
		b.Fatal(err)
	}
	for name, raw := range map[string]creditsystem.RawAnswer{
		"ConsultarTarjeta": tarjeta.Raw, "GrabarAutorizacion": auth.Raw, "GrabarConsumo": consumo.Raw,
	} {
		b.Run(name+"/json.Marshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/MarshalJSON", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := raw.MarshalJSON(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
