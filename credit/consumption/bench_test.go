package consumption

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// BenchmarkUnknown measures the counts of /metrics (Store.Unknown, at every scrape) over 50,000
// consumption records, two of them held by an operation that has not yet gone stale, and
// 150,000 attempts, 3 % of them timed out (two thirds of those of GrabarConsumo and reversals).
func BenchmarkUnknown(b *testing.B) {
	const records = 50000
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			tg := storagetest.Fresh(b, engine)
			s := migrated(b, tg)
			now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
			for i := 0; i < records; i += 1000 {
				var cs []Consumo
				var ins []Intento
				for j := i; j < i+1000; j++ {
					c := *nuevoConsumo("A-"+strconv.Itoa(j), now)
					c.Estado = EstadoConsumido
					if j%25000 == 7 {
						c.OperacionEnCurso, c.OperacionIniciadaAt = string(OpConfirmar), now
					}
					cs = append(cs, c)
					for k, op := range []string{UpstreamGrabarAutorizacion, "GrabarConsumo", "GrabarReversoConsumo"} {
						r := ResultadoOK
						if (j+k)%33 == 0 {
							r = ResultadoTimeout
						}
						ins = append(ins, Intento{AutorizacionID: c.AutorizacionID, Operacion: op, Solicitud: json.RawMessage(`{}`),
							Resultado: r, IniciadoAt: now, TerminadoAt: now})
					}
				}
				if _, err := tg.DB.NewInsert().Model(&cs).Exec(b.Context()); err != nil {
					b.Fatal(err)
				}
				if _, err := tg.DB.NewInsert().Model(&ins).Exec(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
			if engine == "postgres" {
				if _, err := tg.DB.ExecContext(b.Context(), "VACUUM ANALYZE consumos, consumo_intentos"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if held, _, err := s.Unknown(b.Context(), now.Add(-time.Hour)); err != nil || held != 0 {
					b.Fatalf("%d held, %v", held, err)
				}
			}
		})
	}
}

// BenchmarkBoundStatement measures the text and values of the statement that stores a granted
// authorization (InsertAutorizado's insert of the record and set of its attempt), built on every
// authorization; no statement runs.
func BenchmarkBoundStatement(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			db := storagetest.Fresh(b, engine).DB
			now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
			c := nuevoConsumo("A-1", now)
			in := &Intento{ID: 7, AutorizacionID: "A-1", Operacion: UpstreamGrabarAutorizacion, Solicitud: json.RawMessage(`{}`),
				Resultado: ResultadoOK, Respuesta: json.RawMessage(`{"ok":true}`), IniciadoAt: now, TerminadoAt: now}
			b.ReportAllocs()
			for b.Loop() {
				var args storage.Args
				if _, err := storage.BoundInsert(db, c, &args); err != nil {
					b.Fatal(err)
				}
				if _, err := storage.BoundSet(db, in, &args, intentoOutcome[1:]...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
