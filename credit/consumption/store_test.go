package consumption

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// migrated applies this package's migrations (credit.Migrations holds them too; importing it
// here would be a cycle).
func migrated(t testing.TB, tg storagetest.Target) *Store {
	t.Helper()
	if _, err := storage.Migrate(t.Context(), tg.DB, "credit_migrations", storage.NewMigrations(Migrations...)); err != nil {
		t.Fatal(err)
	}
	return NewStore(tg.DB)
}

// insertar stores c as a granted authorization, with its audited attempt.
func insertar(t *testing.T, s *Store, c *Consumo) {
	t.Helper()
	in := &Intento{Operacion: UpstreamGrabarAutorizacion, Solicitud: json.RawMessage(`{}`), Resultado: ResultadoPendiente, IniciadoAt: c.CreatedAt}
	if err := s.StartIntento(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	in.Resultado, in.TerminadoAt = ResultadoOK, c.CreatedAt
	if err := s.InsertAutorizado(t.Context(), c, in); err != nil {
		t.Fatal(err)
	}
}

// claimFor is the claim closure of op.
func claimFor(op Operacion, now time.Time) func(*Consumo) (*Intento, error) {
	return func(c *Consumo) (*Intento, error) {
		if err := c.IniciarOperacion(op, now); err != nil {
			return nil, err
		}
		return &Intento{Operacion: c.OperacionEnCurso, Solicitud: json.RawMessage(`{}`), Resultado: ResultadoPendiente, IniciadoAt: now}, nil
	}
}

func nuevoConsumo(id string, now time.Time) *Consumo {
	return &Consumo{
		AutorizacionID: id, NumeroOperacion: "778899", Estado: EstadoAutorizado,
		CodigoEmpresa: "000598", Identificacion: "0912345678", NumeroTarjeta: "0912345678",
		CodigoProducto: "001", CodigoTipoCupo: "01", Monto: decimal.RequireFromString("150.75"), Plazo: 12,
		PuntoVenta: "PV-01", CreditsystemAuthResponse: json.RawMessage(`{"autorizacion":"` + id + `","cupo":null}`),
		SourceSystem: SourceSystemDefault, CreatedAt: now, UpdatedAt: now,
	}
}

func TestConsumoStoreRoundTrip(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := migrated(t, tg)
		now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
		c := nuevoConsumo("A-1", now)
		insertar(t, s, c)
		if c.ID == 0 {
			t.Fatal("insert did not return the id")
		}
		claim, err := s.Claim(t.Context(), "A-1", claimFor(OpConfirmar, now))
		if err != nil {
			t.Fatalf("claim: %v", err)
		}
		fecha, _ := ParseFecha("2026-03-01")
		f := Factura{NumeroFactura: "001-001-000000123", MontoFacturado: decimal.RequireFromString("150.75"), FechaFactura: fecha}
		claim.Intento.Resultado, claim.Intento.TerminadoAt = ResultadoOK, now.Add(time.Second)
		if _, err := s.Settle(t.Context(), claim, func(c *Consumo) error {
			return c.Confirmar(f, "", json.RawMessage(`{"ok":true}`), now.Add(time.Second))
		}); err != nil {
			t.Fatalf("complete: %v", err)
		}
		got, err := s.ByAutorizacion(t.Context(), "A-1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Estado != EstadoConsumido || got.OperacionEnCurso != "" || got.ResultadoDesconocido {
			t.Fatalf("state after completion: %+v", got)
		}
		if !got.Monto.Equal(decimal.RequireFromString("150.75")) || !got.MontoFacturado.Valid || !got.MontoFacturado.Decimal.Equal(decimal.RequireFromString("150.75")) {
			t.Fatalf("money: %s %v", got.Monto, got.MontoFacturado)
		}
		if got.FechaFactura.String() != "2026-03-01" || got.NumeroFactura != "001-001-000000123" {
			t.Fatalf("invoice: %q %q", got.FechaFactura, got.NumeroFactura)
		}
		if got.SourceSystem != "PLATFORM" || got.OTP != "" || !got.UpdatedAt.Equal(now.Add(time.Second)) || !got.CreatedAt.Equal(now) {
			t.Fatalf("fields: %+v", got)
		}
		var raw map[string]any
		if err := json.Unmarshal(got.CreditsystemAuthResponse, &raw); err != nil || raw["autorizacion"] != "A-1" {
			t.Fatalf("auth response %s: %v", got.CreditsystemAuthResponse, err)
		}
		if _, err := s.ByAutorizacion(t.Context(), "nope"); !isNotFound(err) {
			t.Fatalf("unknown id: %v", err)
		}
	})
}

func isNotFound(err error) bool { _, ok := err.(*AutorizacionNotFoundError); return ok }

// Twenty concurrent claims of one record: one wins. The store inserted the record, so on
// PostgreSQL every claim starts from its copy, and the losers' compare-and-set fails.
func TestClaimHasExactlyOneWinner(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := migrated(t, tg)
		now := time.Now().UTC()
		insertar(t, s, nuevoConsumo("A-2", now))
		var winners atomic.Int32
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				op := OpConfirmar
				if i%2 == 1 {
					op = OpReverso
				}
				_, err := s.Claim(t.Context(), "A-2", claimFor(op, now))
				switch {
				case err == nil:
					winners.Add(1)
				case !errors.Is(err, ErrInFlight):
					t.Errorf("a losing claim: %v, want ErrInFlight", err)
				}
			}()
		}
		wg.Wait()
		if winners.Load() != 1 {
			t.Fatalf("%d claims won, want 1", winners.Load())
		}
		// The losers wrote no attempt: only the winner's is pending.
		if in, err := s.Intentos(t.Context(), "A-2"); err != nil || len(in) != 2 || in[1].Resultado != ResultadoPendiente {
			t.Fatalf("attempts %+v, %v; want the authorization's and the winner's", in, err)
		}
	})
}

// Concurrent updates of one record are compare-and-set on its version: none is lost, each runs
// on the record as the previous one left it, and the settlement of a claim whose record moved
// meanwhile decides on the stored record.
func TestUpdatesAreCompareAndSet(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := migrated(t, tg)
		now := time.Now().UTC()
		insertar(t, s, nuevoConsumo("A-3", now))
		const writers = 4
		var wg sync.WaitGroup
		for range writers {
			wg.Go(func() {
				if _, err := s.Update(t.Context(), "A-3", func(c *Consumo) error { c.ImagenQR += "x"; return nil }); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		got, err := s.ByAutorizacion(t.Context(), "A-3")
		if err != nil || got.ImagenQR != "xxxx" || got.Version != writers {
			t.Fatalf("after %d concurrent updates: %q at version %d (%v), want xxxx at %d", writers, got.ImagenQR, got.Version, err, writers)
		}

		cl, err := s.Claim(t.Context(), "A-3", claimFor(OpConfirmar, now))
		if err != nil {
			t.Fatal(err)
		}
		// Another write between the claim and its settlement (here a note on the record).
		if _, err := s.Update(t.Context(), "A-3", func(c *Consumo) error { c.ImagenQR = "moved"; return nil }); err != nil {
			t.Fatal(err)
		}
		var seen []string
		cl.Intento.Resultado, cl.Intento.TerminadoAt = ResultadoOK, now
		out, err := s.Settle(t.Context(), cl, func(c *Consumo) error {
			seen = append(seen, c.ImagenQR)
			c.LiberarOperacion(now)
			return nil
		})
		got, _ = s.ByAutorizacion(t.Context(), "A-3")
		if err != nil || len(seen) != 2 || seen[1] != "moved" || got.ImagenQR != "moved" || got.OperacionEnCurso != "" || out.Version != got.Version {
			t.Fatalf("settle after a write: %v, fn saw %v, stored %q held by %q v%d (answer v%d)", err, seen, got.ImagenQR, got.OperacionEnCurso, got.Version, out.Version)
		}
	})
}

// TestMoneyKeepsEveryDigit: the largest amounts of DECIMAL(18,2) columns come back exactly on both
// engines (SQLite's NUMERIC kept 15 digits: 9999999999999999.99 read 10000000000000000).
func TestMoneyKeepsEveryDigit(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := migrated(t, tg)
		now := time.Now().UTC().Truncate(time.Microsecond)
		c := nuevoConsumo("A-BIG", now)
		c.Monto = decimal.RequireFromString("9999999999999999.99")
		c.MontoFacturado = decimal.NewNullDecimal(decimal.RequireFromString("1234567890123456.78"))
		insertar(t, s, c)
		got, err := s.ByAutorizacion(t.Context(), "A-BIG")
		if err != nil {
			t.Fatal(err)
		}
		if !got.Monto.Equal(c.Monto) || !got.MontoFacturado.Decimal.Equal(c.MontoFacturado.Decimal) {
			t.Fatalf("amounts read back %s and %s, want %s and %s", got.Monto, got.MontoFacturado.Decimal, c.Monto, c.MontoFacturado.Decimal)
		}
	})
}

// onPostgres is a store on a PostgreSQL database whose statements faults records, and a second
// store on the same database, not recorded, for the writes of "another request".
func onPostgres(t *testing.T) (s, other *Store, faults *storagetest.Faults) {
	t.Helper()
	tg := storagetest.Postgres(t)
	other = migrated(t, tg)
	faults = new(storagetest.Faults)
	return NewStore(faults.Open(t, tg)), other, faults
}

// oneWith reports whether statements are a single data-modifying WITH.
func oneWith(statements []string) bool {
	return len(statements) == 1 && strings.HasPrefix(statements[0], "WITH ")
}

// TestClaimAndSettleOneStatementOnPostgres: on PostgreSQL the claim is a read and one statement
// (the marker's compare-and-set and the pending attempt), the settlement one statement (the
// record's compare-and-set and the attempt's outcome); a claim or settlement whose record moved
// writes nothing and falls back to the locked transaction, which writes the same rows.
func TestClaimAndSettleOneStatementOnPostgres(t *testing.T) {
	s, other, faults := onPostgres(t)
	ctx := t.Context()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	fecha, _ := ParseFecha("2026-03-01")
	f := Factura{NumeroFactura: "001-001-000000123", MontoFacturado: decimal.RequireFromString("150.75"), FechaFactura: fecha}
	note := func(id, v string) {
		t.Helper()
		if _, err := other.Update(ctx, id, func(c *Consumo) error { c.ImagenQR = v; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(id string, fn func(*Consumo) (*Intento, error)) (*Claim, []string) {
		t.Helper()
		faults.Record()
		cl, err := s.Claim(ctx, id, fn)
		statements := faults.Recorded()
		if err != nil {
			t.Fatalf("claim %s: %v", id, err)
		}
		return cl, statements
	}
	settle := func(cl *Claim) (*Consumo, []string) {
		t.Helper()
		cl.Intento.Resultado, cl.Intento.Respuesta, cl.Intento.TerminadoAt = ResultadoOK, json.RawMessage(`{"ok":true}`), now.Add(time.Second)
		faults.Record()
		out, err := s.Settle(ctx, cl, func(c *Consumo) error {
			return c.Confirmar(f, "", json.RawMessage(`{"ok":true}`), now.Add(time.Second))
		})
		statements := faults.Recorded()
		if err != nil {
			t.Fatalf("settle %s: %v", cl.Consumo.AutorizacionID, err)
		}
		return out, statements
	}

	// A: nothing moves; the claim is a read and one statement, the settlement one statement.
	insertar(t, other, nuevoConsumo("A-ONE", now))
	note("A-ONE", "x")
	note("A-ONE", "y")
	clA, statements := claim("A-ONE", claimFor(OpConfirmar, now))
	if len(statements) != 2 || !strings.HasPrefix(statements[0], "SELECT ") || !oneWith(statements[1:]) {
		t.Fatalf("claim: %d statements %q; want the read and one WITH", len(statements), statements)
	}
	if clA.Intento.ID == 0 || clA.Consumo.Version != 3 || clA.Consumo.OperacionEnCurso != UpstreamGrabarConsumo {
		t.Fatalf("claim: attempt id %d, record v%d held by %q; want the attempt's id, v3, GrabarConsumo", clA.Intento.ID, clA.Consumo.Version, clA.Consumo.OperacionEnCurso)
	}
	stored, err := other.ByAutorizacion(ctx, "A-ONE")
	if err != nil || stored.Version != 3 || stored.OperacionEnCurso != UpstreamGrabarConsumo || !stored.OperacionIniciadaAt.Equal(now) {
		t.Fatalf("claimed record %+v, %v", stored, err)
	}
	if in, err := other.Intento(ctx, clA.Intento.ID); err != nil || in.Resultado != ResultadoPendiente || in.ConsumoID != stored.ID || in.AutorizacionID != "A-ONE" || in.Operacion != UpstreamGrabarConsumo {
		t.Fatalf("claim's attempt %+v, %v", in, err)
	}
	outA, statements := settle(clA)
	if !oneWith(statements) {
		t.Fatalf("settlement: %d statements %q; want one WITH", len(statements), statements)
	}

	// B: the record moves before each write; each falls back to the locked transaction, fn
	// deciding again on the record as stored.
	insertar(t, other, nuevoConsumo("A-TWO", now))
	var seen []string
	claimB := claimFor(OpConfirmar, now)
	clB, statements := claim("A-TWO", func(c *Consumo) (*Intento, error) {
		seen = append(seen, c.ImagenQR)
		if len(seen) == 1 {
			note("A-TWO", "x") // after the read, before the compare-and-set
		}
		return claimB(c)
	})
	if len(statements) != 7 || !strings.HasPrefix(statements[1], "WITH ") || statements[2] != "BEGIN" || statements[6] != "COMMIT" ||
		!strings.Contains(statements[3], "FOR UPDATE") || len(seen) != 2 || seen[1] != "x" {
		t.Fatalf("stale claim: %d statements %q, fn saw %q; want the read, the WITH, then the locked transaction on x", len(statements), statements, seen)
	}
	note("A-TWO", "y")
	outB, statements := settle(clB)
	if len(statements) != 6 || !strings.HasPrefix(statements[0], "WITH ") || statements[1] != "BEGIN" || statements[5] != "COMMIT" {
		t.Fatalf("stale settlement: %d statements %q; want the WITH, then the locked transaction", len(statements), statements)
	}

	// Both ways wrote the same rows.
	a, _ := other.ByAutorizacion(ctx, "A-ONE")
	b, _ := other.ByAutorizacion(ctx, "A-TWO")
	if outA.Version != a.Version || outB.Version != b.Version || a.Version != 4 || a.Estado != EstadoConsumido || a.ImagenQR != "y" {
		t.Fatalf("answers v%d v%d, stored %+v and %+v", outA.Version, outB.Version, a, b)
	}
	b.ID, b.AutorizacionID, b.CreditsystemAuthResponse = a.ID, a.AutorizacionID, a.CreditsystemAuthResponse
	if !reflect.DeepEqual(a, b) {
		t.Errorf("record by one statement %+v\nby the transaction %+v", a, b)
	}
	inA, _ := other.Intentos(ctx, "A-ONE")
	inB, _ := other.Intentos(ctx, "A-TWO")
	if len(inA) != 2 || len(inB) != 2 || inA[1].Resultado != ResultadoOK || string(inA[1].Respuesta) != `{"ok": true}` || !inA[1].TerminadoAt.Equal(now.Add(time.Second)) {
		t.Fatalf("attempts %+v and %+v; want the authorization's and the confirmation's, ok", inA, inB)
	}
	inB[1].ID, inB[1].ConsumoID, inB[1].AutorizacionID = inA[1].ID, inA[1].ConsumoID, inA[1].AutorizacionID
	if !reflect.DeepEqual(inA[1], inB[1]) {
		t.Errorf("attempt by one statement %+v\nby the transaction %+v", inA[1], inB[1])
	}
}

// TestStaleWritesNothingOnPostgres: a claim that lost the compare-and-set to another claim writes
// no attempt and answers as the locked path does (ErrInFlight); a settlement whose record moved
// writes neither the record nor the attempt's outcome before the locked path decides.
func TestStaleWritesNothingOnPostgres(t *testing.T) {
	s, other, faults := onPostgres(t)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Microsecond)
	insertar(t, other, nuevoConsumo("A-LOST", now))
	var winner *Claim
	calls := 0
	faults.Record()
	_, err := s.Claim(ctx, "A-LOST", func(c *Consumo) (*Intento, error) {
		calls++
		if calls == 1 { // another request claims after this one read the record
			var err error
			if winner, err = other.Claim(ctx, "A-LOST", claimFor(OpReverso, now)); err != nil {
				t.Fatal(err)
			}
		}
		return claimFor(OpConfirmar, now)(c)
	})
	statements := faults.Recorded()
	if !errors.Is(err, ErrInFlight) || calls != 2 || len(statements) < 3 || statements[2] != "BEGIN" {
		t.Fatalf("losing claim: %v after %d decisions, statements %q; want ErrInFlight from the locked path", err, calls, statements)
	}
	in, _ := other.Intentos(ctx, "A-LOST")
	if len(in) != 2 || in[1].ID != winner.Intento.ID || in[1].Operacion != UpstreamGrabarReversoAutorizacion {
		t.Fatalf("attempts %+v; want the authorization's and the winner's only", in)
	}
	stored, _ := other.ByAutorizacion(ctx, "A-LOST")
	if stored.OperacionEnCurso != UpstreamGrabarReversoAutorizacion || stored.Version != winner.Consumo.Version {
		t.Fatalf("record %+v; want the winner's claim", stored)
	}

	// The winner's settlement after the record moved: the WITH writes nothing, and the locked
	// path, here refusing, writes nothing either.
	if _, err := other.Update(ctx, "A-LOST", func(c *Consumo) error { c.ImagenQR = "moved"; return nil }); err != nil {
		t.Fatal(err)
	}
	ws := &Claim{Consumo: winner.Consumo, Intento: winner.Intento, marker: winner.marker}
	ws.Intento.Resultado, ws.Intento.TerminadoAt = ResultadoOK, now
	refused := errors.New("refused on the stored record")
	faults.Record()
	_, err = s.Settle(ctx, ws, func(c *Consumo) error {
		if c.ImagenQR == "moved" {
			return refused
		}
		return c.Reversar(now)
	})
	statements = faults.Recorded()
	if !errors.Is(err, refused) || len(statements) < 2 || !strings.HasPrefix(statements[0], "WITH ") || statements[1] != "BEGIN" {
		t.Fatalf("stale settlement: %v, statements %q; want the WITH, then the locked path's refusal", err, statements)
	}
	after, _ := other.ByAutorizacion(ctx, "A-LOST")
	if after.Version != stored.Version+1 || after.OperacionEnCurso != UpstreamGrabarReversoAutorizacion || after.Estado != EstadoAutorizado {
		t.Fatalf("record after the stale settlement %+v; want it as the other write left it", after)
	}
	if a, err := other.Intento(ctx, winner.Intento.ID); err != nil || a.Resultado != ResultadoPendiente || !a.TerminadoAt.IsZero() {
		t.Fatalf("attempt after the stale settlement %+v, %v; want it pending", a, err)
	}
}

// Two claims that read the same version of a record before either writes: exactly one
// compare-and-set wins; the other writes nothing and, locked, meets the marker (ErrInFlight).
// On PostgreSQL both went through the one statement first.
func TestTwoClaimsOnOneVersion(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		other := migrated(t, tg)
		var faults storagetest.Faults
		s := NewStore(faults.Open(t, tg))
		now := time.Now().UTC()
		insertar(t, other, nuevoConsumo("A-PAIR", now))
		// Both decide on the record before either writes (on SQLite the locked read serialises
		// them, so the barrier only waits a little there).
		var arrived sync.WaitGroup
		arrived.Add(2)
		barrier := func() {
			arrived.Done()
			done := make(chan struct{})
			go func() { arrived.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(300 * time.Millisecond):
			}
		}
		var first [2]atomic.Bool
		var wins, inFlight atomic.Int32
		var wg sync.WaitGroup
		faults.Record()
		for i := range 2 {
			wg.Go(func() {
				_, err := s.Claim(t.Context(), "A-PAIR", func(c *Consumo) (*Intento, error) {
					if !first[i].Swap(true) {
						barrier()
					}
					return claimFor(OpConfirmar, now)(c)
				})
				switch {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, ErrInFlight):
					inFlight.Add(1)
				default:
					t.Errorf("claim %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		statements := faults.Recorded()
		if wins.Load() != 1 || inFlight.Load() != 1 {
			t.Fatalf("%d claims won, %d in flight; want 1 and 1", wins.Load(), inFlight.Load())
		}
		in, _ := other.Intentos(t.Context(), "A-PAIR")
		if len(in) != 2 || in[1].Resultado != ResultadoPendiente {
			t.Fatalf("attempts %+v; want the authorization's and one pending", in)
		}
		if tg.Name == "postgres" {
			withs := 0
			for _, q := range statements {
				if strings.HasPrefix(q, "WITH ") {
					withs++
				}
			}
			if withs != 2 {
				t.Fatalf("%d WITH statements in %q; want both claims' compare-and-set", withs, statements)
			}
		}
	})
}

// storeToExplain migrates tg and stores three granted authorizations, the second claimed for its
// confirmation, through a store whose statements the returned faults can record; PostgreSQL's
// planner is then given the tables' statistics.
func storeToExplain(t *testing.T, tg storagetest.Target, now time.Time) (*Store, *storagetest.Faults) {
	t.Helper()
	migrated(t, tg)
	faults := &storagetest.Faults{}
	s := NewStore(faults.Open(t, tg))
	for _, id := range []string{"A-1", "A-2", "A-3"} {
		insertar(t, s, nuevoConsumo(id, now))
	}
	if _, err := s.Claim(t.Context(), "A-2", claimFor(OpConfirmar, now)); err != nil {
		t.Fatal(err)
	}
	if storage.IsPostgres(tg.DB) {
		if _, err := tg.DB.ExecContext(t.Context(), "ANALYZE consumos, consumo_intentos"); err != nil {
			t.Fatal(err)
		}
	}
	return s, faults
}

// TestUnknownCountsReadTheirIndexes: the two counts of /metrics (Store.Unknown) read the index of
// the held records and the index of attempts by result and operation, not their tables.
func TestUnknownCountsReadTheirIndexes(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
		s, faults := storeToExplain(t, tg, now)
		faults.Record()
		held, _, err := s.Unknown(t.Context(), now.Add(time.Hour))
		if err != nil || held != 1 {
			t.Fatalf("Unknown = %d held, %v; want the one claimed record", held, err)
		}
		statements := faults.RecordedStatements()
		for _, c := range []struct{ table, index string }{
			{`FROM "consumos"`, "consumos_en_curso_idx"},
			{`FROM "consumo_intentos"`, "consumo_intentos_resultado_idx"},
		} {
			var found bool
			for _, st := range statements {
				if !strings.Contains(st.SQL, c.table) {
					continue
				}
				found = true
				if plan := storagetest.Explain(t, tg, st); !strings.Contains(plan, c.index) {
					t.Errorf("%s\ndoes not read %s:\n%s", st.SQL, c.index, plan)
				}
			}
			if !found {
				t.Errorf("no statement of Unknown read %s", c.table)
			}
		}
	})
}

// TestIntentosReadTheirIndex: the attempts have two indexes, both partial (see Migrations), and
// their readers use them: Store.Intentos the one by authorization id, Store.NoRegistradas the one
// by result (Store.Unknown: TestUnknownCountsReadTheirIndexes).
func TestIntentosReadTheirIndex(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
		s, faults := storeToExplain(t, tg, now)

		indexes := map[string]string{} // name -> definition
		q := `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'consumo_intentos' AND sql IS NOT NULL`
		if storage.IsPostgres(tg.DB) {
			q = `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'consumo_intentos' AND indexname <> 'consumo_intentos_pkey'`
		}
		rows, err := tg.DB.QueryContext(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name, def string
			if err := rows.Scan(&name, &def); err != nil {
				t.Fatal(err)
			}
			indexes[name] = def
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			t.Fatal(err)
		}
		byID, byResult := indexes["consumo_intentos_autorizacion_idx"], indexes["consumo_intentos_resultado_idx"]
		if len(indexes) != 2 || !strings.Contains(byID, "WHERE") || !strings.Contains(byID, "IS NOT NULL") ||
			!strings.Contains(byResult, "WHERE") || !strings.Contains(byResult, "<> 'ok'") {
			t.Errorf("indexes of consumo_intentos:\n%v\nwant the partial ones by authorization id and by result", indexes)
		}

		faults.Record()
		got, err := s.Intentos(t.Context(), "A-2")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Operacion != UpstreamGrabarAutorizacion || got[1].Operacion != UpstreamGrabarConsumo {
			t.Errorf("Intentos(A-2) = %+v; want its authorization's and its confirmation's attempts", got)
		}
		statements := faults.RecordedStatements()
		if len(statements) != 1 {
			t.Fatalf("Intentos ran %d statements; want one", len(statements))
		}
		if plan := storagetest.Explain(t, tg, statements[0]); !strings.Contains(plan, "consumo_intentos_autorizacion_idx") {
			t.Errorf("%s\ndoes not read consumo_intentos_autorizacion_idx:\n%s", statements[0].SQL, plan)
		}

		faults.Record()
		if _, err := s.NoRegistradas(t.Context(), 10); err != nil {
			t.Fatal(err)
		}
		statements = faults.RecordedStatements()
		if len(statements) != 1 {
			t.Fatalf("NoRegistradas ran %d statements; want one", len(statements))
		}
		if plan := storagetest.Explain(t, tg, statements[0]); !strings.Contains(plan, "consumo_intentos_resultado_idx") {
			t.Errorf("%s\ndoes not read consumo_intentos_resultado_idx:\n%s", statements[0].SQL, plan)
		}
	})
}

// A store decides first on its copy of a record it wrote (Store), and again on the record as
// stored whenever the copy is stale: after another process's write, after an operator's UPDATE
// by hand (the version trigger), when the stale copy refuses what the stored record allows, and
// when nothing would be written to check it.
func TestStoreCopyIsOnlyAGuess(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := migrated(t, tg)
		other := NewStore(tg.DB) // another process on the same database
		ctx := t.Context()
		now := time.Now().UTC()
		byHand := func(id, set string, v any) {
			t.Helper()
			if _, err := tg.DB.NewUpdate().Model((*Consumo)(nil)).Set(set, v).Where("autorizacion_id = ?", id).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		stored := func(id string) *Consumo {
			t.Helper()
			c, err := other.ByAutorizacion(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		note := func(st *Store, id, v string) {
			t.Helper()
			if _, err := st.Update(ctx, id, func(c *Consumo) error { c.ImagenQR = v; return nil }); err != nil {
				t.Fatal(err)
			}
		}

		insertar(t, s, nuevoConsumo("A-COPY", now))
		note(other, "A-COPY", "other")
		var seen []string
		if _, err := s.Update(ctx, "A-COPY", func(c *Consumo) error { seen = append(seen, c.ImagenQR); c.ImagenQR += "+s"; return nil }); err != nil {
			t.Fatal(err)
		}
		if got := stored("A-COPY"); len(seen) != 2 || seen[0] != "" || seen[1] != "other" || got.ImagenQR != "other+s" || got.Version != 2 {
			t.Fatalf("after another process's write: fn saw %q, stored %q v%d; want the copy, then the stored record, other+s v2", seen, got.ImagenQR, got.Version)
		}
		note(other, "A-COPY", "again")
		if got, err := s.Update(ctx, "A-COPY", func(*Consumo) error { return nil }); err != nil || got.ImagenQR != "again" || got.Version != 3 {
			t.Fatalf("a change of nothing answered %+v, %v; want the record as stored (again, v3), not the copy", got, err)
		}

		byHand("A-COPY", "estado = ?", EstadoReversado)
		if got := stored("A-COPY"); got.Version != 4 {
			t.Fatalf("an UPDATE by hand left version %d, want 4", got.Version)
		}
		var se *StateError
		if _, err := s.Update(ctx, "A-COPY", func(c *Consumo) error { return c.RegistrarOTP("sealed", now) }); !errors.As(err, &se) {
			t.Fatalf("OTP on a record reversed by hand: %v, want a *StateError", err)
		}
		if got := stored("A-COPY"); got.Estado != EstadoReversado || got.OTPSellado != "" || got.Version != 4 {
			t.Fatalf("the refused OTP changed the record: %+v", got)
		}

		// The claim, which calls upstream once it is committed.
		insertar(t, s, nuevoConsumo("A-CLAIM", now))
		note(other, "A-CLAIM", "other")
		seen = nil
		claim := claimFor(OpConfirmar, now)
		cl, err := s.Claim(ctx, "A-CLAIM", func(c *Consumo) (*Intento, error) { seen = append(seen, c.ImagenQR); return claim(c) })
		if got := stored("A-CLAIM"); err != nil || seen[len(seen)-1] != "other" || got.ImagenQR != "other" || got.OperacionEnCurso != UpstreamGrabarConsumo || cl.Consumo.Version != got.Version {
			t.Fatalf("claim after another process's write: %v, fn saw %q, stored %+v", err, seen, got)
		}
		byHand("A-CLAIM", "operacion_en_curso = ?", nil) // an operator releases the record
		if _, err := s.Claim(ctx, "A-CLAIM", claimFor(OpReverso, now)); err != nil {
			t.Fatalf("claim of a record released by hand: %v; the stale copy's refusal must be decided again", err)
		}
		if got := stored("A-CLAIM"); got.OperacionEnCurso != UpstreamGrabarReversoAutorizacion {
			t.Fatalf("record %+v, want it claimed for the reversal", got)
		}
		if _, err := s.Update(ctx, "A-CLAIM", func(c *Consumo) error { return c.RegistrarOTP("sealed", now) }); !errors.As(err, new(*ConflictError)) {
			t.Fatalf("OTP on a claimed record: %v, want a *ConflictError", err)
		}
		byHand("A-CLAIM", "operacion_en_curso = ?", nil)
		if _, err := s.Update(ctx, "A-CLAIM", func(c *Consumo) error { return c.RegistrarOTP("sealed", now) }); err != nil {
			t.Fatalf("OTP on a record released by hand: %v; the stale copy's refusal must be decided again", err)
		}
		if got := stored("A-CLAIM"); got.Estado != EstadoOTPRecibido || got.OTPSellado != "sealed" {
			t.Fatalf("record %+v, want the OTP registered", got)
		}
	})
}

// The version trigger survives the migrations on both engines, and bumps the version of a
// change that leaves it where it was or sets it back.
func TestVersionTrigger(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := migrated(t, tg)
		ctx := t.Context()
		insertar(t, s, nuevoConsumo("A-TRIG", time.Now().UTC()))
		for i, q := range []string{
			"UPDATE consumos SET imagen_qr = 'x' WHERE autorizacion_id = 'A-TRIG'",
			"UPDATE consumos SET imagen_qr = 'y', version = 0 WHERE autorizacion_id = 'A-TRIG'",
			"UPDATE consumos SET version = version + 5 WHERE autorizacion_id = 'A-TRIG'",
		} {
			if _, err := tg.DB.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
			c, err := s.ByAutorizacion(ctx, "A-TRIG")
			if err != nil {
				t.Fatal(err)
			}
			if want := []int64{1, 2, 7}[i]; c.Version != want {
				t.Fatalf("%s: version %d, want %d", q, c.Version, want)
			}
		}
	})
}

// On PostgreSQL the steps after this store's own write start from its copy: the OTP is one
// statement, the claim one statement, with no read before them.
func TestNextStepNeedsNoReadOnPostgres(t *testing.T) {
	s, other, faults := onPostgres(t)
	ctx := t.Context()
	now := time.Now().UTC()
	insertar(t, s, nuevoConsumo("A-NEXT", now))
	faults.Record()
	if _, err := s.Update(ctx, "A-NEXT", func(c *Consumo) error { return c.RegistrarOTP("sealed", now) }); err != nil {
		t.Fatal(err)
	}
	if statements := faults.Recorded(); len(statements) != 1 || !strings.HasPrefix(statements[0], "UPDATE ") {
		t.Fatalf("OTP: %d statements %q; want one UPDATE", len(statements), statements)
	}
	faults.Record()
	cl, err := s.Claim(ctx, "A-NEXT", claimFor(OpConfirmar, now))
	if statements := faults.Recorded(); err != nil || !oneWith(statements) {
		t.Fatalf("claim: %v, statements %q; want one WITH", err, statements)
	}
	stored, _ := other.ByAutorizacion(ctx, "A-NEXT")
	if stored.Version != 2 || stored.OperacionEnCurso != UpstreamGrabarConsumo || stored.OTPSellado != "sealed" || cl.Consumo.Version != 2 {
		t.Fatalf("record %+v after the OTP and the claim", stored)
	}
}
