package clients_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/credit/clients"
	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/erp/erptest"
	"github.com/platform/integrations/internal/storage/storagetest"
)

type registry struct {
	*clients.Service
	store *clients.Store
	erp   *erptest.Server
}

func newRegistry(t *testing.T, tg storagetest.Target, timeout time.Duration, opts ...erptest.Option) registry {
	t.Helper()
	srv := erptest.NewServer(opts...)
	t.Cleanup(srv.Close)
	ec, err := erp.New(srv.Config(timeout))
	if err != nil {
		t.Fatal(err)
	}
	store := migratedStore(t, tg)
	svc, err := clients.NewService(store, ec)
	if err != nil {
		t.Fatal(err)
	}
	return registry{svc, store, srv}
}

// fields builds the input from a JSON object the way a decoder would: text members by their
// specification names, limits as decimal text, extra_fields as an object.
func fields(t *testing.T, body string) clients.Fields {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	var f clients.Fields
	for name, field := range f.TextFields() {
		var v string
		if raw, ok := m[name]; ok && json.Unmarshal(raw, &v) == nil {
			*field = clients.FieldValue(v)
		}
	}
	var limit string
	if raw, ok := m["limite_credito_1"]; ok && json.Unmarshal(raw, &limit) == nil {
		f.LimiteCredito1 = clients.FieldValue(decimal.RequireFromString(limit))
	}
	var extra clients.ExtraFields
	if raw, ok := m["extra_fields"]; ok && json.Unmarshal(raw, &extra) == nil {
		f.ExtraFields = clients.FieldValue(extra)
	}
	return f
}

func TestCreateFromCreditSystem(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		r := newRegistry(t, tg, 2*time.Second)
		ctx := t.Context()

		c, pre, err := r.CreateFromCreditSystem(ctx, fields(t, `{"codigo_empresa":"000598","nombre_cliente":"Ana","identificacion":"0102030405",
			"telefono_1":"0991","codigo_cliente":"IGNORED","codigo_vendedor":"IGNORED"}`))
		if err != nil {
			t.Fatal(err)
		}
		if c.SourceSystem != clients.SourceCreditSystem || c.ERPSynced || c.CodigoCliente != nil || c.CodigoVendedor != nil || pre.Found || pre.CheckedAt.IsZero() {
			t.Fatalf("created %+v pre-check %+v", c, pre)
		}

		_, _, err = r.CreateFromCreditSystem(ctx, fields(t, `{"codigo_empresa":"000598","nombre_cliente":"Ana","identificacion":"0102030405"}`))
		var exists *clients.ExistsError
		if !errors.As(err, &exists) || exists.Reason != clients.ReasonExistsLocal || exists.Local == nil || exists.Local.ID != c.ID || exists.Found || exists.ERPClient != nil {
			t.Fatalf("repeat: %v %+v, want EXISTS_LOCAL with the local record", err, exists)
		}
		if !errors.Is(err, clients.ErrExists) {
			t.Fatal("ClientExistsError must match ErrClientExists")
		}

		_, _, err = r.CreateFromCreditSystem(ctx, fields(t, `{"codigo_empresa":"000598","nombre_cliente":"X","identificacion":"`+erptest.IdentificacionExisting+`"}`))
		if !errors.As(err, &exists) || exists.Reason != clients.ReasonExistsInERP || !exists.Found || exists.ERPClient.CodigoCliente != erptest.CodigoClienteExisting || exists.Local != nil {
			t.Fatalf("ERP client: %v %+v, want EXISTS_IN_ERP", err, exists)
		}

		// Known in both: the ERP wins.
		if _, err := r.Create(ctx, clients.SourceDashboard, fields(t, `{"codigo_empresa":"E2","nombre_cliente":"Y","identificacion":"`+erptest.IdentificacionExisting+`"}`)); err != nil {
			t.Fatal(err)
		}
		_, _, err = r.CreateFromCreditSystem(ctx, fields(t, `{"codigo_empresa":"E2","nombre_cliente":"Y","identificacion":"`+erptest.IdentificacionExisting+`"}`))
		if !errors.As(err, &exists) || exists.Reason != clients.ReasonExistsInERP || exists.Local == nil {
			t.Fatalf("both: %v %+v, want EXISTS_IN_ERP with local_record", err, exists)
		}

		lookups := r.erp.Calls(erp.OpLookupClient)
		_, _, err = r.CreateFromCreditSystem(ctx, fields(t, `{"codigo_empresa":"000598","identificacion":"1","email":"nope"}`))
		var ve *clients.ValidationError
		if !errors.As(err, &ve) || len(ve.Problems) != 2 {
			t.Fatalf("invalid input: %v", err)
		}
		if r.erp.Calls(erp.OpLookupClient) != lookups {
			t.Fatal("invalid input reached the ERP")
		}

		r.erp.Script(erp.OpLookupClient, erptest.BusinessError("consulta rechazada"))
		_, _, err = r.CreateFromCreditSystem(ctx, fields(t, `{"codigo_empresa":"000598","nombre_cliente":"Z","identificacion":"0202020202"}`))
		var apiErr *erp.Error
		if !errors.As(err, &apiErr) || apiErr.Message != "consulta rechazada" {
			t.Fatalf("ERP rejection: %v", err)
		}
		if _, err := r.store.ByIdentificacion(ctx, "000598", "0202020202"); !errors.Is(err, clients.ErrNotFound) {
			t.Fatalf("a failed pre-check stored the client: %v", err)
		}
	})
}

// localLookupHook reports the local pre-check query (the SELECT by identificacion) and makes it
// wait for the ERP lookup, while the ERP fake's hook waits for it: both can only complete their
// wait when they run at the same time.
type localLookupHook struct {
	identificacion string
	local, remote  chan struct{}
	once           sync.Once
	sawRemote      atomic.Bool
}

func (h *localLookupHook) BeforeQuery(ctx context.Context, e *bun.QueryEvent) context.Context {
	if strings.HasPrefix(e.Query, "SELECT") && strings.Contains(e.Query, `"clients"`) && strings.Contains(e.Query, h.identificacion) {
		h.once.Do(func() {
			close(h.local)
			select {
			case <-h.remote:
				h.sawRemote.Store(true)
			case <-time.After(2 * time.Second):
			}
		})
	}
	return ctx
}

func (h *localLookupHook) AfterQuery(context.Context, *bun.QueryEvent) {}

func TestPreChecksRunInParallel(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		const ident = "0303030303"
		hook := &localLookupHook{identificacion: ident, local: make(chan struct{}), remote: make(chan struct{})}
		var sawLocal atomic.Bool
		r := newRegistry(t, tg, 5*time.Second, erptest.OnLookup(func(ctx context.Context, _, identificacion string) {
			if identificacion != ident {
				return
			}
			close(hook.remote)
			select {
			case <-hook.local:
				sawLocal.Store(true)
			case <-time.After(2 * time.Second):
			}
		}))
		tg.DB.AddQueryHook(hook)
		if _, _, err := r.CreateFromCreditSystem(t.Context(), fields(t, `{"codigo_empresa":"000598","nombre_cliente":"P","identificacion":"`+ident+`"}`)); err != nil {
			t.Fatal(err)
		}
		if !sawLocal.Load() || !hook.sawRemote.Load() {
			t.Fatalf("ERP lookup saw the local lookup running: %v; local lookup saw the ERP lookup running: %v; want both (parallel)", sawLocal.Load(), hook.sawRemote.Load())
		}
	})
}

func TestSyncERP(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		r := newRegistry(t, tg, time.Second)
		ctx := t.Context()
		c, err := r.Create(ctx, clients.SourceDashboard, fields(t, `{"codigo_empresa":"000598","nombre_cliente":"Ana","identificacion":"0404040404",
			"telefono_1":"0991","limite_credito_1":"1500.50","extra_fields":{"valor_1":"10.5","texto_1":"nota"}}`))
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.SyncERP(ctx, fmt.Sprint(c.ID))
		if err != nil {
			t.Fatal(err)
		}
		if res.Operation != erp.OperationCreate || !res.Client.ERPSynced || res.Client.CodigoCliente == nil ||
			*res.Client.CodigoCliente != "C-0404040404" || res.Client.ERPSyncedAt == nil || len(res.Client.ERPResponse) == 0 {
			t.Fatalf("first sync: %+v", res)
		}
		sent := r.erp.Requests(erp.OpSyncClient)[0].Body
		var payload map[string]json.RawMessage
		if err := json.Unmarshal(sent, &payload); err != nil {
			t.Fatal(err)
		}
		if d, err := decimal.NewFromString(string(payload["limite_credito_1"])); err != nil || !d.Equal(decimal.RequireFromString("1500.50")) {
			t.Errorf("payload limite_credito_1 = %s, want the number 1500.50", payload["limite_credito_1"])
		}
		for k, want := range map[string]string{"operacion": "0", "numero_telefono_1": `"0991"`, "valor_1": "10.5", "texto_1": `"nota"`} {
			if string(payload[k]) != want {
				t.Errorf("payload %s = %s, want %s", k, payload[k], want)
			}
		}

		if _, err := r.Update(ctx, "C-0404040404", clients.SourceCreditSystem, fields(t, `{"telefono_1":"0999"}`)); err != nil {
			t.Fatal(err)
		}
		res, err = r.SyncERP(ctx, "C-0404040404")
		if err != nil {
			t.Fatal(err)
		}
		if res.Operation != erp.OperationUpdate || !res.Client.ERPSynced {
			t.Fatalf("sync after update: operation %v synced %v, want update and synced", res.Operation, res.Client.ERPSynced)
		}
		if got, _ := r.erp.Client("000598", "0404040404"); got.Telefono1 != "0999" {
			t.Fatalf("ERP holds telefono %q after the update sync", got.Telefono1)
		}
		if _, err := r.SyncERP(ctx, "NOPE"); !errors.Is(err, clients.ErrNotFound) {
			t.Fatalf("unknown codigo: %v", err)
		}
	})
}

func TestSyncERPFailuresRecordNothing(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		r := newRegistry(t, tg, time.Second)
		ctx := t.Context()
		bad, err := r.Create(ctx, clients.SourceDashboard, fields(t, `{"codigo_empresa":"000598","nombre_cliente":"`+erptest.NombreClienteErrorAPI+`","identificacion":"0505050505"}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.SyncERP(ctx, fmt.Sprint(bad.ID))
		var apiErr *erp.Error
		var syncErr *clients.SyncError
		if !errors.As(err, &apiErr) || !errors.As(err, &syncErr) || syncErr.Operation != erp.OperationCreate {
			t.Fatalf("error_api: %v, want *erp.Error inside a create *clients.SyncError", err)
		}
		after, _ := r.Get(ctx, fmt.Sprint(bad.ID))
		if after.ERPSynced || after.ERPSyncedAt != nil || after.ERPResponse != nil || after.CodigoCliente != nil {
			t.Fatalf("a rejected sync recorded something: %+v", after)
		}

		slow, err := r.Create(ctx, clients.SourceDashboard, fields(t, `{"codigo_empresa":"000598","nombre_cliente":"Lento","identificacion":"0606060606"}`))
		if err != nil {
			t.Fatal(err)
		}
		r.erp.Script(erp.OpSyncClient, erptest.Hang())
		_, err = r.SyncERP(ctx, fmt.Sprint(slow.ID))
		if !erp.IsTimeout(err) {
			t.Fatalf("hang: %v, want a timeout", err)
		}
		// The claim was released: the next manual attempt runs.
		if _, err := r.SyncERP(ctx, fmt.Sprint(slow.ID)); err != nil {
			t.Fatalf("sync after a timeout: %v", err)
		}
	})
}

func TestConcurrentSyncsCallTheERPOnce(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		// The first sync holds the ERP for 2 s, long enough that every other one, released
		// together with it, meets its claim even on a loaded machine (with 300 ms a late
		// goroutine could start after the first sync ended and rightly sync again).
		r := newRegistry(t, tg, 5*time.Second, erptest.WithSyncDelay(2*time.Second))
		c, err := r.Create(t.Context(), clients.SourceDashboard, fields(t, `{"codigo_empresa":"000598","nombre_cliente":"Ana","identificacion":"0707070707"}`))
		if err != nil {
			t.Fatal(err)
		}
		const n = 5
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				_, errs[i] = r.SyncERP(t.Context(), fmt.Sprint(c.ID))
			})
		}
		close(start)
		wg.Wait()
		ok, busy := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, clients.ErrSyncInProgress):
				busy++
			default:
				t.Errorf("unexpected: %v", err)
			}
		}
		if ok != 1 || busy != n-1 || r.erp.Calls(erp.OpSyncClient) != 1 {
			t.Fatalf("%d synced, %d busy, %d ERP calls; want 1, %d, 1", ok, busy, r.erp.Calls(erp.OpSyncClient), n-1)
		}
	})
}
