package clients_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/platform/integrations/credit"
	"github.com/platform/integrations/credit/clients"
	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

func migratedStore(t *testing.T, tg storagetest.Target) *clients.Store {
	t.Helper()
	if _, err := storage.Migrate(t.Context(), tg.DB, credit.MigrationsTable, credit.Migrations); err != nil {
		t.Fatal(err)
	}
	return clients.NewStore(tg.DB)
}

func ptr[T any](v T) *T { return &v }

func newClient(empresa, ident, nombre string) *clients.Client {
	return &clients.Client{CodigoEmpresa: empresa, Identificacion: ident, NombreCliente: nombre, SourceSystem: clients.SourceDashboard}
}

func TestClientStoreRoundTrip(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := migratedStore(t, tg)
		c := newClient("000598", "0102030405", "José Ñandú")
		c.CodigoCliente = ptr("C-1")
		c.Email = ptr("jose@example.com")
		c.Telefono1, c.Telefono2 = ptr("0991"), ptr("0992")
		c.Direccion1 = ptr("Av. Amazonas")
		c.CodigoVendedor, c.TerminoPagos = ptr("V1"), ptr("30D")
		c.LimiteCredito1 = decimal.NewNullDecimal(decimal.RequireFromString("999999999999.99"))
		c.LimiteCredito2 = decimal.NewNullDecimal(decimal.RequireFromString("1500.50"))
		c.CodigoSucursal, c.Localizacion, c.ListaPrecios, c.NivelRiesgo = ptr("S1"), ptr("UIO"), ptr("L1"), ptr("BAJO")
		c.ExtraFields = clients.ExtraFields{"valor_1": json.RawMessage("12345678901234567890.123456789"), "fecha_1": json.RawMessage(`"2026-01-31"`)}
		before := time.Now().UTC().Add(-time.Second)
		if err := s.Insert(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		if c.ID == 0 {
			t.Fatal("Insert did not fill the id")
		}
		got, err := s.ByCodigo(t.Context(), "C-1")
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(c)
		have, _ := json.Marshal(got)
		if string(want) != string(have) {
			t.Fatalf("read back\n got %s\nwant %s", have, want)
		}
		if got.ERPSynced || got.ERPSyncedAt != nil || got.ERPResponse != nil || got.Version != 1 {
			t.Fatalf("new client must be unsynced at version 1: %+v", got)
		}
		if got.CreatedAt.Location() != time.UTC || got.CreatedAt.Before(before) {
			t.Fatalf("created_at %v: want UTC and now", got.CreatedAt)
		}
		if !got.LimiteCredito1.Decimal.Equal(c.LimiteCredito1.Decimal) || !got.LimiteCredito2.Decimal.Equal(c.LimiteCredito2.Decimal) {
			t.Fatalf("limits %v %v: want exact values", got.LimiteCredito1, got.LimiteCredito2)
		}
		if string(got.ExtraFields["valor_1"]) != "12345678901234567890.123456789" {
			t.Fatalf("extra valor_1 %s: want every digit kept", got.ExtraFields["valor_1"])
		}
	})
}

func TestClientStoreUniqueness(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := migratedStore(t, tg)
		ctx := t.Context()
		if err := s.Insert(ctx, newClient("E1", "111", "A")); err != nil {
			t.Fatal(err)
		}
		if err := s.Insert(ctx, newClient("E1", "111", "B")); !errors.Is(err, clients.ErrExists) {
			t.Fatalf("same (identificacion, codigo_empresa): %v, want ErrClientExists", err)
		}
		if err := s.Insert(ctx, newClient("E2", "111", "C")); err != nil {
			t.Fatalf("same identificacion in another company must be allowed: %v", err)
		}
		// Any number of clients without codigo_cliente.
		if err := s.Insert(ctx, newClient("E1", "222", "D")); err != nil {
			t.Fatal(err)
		}
		withCodigo := newClient("E1", "333", "E")
		withCodigo.CodigoCliente = ptr("C-9")
		if err := s.Insert(ctx, withCodigo); err != nil {
			t.Fatal(err)
		}
		dup := newClient("E1", "444", "F")
		dup.CodigoCliente = ptr("C-9")
		if err := s.Insert(ctx, dup); !errors.Is(err, clients.ErrCodigoClienteTaken) {
			t.Fatalf("duplicate codigo_cliente: %v, want ErrCodigoClienteTaken", err)
		}
		_, err := s.Update(ctx, "C-9", func(c *clients.Client) error { c.Identificacion = "222"; return nil })
		if !errors.Is(err, clients.ErrExists) {
			t.Fatalf("update onto an existing pair: %v, want ErrClientExists", err)
		}
		page, err := s.List(ctx, clients.Query{})
		if err != nil || page.TotalCount != 4 {
			t.Fatalf("total %v (%v), want 4: rejected writes stored nothing", page, err)
		}
	})
}

func TestClientStoreConcurrentIdenticalCreates(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := migratedStore(t, tg)
		const n = 20
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = s.Insert(t.Context(), newClient("000598", "0102030405", fmt.Sprint("client ", i)))
			}()
		}
		close(start)
		wg.Wait()
		ok, exists := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, clients.ErrExists):
				exists++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}
		if ok != 1 || exists != n-1 {
			t.Fatalf("%d created, %d ErrClientExists; want 1 and %d", ok, exists, n-1)
		}
	})
}

func TestClientStoreByCodigo(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := migratedStore(t, tg)
		ctx := t.Context()
		unsynced := newClient("E", "1", "Sin codigo")
		if err := s.Insert(ctx, unsynced); err != nil {
			t.Fatal(err)
		}
		coded := newClient("E", "2", "Con codigo")
		coded.CodigoCliente = ptr(fmt.Sprint(unsynced.ID)) // a codigo that looks like the other's id
		if err := s.Insert(ctx, coded); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name, codigo string
			wantID       int64
			wantErr      error
		}{
			{"codigo_cliente wins over an equal id", fmt.Sprint(unsynced.ID), coded.ID, nil},
			{"id of a client without codigo", fmt.Sprint(coded.ID), coded.ID, nil},
			{"unknown codigo", "NOPE", 0, clients.ErrNotFound},
			{"unknown id", "999999", 0, clients.ErrNotFound},
			{"zero-padded is not an id", "0" + fmt.Sprint(coded.ID), 0, clients.ErrNotFound},
			{"negative", "-1", 0, clients.ErrNotFound},
			// PostgreSQL (through bun) would drop the NUL and find the client without it.
			{"codigo with a NUL inside", "1\x00", 0, clients.ErrNotFound},
			{"id with a NUL inside", fmt.Sprint(coded.ID) + "\x00", 0, clients.ErrNotFound},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				c, err := s.ByCodigo(ctx, tc.codigo)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				}
				if tc.wantErr == nil && c.ID != tc.wantID {
					t.Fatalf("found id %d, want %d", c.ID, tc.wantID)
				}
			})
		}
		if c, err := s.ByIdentificacion(ctx, "E", "2"); err != nil || c.ID != coded.ID {
			t.Fatalf("ByIdentificacion: %v %v", c, err)
		}
		if _, err := s.ByIdentificacion(ctx, "OTHER", "2"); !errors.Is(err, clients.ErrNotFound) {
			t.Fatalf("ByIdentificacion other company: %v", err)
		}
	})
}

func TestClientStoreUpdate(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := migratedStore(t, tg)
		ctx := t.Context()
		c := newClient("E", "1", "Ana")
		c.CodigoCliente = ptr("C-1")
		if err := s.Insert(ctx, c); err != nil {
			t.Fatal(err)
		}
		token, _, err := s.ClaimSync(ctx, c.ID, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.FinishSync(ctx, c.ID, token, clients.SyncOutcome{SentVersion: 1, CodigoCliente: "C-1", Response: clients.RawJSON(`{"ok":1}`)}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Update(ctx, "C-1", func(c *clients.Client) error {
			c.NombreCliente = "Ana María"
			c.SourceSystem = clients.SourceCreditSystem
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got.ERPSynced || got.Version != 2 || got.ERPSyncedAt == nil || got.SourceSystem != clients.SourceCreditSystem {
			t.Fatalf("after update: synced %v version %d synced_at %v source %s; want unsynced, 2, kept, CREDITSYSTEM",
				got.ERPSynced, got.Version, got.ERPSyncedAt, got.SourceSystem)
		}
		again, _ := s.ByCodigo(ctx, "C-1")
		if again.NombreCliente != "Ana María" || again.ERPSynced || !again.UpdatedAt.After(again.CreatedAt) {
			t.Fatalf("stored %+v", again)
		}
		boom := errors.New("boom")
		if _, err := s.Update(ctx, "C-1", func(c *clients.Client) error { c.NombreCliente = "X"; return boom }); !errors.Is(err, boom) {
			t.Fatalf("closure error: %v", err)
		}
		if still, _ := s.ByCodigo(ctx, "C-1"); still.NombreCliente != "Ana María" {
			t.Fatalf("a failed closure changed the record: %q", still.NombreCliente)
		}
		if _, err := s.Update(ctx, "NOPE", func(*clients.Client) error { return nil }); !errors.Is(err, clients.ErrNotFound) {
			t.Fatalf("unknown codigo: %v", err)
		}
	})
}

func TestClientStoreList(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := migratedStore(t, tg)
		ctx := t.Context()
		for i := 1; i <= 45; i++ {
			c := newClient("E", fmt.Sprintf("09%08d", i), fmt.Sprintf("Cliente %02d", i))
			if i%2 == 0 {
				c.CodigoCliente = ptr(fmt.Sprintf("COD-%02d", i))
			}
			if err := s.Insert(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []*clients.Client{newClient("E", "ABC-1", "JOSÉ ÑANDÚ"), newClient("E", "X_1", "100% Real")} {
			if err := s.Insert(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		cases := []struct {
			name                        string
			q                           clients.Query
			total, pages, page, perPage int
			n                           int
			first                       string
		}{
			{"defaults", clients.Query{}, 47, 3, 1, 20, 20, "100% Real"},
			{"second page", clients.Query{Page: 2, PerPage: 20}, 47, 3, 2, 20, 20, "Cliente 27"},
			{"last page is partial", clients.Query{Page: 3, PerPage: 20}, 47, 3, 3, 20, 7, "Cliente 07"},
			{"past the last page", clients.Query{Page: 4, PerPage: 20}, 47, 3, 4, 20, 0, ""},
			// (page-1)*per_page beyond int32 (bun's OFFSET) and beyond int64.
			{"page far past the end", clients.Query{Page: 10_000_000_000, PerPage: 2}, 47, 24, 10_000_000_000, 2, 0, ""},
			{"largest page", clients.Query{Page: math.MaxInt, PerPage: 100}, 47, 1, math.MaxInt, 100, 0, ""},
			{"per_page clamped to 100", clients.Query{PerPage: 500}, 47, 1, 1, 100, 47, "100% Real"},
			{"per_page clamped to 1", clients.Query{PerPage: -3}, 47, 47, 1, 1, 1, "100% Real"},
			{"page below 1", clients.Query{Page: -2, PerPage: 10}, 47, 5, 1, 10, 10, "100% Real"},
			{"search nombre, case-insensitive", clients.Query{Search: "cliente 1"}, 10, 1, 1, 20, 10, "Cliente 19"},
			{"search nombre beyond ASCII", clients.Query{Search: "josé ñandú"}, 1, 1, 1, 20, 1, "JOSÉ ÑANDÚ"},
			{"search identificacion", clients.Query{Search: "0900000007"}, 1, 1, 1, 20, 1, "Cliente 07"},
			{"search identificacion ignoring case", clients.Query{Search: "abc-"}, 1, 1, 1, 20, 1, "JOSÉ ÑANDÚ"},
			{"search codigo_cliente", clients.Query{Search: "cod-3"}, 5, 1, 1, 20, 5, "Cliente 38"},
			{"percent is literal", clients.Query{Search: "100%"}, 1, 1, 1, 20, 1, "100% Real"},
			{"underscore is literal", clients.Query{Search: "x_"}, 1, 1, 1, 20, 1, "100% Real"},
			{"no match", clients.Query{Search: "zzz"}, 0, 0, 1, 20, 0, ""},
			{"NUL matches nothing", clients.Query{Search: "client\x00e 1"}, 0, 0, 1, 20, 0, ""},
			{"NUL alone matches nothing", clients.Query{Search: "\x00"}, 0, 0, 1, 20, 0, ""},
			{"blank search is no search", clients.Query{Search: "  "}, 47, 3, 1, 20, 20, "100% Real"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				p, err := s.List(ctx, tc.q)
				if err != nil {
					t.Fatal(err)
				}
				if p.TotalCount != tc.total || p.TotalPages != tc.pages || p.CurrentPage != tc.page || p.PerPage != tc.perPage || len(p.Clients) != tc.n {
					t.Fatalf("got total %d pages %d page %d per_page %d n %d; want %d %d %d %d %d",
						p.TotalCount, p.TotalPages, p.CurrentPage, p.PerPage, len(p.Clients), tc.total, tc.pages, tc.page, tc.perPage, tc.n)
				}
				if tc.n > 0 && p.Clients[0].NombreCliente != tc.first {
					t.Fatalf("first %q, want %q (newest first)", p.Clients[0].NombreCliente, tc.first)
				}
			})
		}
	})
}

func TestClientStoreSyncClaims(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		s := migratedStore(t, tg)
		ctx := t.Context()
		c := newClient("E", "1", "Ana")
		if err := s.Insert(ctx, c); err != nil {
			t.Fatal(err)
		}
		token, claimed, err := s.ClaimSync(ctx, c.ID, time.Minute)
		if err != nil || claimed.ID != c.ID {
			t.Fatalf("first claim: %v", err)
		}
		if _, _, err := s.ClaimSync(ctx, c.ID, time.Minute); !errors.Is(err, clients.ErrSyncInProgress) {
			t.Fatalf("second claim: %v, want ErrClientSyncInProgress", err)
		}
		if _, _, err := s.ClaimSync(ctx, 424242, time.Minute); !errors.Is(err, clients.ErrNotFound) {
			t.Fatalf("claim of unknown id: %v", err)
		}
		if err := s.ReleaseSync(ctx, c.ID, token); err != nil {
			t.Fatal(err)
		}
		token, _, err = s.ClaimSync(ctx, c.ID, time.Minute)
		if err != nil {
			t.Fatalf("claim after release: %v", err)
		}
		// A claim older than the lease is taken over (its holder died); the old token is dead.
		stolen, _, err := s.ClaimSync(ctx, c.ID, -time.Hour)
		if err != nil {
			t.Fatalf("takeover of an expired claim: %v", err)
		}
		if _, err := s.FinishSync(ctx, c.ID, token, clients.SyncOutcome{SentVersion: 1, CodigoCliente: "C-X"}); !errors.Is(err, clients.ErrSyncInProgress) {
			t.Fatalf("finish with a lost claim: %v", err)
		}
		// The client changes while the ERP is being called: the answer is recorded but the
		// client stays unsynced, since the ERP holds the old data.
		if _, err := s.Update(ctx, fmt.Sprint(c.ID), func(c *clients.Client) error { c.NombreCliente = "Ana 2"; return nil }); err != nil {
			t.Fatal(err)
		}
		done, err := s.FinishSync(ctx, c.ID, stolen, clients.SyncOutcome{SentVersion: 1, CodigoCliente: "C-1", Response: clients.RawJSON(`{"codigo_cliente":"C-1"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if done.ERPSynced || done.CodigoCliente == nil || *done.CodigoCliente != "C-1" || done.ERPSyncedAt == nil {
			t.Fatalf("raced sync: synced %v codigo %v at %v; want unsynced with the codigo and time stored", done.ERPSynced, done.CodigoCliente, done.ERPSyncedAt)
		}
		token, _, err = s.ClaimSync(ctx, c.ID, time.Minute)
		if err != nil {
			t.Fatalf("claim after finish: %v", err)
		}
		done, err = s.FinishSync(ctx, c.ID, token, clients.SyncOutcome{SentVersion: 2, CodigoCliente: "C-1", Response: clients.RawJSON(`{"codigo_cliente":"C-1","x":[1,2]}`)})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := s.ByCodigo(ctx, "C-1")
		var resp map[string]any
		if err := json.Unmarshal(got.ERPResponse, &resp); err != nil || resp["codigo_cliente"] != "C-1" {
			t.Fatalf("erp_response %s: %v", got.ERPResponse, err)
		}
		if !got.ERPSynced || !done.ERPSynced {
			t.Fatal("sync of the current version must mark the client synced")
		}
	})
}
