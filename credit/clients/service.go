package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/platform/integrations/erp"
	"github.com/platform/integrations/internal/validation"
)

// ERP is what the client registry needs from the ERP; *erp.Client implements it.
type ERP interface {
	Lookup(ctx context.Context, q erp.LookupQuery) (*erp.LookupResult, error)
	SyncClient(ctx context.Context, op erp.Operation, p erp.ClientPayload) (*erp.SyncResult, error)
}

// DefaultSyncLease is how long a sync claim keeps other syncs of the same client away. It only
// matters when a process dies mid-sync: a live sync releases its claim as soon as the ERP answers
// or its deadline (ERP_TIMEOUT) passes.
const DefaultSyncLease = 2 * time.Minute

// Service is the client registry: the use cases behind the client endpoints. It is safe for
// concurrent use and keeps no state of its own, so several service instances can share one
// database.
type Service struct {
	store *Store
	erp   ERP
	now   func() time.Time
	lease time.Duration
}

// Option configures a Service.
type Option func(*Service) error

// WithSyncLease sets the lease of a sync claim (default DefaultSyncLease). Set it above the ERP
// timeout, or a slow but live sync could be overtaken.
func WithSyncLease(d time.Duration) Option {
	return func(c *Service) error {
		if d <= 0 {
			return fmt.Errorf("clients: WithSyncLease: lease must be positive, got %s", d)
		}
		c.lease = d
		return nil
	}
}

// WithClock replaces the clock used for erp_pre_check.checked_at and for the store's
// timestamps (tests).
func WithClock(now func() time.Time) Option {
	return func(c *Service) error {
		if now == nil {
			return errors.New("clients: WithClock: nil clock")
		}
		c.now = now
		c.store.now = now
		return nil
	}
}

// NewService returns the registry on store, reaching the ERP through erpClient.
func NewService(store *Store, erpClient ERP, opts ...Option) (*Service, error) {
	if store == nil || erpClient == nil {
		return nil, errors.New("clients: NewService: store and ERP client are required")
	}
	c := &Service{store: store, erp: erpClient, now: func() time.Time { return time.Now().UTC() }, lease: DefaultSyncLease}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Create validates f and stores a new client with erp_synced false and the given source system.
// Errors: *ValidationError, ErrExists, ErrCodigoClienteTaken.
func (c *Service) Create(ctx context.Context, source string, f Fields) (*Client, error) {
	if err := f.Validate(true); err != nil {
		return nil, err
	}
	client := &Client{SourceSystem: source}
	f.Apply(client)
	if err := c.store.Insert(ctx, client); err != nil {
		return nil, err
	}
	return client, nil
}

// Update applies the fields sent in f to the client found by codigo (see Store.ByCodigo);
// erp_synced becomes false and source_system becomes source. Errors: *ValidationError,
// ErrNotFound, ErrExists, ErrCodigoClienteTaken.
func (c *Service) Update(ctx context.Context, codigo, source string, f Fields) (*Client, error) {
	if err := f.Validate(false); err != nil {
		return nil, err
	}
	return c.store.Update(ctx, codigo, func(client *Client) error {
		f.Apply(client)
		client.SourceSystem = source
		return nil
	})
}

// Get returns the client found by codigo, or ErrNotFound.
func (c *Service) Get(ctx context.Context, codigo string) (*Client, error) {
	return c.store.ByCodigo(ctx, codigo)
}

// List returns a page of clients (see Store.List).
func (c *Service) List(ctx context.Context, q Query) (*Page, error) {
	return c.store.List(ctx, q)
}

// PreCheck is the ERP side of a pre-check: when it ran and whether the ERP knows the client.
type PreCheck struct {
	CheckedAt time.Time
	Found     bool
}

// Lookup is the answer of both pre-checks for one (codigo_empresa, identificacion).
type Lookup struct {
	PreCheck
	// ERPClient is the ERP's record when Found, nil otherwise.
	ERPClient *erp.ClientRecord
	// Local is the local record, nil when there is none.
	Local *Client
}

// LookupQuery names the client both pre-checks look for.
type LookupQuery struct {
	CodigoEmpresa  string
	Identificacion string
	// NombreCliente, when set, is sent to the ERP with the query (see erp.Client.Lookup).
	NombreCliente string
}

// Validate checks codigo_empresa (at most 20 characters) and identificacion (at most 50), both
// required.
func (q LookupQuery) Validate() error {
	var p validation.Problems
	p.Text("codigo_empresa", q.CodigoEmpresa, true, 20)
	p.Text("identificacion", q.Identificacion, true, 50)
	return p.Err()
}

// Lookup asks the ERP's external query and the local store about the client at the same time.
// An invalid query is a *ValidationError; an ERP failure (an upstream.Error of the erp package) is
// returned as is, and the local answer is then dropped.
func (c *Service) Lookup(ctx context.Context, q LookupQuery) (*Lookup, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	codigoEmpresa, identificacion := q.CodigoEmpresa, q.Identificacion
	out := &Lookup{PreCheck: PreCheck{CheckedAt: c.now().UTC()}}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		res, err := c.erp.Lookup(gctx, erp.LookupQuery(q))
		if err != nil {
			return err
		}
		out.Found, out.ERPClient = res.Found, res.Client
		return nil
	})
	g.Go(func() error {
		local, err := c.store.ByIdentificacion(gctx, codigoEmpresa, identificacion)
		switch {
		case errors.Is(err, ErrNotFound):
			return nil
		case err != nil:
			return err
		}
		out.Local = local
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// Reasons of POST /clients/from-creditsystem.
const (
	ReasonCreated     = "CREATED"
	ReasonExistsInERP = "EXISTS_IN_ERP"
	ReasonExistsLocal = "EXISTS_LOCAL"
)

// ExistsError is the refusal of CreateFromCreditSystem: the client already exists in the
// ERP (Reason ReasonExistsInERP, ERPClient set, Local possibly set too) or only locally (Reason
// ReasonExistsLocal). errors.Is(err, ErrExists) holds.
type ExistsError struct {
	Reason string
	Lookup
}

func (e *ExistsError) Error() string {
	if e.Reason == ReasonExistsInERP {
		return "clients: the client already exists in the ERP"
	}
	return "clients: the client already exists in the local registry"
}

// Is makes errors.Is(err, ErrExists) hold.
func (e *ExistsError) Is(target error) bool { return target == ErrExists }

// CreateFromCreditSystem is the creditsystem's entry point: only the fields of
// Fields.CreditSystemFields are taken, the ERP and the local store are checked in parallel,
// and the client is created (source CREDITSYSTEM, erp_synced false) only when neither knows it.
// Errors: *ValidationError; *ExistsError (EXISTS_IN_ERP before EXISTS_LOCAL); the
// ERP's errors. A create that loses a race with an identical one is reported as EXISTS_LOCAL, so
// repeating the request never creates twice.
func (c *Service) CreateFromCreditSystem(ctx context.Context, f Fields) (*Client, PreCheck, error) {
	f = f.CreditSystemFields()
	if err := f.Validate(true); err != nil {
		return nil, PreCheck{}, err
	}
	// The pre-check sends the name too: an ERP that will not take this client (the fake's
	// nombre_cliente ERROR_API) refuses it here, a 502, before anything is created.
	look, err := c.Lookup(ctx, LookupQuery{CodigoEmpresa: f.CodigoEmpresa.Value, Identificacion: f.Identificacion.Value, NombreCliente: f.NombreCliente.Value})
	if err != nil {
		return nil, PreCheck{}, err
	}
	switch {
	case look.Found:
		return nil, look.PreCheck, &ExistsError{Reason: ReasonExistsInERP, Lookup: *look}
	case look.Local != nil:
		return nil, look.PreCheck, &ExistsError{Reason: ReasonExistsLocal, Lookup: *look}
	}
	client := &Client{SourceSystem: SourceCreditSystem}
	f.Apply(client)
	if err := c.store.Insert(ctx, client); err != nil {
		if !errors.Is(err, ErrExists) {
			return nil, PreCheck{}, err
		}
		local, lerr := c.store.ByIdentificacion(ctx, client.CodigoEmpresa, client.Identificacion)
		if lerr != nil {
			return nil, PreCheck{}, errors.Join(err, lerr)
		}
		look.Local = local
		return nil, look.PreCheck, &ExistsError{Reason: ReasonExistsLocal, Lookup: *look}
	}
	return client, look.PreCheck, nil
}

// SyncResult is the outcome of SyncERP.
type SyncResult struct {
	// Operation is what was asked of the ERP: erp.OperationCreate (operacion 0) or
	// erp.OperationUpdate (operacion 1).
	Operation erp.Operation
	// Client is the record after the sync.
	Client *Client
	// ERP is the ERP's answer.
	ERP *erp.SyncResult
}

// SyncError is an ERP failure during SyncERP: it names the operation asked of the ERP
// (Operation.String() is "create" or "update") and wraps the erp package's error.
type SyncError struct {
	Operation erp.Operation
	Err       error
}

func (e *SyncError) Error() string {
	return "clients: ERP sync (" + e.Operation.String() + "): " + e.Err.Error()
}

func (e *SyncError) Unwrap() error { return e.Err }

// syncOperation is the operacion a sync of client sends: update (1) once the ERP has accepted
// the client before (erp_synced_at is set: erp_synced true, or false again after a PUT), create
// (0) otherwise. The specification says "depending on erp_synced"; since a PUT turns erp_synced
// false, reading it literally would ask the ERP to create again a client it already has.
func syncOperation(client *Client) erp.Operation {
	if client.ERPSynced || client.ERPSyncedAt != nil {
		return erp.OperationUpdate
	}
	return erp.OperationCreate
}

// SyncERP sends the client found by codigo to the ERP (POST /clients/:codigo/sync-erp). Only one
// sync of a client runs at a time (ErrSyncInProgress otherwise), and no database transaction
// is held while the ERP is called. On success erp_response, erp_synced_at and the codigo_cliente
// the ERP assigned are stored and erp_synced becomes true (unless the client was updated during
// the call). On any ERP failure nothing is recorded and a *SyncError is returned, wrapping
// *erp.Error for a rejection or *erp.TransportError (erp.IsTimeout) for no answer. A sync that
// timed out may have been applied by the ERP; it is never retried automatically.
func (c *Service) SyncERP(ctx context.Context, codigo string) (*SyncResult, error) {
	found, err := c.store.ByCodigo(ctx, codigo)
	if err != nil {
		return nil, err
	}
	token, client, err := c.store.ClaimSync(ctx, found.ID, c.lease)
	if err != nil {
		return nil, err
	}
	op := syncOperation(client)
	res, err := c.erp.SyncClient(ctx, op, Payload(client))
	if err != nil {
		err = &SyncError{Operation: op, Err: err}
		// The claim is released even when the caller has gone away.
		if rerr := c.store.ReleaseSync(context.WithoutCancel(ctx), client.ID, token); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
		return nil, err
	}
	done, err := c.store.FinishSync(context.WithoutCancel(ctx), client.ID, token, SyncOutcome{
		SentVersion:   client.Version,
		CodigoCliente: res.CodigoCliente,
		Response:      RawJSON(res.Raw),
	})
	if err != nil {
		_ = c.store.ReleaseSync(context.WithoutCancel(ctx), client.ID, token)
		return nil, err
	}
	return &SyncResult{Operation: op, Client: done, ERP: res}, nil
}

// Payload maps a local client to the ERP payload (the erp package renames telefono_n).
func Payload(client *Client) erp.ClientPayload {
	s := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	p := erp.ClientPayload{
		CodigoCliente:  s(client.CodigoCliente),
		CodigoEmpresa:  client.CodigoEmpresa,
		NombreCliente:  client.NombreCliente,
		Identificacion: client.Identificacion,
		Email:          s(client.Email),
		Telefono1:      s(client.Telefono1),
		Telefono2:      s(client.Telefono2),
		Direccion1:     s(client.Direccion1),
		CodigoVendedor: s(client.CodigoVendedor),
		TerminoPagos:   s(client.TerminoPagos),
		CodigoSucursal: s(client.CodigoSucursal),
		Localizacion:   s(client.Localizacion),
		ListaPrecios:   s(client.ListaPrecios),
		NivelRiesgo:    s(client.NivelRiesgo),
	}
	if client.LimiteCredito1.Valid {
		v := client.LimiteCredito1.Decimal
		p.LimiteCredito1 = &v
	}
	if client.LimiteCredito2.Valid {
		v := client.LimiteCredito2.Decimal
		p.LimiteCredito2 = &v
	}
	if len(client.ExtraFields) > 0 {
		p.ExtraFields, _ = json.Marshal(map[string]json.RawMessage(client.ExtraFields))
	}
	return p
}
