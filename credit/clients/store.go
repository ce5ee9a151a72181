package clients

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
)

// Pagination of the client list (specification "Limits"; the maximum is the design's decision).
const (
	DefaultPerPage = 20
	MaxPerPage     = 100
)

// Store persists clients with bun on SQLite or PostgreSQL (schema: Migrations). It owns the
// transactions, the compare-and-set and the columns; its methods are safe for concurrent use.
// Uniqueness is enforced by the database, never by a read-then-write in Go.
type Store struct {
	db  *bun.DB
	now func() time.Time
}

// NewStore returns a store on db, whose schema must be migrated (Migrations).
func NewStore(db *bun.DB) *Store {
	return &Store{db: db, now: func() time.Time { return time.Now().UTC() }}
}

// The unique constraints of the clients table (see Migrations).
var (
	uniqueIdentificacion = storage.Unique{Name: "clients_identificacion_empresa_key", Table: "clients", Columns: []string{"identificacion", "codigo_empresa"}}
	uniqueCodigoCliente  = storage.Unique{Name: "clients_codigo_cliente_key", Table: "clients", Columns: []string{"codigo_cliente"}}
)

// syncColumns are written only by a sync (FinishSync), never by Update.
var syncColumns = []string{"erp_response", "erp_synced_at"}

// clock returns the current time in UTC, truncated to microseconds so that what is answered
// equals what PostgreSQL gives back later.
func (s *Store) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

func searchText(c *Client) string {
	codigo := ""
	if c.CodigoCliente != nil {
		codigo = *c.CodigoCliente
	}
	// A separator no caller types keeps a search term from matching across two fields.
	return strings.ToLower(c.NombreCliente + "\x1f" + c.Identificacion + "\x1f" + codigo)
}

// Insert stores c as a new client (erp_synced false, version 1), filling ID and the timestamps.
// A duplicate (identificacion, codigo_empresa) is ErrExists; a codigo_cliente already held by
// another client is ErrCodigoClienteTaken.
func (s *Store) Insert(ctx context.Context, c *Client) error {
	now := s.clock()
	c.CreatedAt, c.UpdatedAt = now, now
	c.ERPSynced, c.ERPSyncedAt, c.ERPResponse = false, nil, nil
	c.Version = 1
	c.SearchText = searchText(c)
	err := storage.InsertBoundID(ctx, s.db, c, &c.ID)
	if err != nil {
		return uniqueError(err, "insert client")
	}
	return nil
}

// uniqueError turns a unique violation into the sentinel naming the rule that was broken.
func uniqueError(err error, op string) error {
	switch {
	case uniqueCodigoCliente.Violated(err):
		return ErrCodigoClienteTaken
	case uniqueIdentificacion.Violated(err):
		return ErrExists
	}
	return fmt.Errorf("clients: %s: %w", op, err)
}

// ByCodigo returns the client whose codigo_cliente is codigo. Clients get a codigo_cliente only
// from the ERP sync (or when the caller supplies one), so a client not yet synced is also found
// by its internal id: when no client holds codigo as codigo_cliente and codigo is a decimal id,
// the client with that id is returned. ErrNotFound otherwise.
func (s *Store) ByCodigo(ctx context.Context, codigo string) (*Client, error) {
	return s.byCodigo(ctx, s.db, codigo, false)
}

func (s *Store) byCodigo(ctx context.Context, db bun.IDB, codigo string, forUpdate bool) (*Client, error) {
	if strings.IndexByte(codigo, 0) >= 0 {
		// No stored codigo holds NUL (PostgreSQL cannot store it), and bun would drop it from
		// the query on PostgreSQL and find another client.
		return nil, &NotFoundError{Codigo: codigo}
	}
	c := new(Client)
	q := db.NewSelect().Model(c).Where("codigo_cliente = ?", codigo)
	if forUpdate && storage.IsPostgres(db) {
		q = q.For("UPDATE")
	}
	err := q.Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		id, perr := strconv.ParseInt(codigo, 10, 64)
		if perr != nil || id <= 0 || strconv.FormatInt(id, 10) != codigo {
			return nil, &NotFoundError{Codigo: codigo}
		}
		c, err := s.byID(ctx, db, id, forUpdate)
		if errors.Is(err, ErrNotFound) {
			return nil, &NotFoundError{Codigo: codigo}
		}
		return c, err
	}
	if err != nil {
		return nil, fmt.Errorf("clients: get client: %w", err)
	}
	return c.normalized(), nil
}

// ByID returns the client with the internal id, or ErrNotFound.
func (s *Store) ByID(ctx context.Context, id int64) (*Client, error) {
	return s.byID(ctx, s.db, id, false)
}

func (s *Store) byID(ctx context.Context, db bun.IDB, id int64, forUpdate bool) (*Client, error) {
	c := new(Client)
	q := db.NewSelect().Model(c).Where("id = ?", id)
	if forUpdate && storage.IsPostgres(db) {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("clients: get client: %w", err)
	}
	return c.normalized(), nil
}

// ByIdentificacion returns the client registered for (codigoEmpresa, identificacion), or
// ErrNotFound.
func (s *Store) ByIdentificacion(ctx context.Context, codigoEmpresa, identificacion string) (*Client, error) {
	c := new(Client)
	err := s.db.NewSelect().Model(c).
		Where("identificacion = ?", identificacion).Where("codigo_empresa = ?", codigoEmpresa).Scan(ctx)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("clients: find client: %w", err)
	}
	return c.normalized(), nil
}

// normalized puts every timestamp in UTC (SQLite gives back what was written, PostgreSQL the
// session's zone).
func (c *Client) normalized() *Client {
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	if c.ERPSyncedAt != nil {
		t := c.ERPSyncedAt.UTC()
		c.ERPSyncedAt = &t
	}
	return c
}

// Update changes the client found by codigo (see ByCodigo) inside one transaction: fn receives
// the current record and changes it in place; the store then writes every data column, grows the
// version, sets updated_at and erp_synced = false. An error from fn aborts the update and is
// returned as is.
func (s *Store) Update(ctx context.Context, codigo string, fn func(*Client) error) (*Client, error) {
	var out *Client
	err := storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		c, err := s.byCodigo(ctx, tx, codigo, true)
		if err != nil {
			return err
		}
		version := c.Version
		if err := fn(c); err != nil {
			return err
		}
		c.ERPSynced = false
		c.Version = version + 1
		c.UpdatedAt = s.clock()
		c.SearchText = searchText(c)
		res, err := tx.NewUpdate().Model(c).ExcludeColumn(append([]string{"id", "created_at"}, syncColumns...)...).
			WherePK().Where("version = ?", version).Exec(ctx)
		if err != nil {
			return uniqueError(err, "update client")
		}
		if n, _ := res.RowsAffected(); n != 1 {
			// Cannot happen while the row is locked (FOR UPDATE, or SQLite's immediate
			// transaction); kept so a lost update would be loud rather than silent.
			return fmt.Errorf("clients: update client %d: concurrent modification", c.ID)
		}
		out = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Query selects a page of the client list.
type Query struct {
	// Page is 1-based; values below 1 mean 1.
	Page int
	// PerPage is clamped to 1..MaxPerPage; 0 means DefaultPerPage.
	PerPage int
	// Search, when not blank, keeps the clients whose nombre_cliente, identificacion or
	// codigo_cliente contains it, ignoring case.
	Search string
}

// Normalized returns q with Page and PerPage brought into range.
func (q Query) Normalized() Query {
	if q.Page < 1 {
		q.Page = 1
	}
	switch {
	case q.PerPage == 0:
		q.PerPage = DefaultPerPage
	case q.PerPage < 1:
		q.PerPage = 1
	case q.PerPage > MaxPerPage:
		q.PerPage = MaxPerPage
	}
	q.Search = strings.TrimSpace(q.Search)
	return q
}

// Page is one page of the client list.
type Page struct {
	Clients []*Client
	// TotalCount counts every client matching the search; TotalPages is
	// ceil(TotalCount / PerPage) (0 when nothing matches).
	TotalCount  int
	TotalPages  int
	CurrentPage int
	PerPage     int
}

// List returns a page of clients, newest first (by id, descending).
func (s *Store) List(ctx context.Context, q Query) (*Page, error) {
	q = q.Normalized()
	if strings.IndexByte(q.Search, 0) >= 0 {
		// No stored text holds NUL, and bun would drop it from the query on PostgreSQL, so
		// "a\x00b" would match "ab".
		return &Page{Clients: []*Client{}, CurrentPage: q.Page, PerPage: q.PerPage}, nil
	}
	filter := func(sel *bun.SelectQuery) *bun.SelectQuery {
		if q.Search == "" {
			return sel
		}
		return sel.Where(`search_text LIKE ? ESCAPE '\'`, "%"+escapeLike(strings.ToLower(q.Search))+"%")
	}
	total, err := filter(storage.Reader(s.db).NewSelect().Model((*Client)(nil))).Count(ctx)
	if err != nil {
		return nil, fmt.Errorf("clients: count clients: %w", err)
	}
	pages := (total + q.PerPage - 1) / q.PerPage
	clients := []*Client{}
	// A page past the last one is empty without asking the database: (page-1)*per_page may
	// overflow, and bun keeps OFFSET in an int32, so a large offset would wrap and answer
	// some other page.
	if q.Page <= pages {
		if err := filter(storage.Reader(s.db).NewSelect().Model(&clients)).OrderExpr("id DESC").
			Limit(q.PerPage).Offset((q.Page - 1) * q.PerPage).Scan(ctx); err != nil {
			return nil, fmt.Errorf("clients: list clients: %w", err)
		}
	}
	for _, c := range clients {
		c.normalized()
	}
	return &Page{
		Clients:     clients,
		TotalCount:  total,
		TotalPages:  pages,
		CurrentPage: q.Page,
		PerPage:     q.PerPage,
	}, nil
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// ClaimSync marks an ERP synchronisation of client id as in flight and returns the claim token
// with the client as it is now. While a claim younger than lease exists, another claim is
// ErrSyncInProgress; an older claim is taken over (its holder is presumed dead).
func (s *Store) ClaimSync(ctx context.Context, id int64, lease time.Duration) (string, *Client, error) {
	token := uuid.NewString()
	now := s.clock()
	res, err := s.db.NewUpdate().Table("clients").
		Set("erp_sync_claim = ?", token).Set("erp_sync_claimed_at = ?", now).
		Where("id = ?", id).
		WhereGroup(" AND ", func(q *bun.UpdateQuery) *bun.UpdateQuery {
			return q.Where("erp_sync_claim IS NULL").WhereOr("erp_sync_claimed_at < ?", now.Add(-lease))
		}).Exec(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("clients: claim client sync: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		if _, err := s.ByID(ctx, id); err != nil {
			return "", nil, err
		}
		return "", nil, ErrSyncInProgress
	}
	c, err := s.ByID(ctx, id)
	if err != nil {
		return "", nil, err
	}
	return token, c, nil
}

// ReleaseSync drops the claim token of client id without recording anything (the sync failed).
func (s *Store) ReleaseSync(ctx context.Context, id int64, token string) error {
	_, err := s.db.NewUpdate().Table("clients").
		Set("erp_sync_claim = NULL").Set("erp_sync_claimed_at = NULL").
		Where("id = ?", id).Where("erp_sync_claim = ?", token).Exec(ctx)
	if err != nil {
		return fmt.Errorf("clients: release client sync: %w", err)
	}
	return nil
}

// SyncOutcome is what the ERP answered to a successful sync.
type SyncOutcome struct {
	// SentVersion is the version of the data sent to the ERP.
	SentVersion int64
	// CodigoCliente is the code the ERP assigned ("" when it assigned none: the stored one stays).
	CodigoCliente string
	// Response is the ERP's answer as received.
	Response RawJSON
}

// FinishSync records a successful sync of client id under the claim token and releases the
// claim: erp_response, erp_synced_at and the codigo_cliente the ERP assigned are stored, and
// erp_synced becomes true unless the client changed while the ERP was being called (its data in
// the ERP is then already stale, so it stays false and needs another sync).
func (s *Store) FinishSync(ctx context.Context, id int64, token string, out SyncOutcome) (*Client, error) {
	var done *Client
	err := storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		c, err := s.byID(ctx, tx, id, true)
		if err != nil {
			return err
		}
		now := s.clock()
		c.ERPSynced = c.Version == out.SentVersion
		c.ERPSyncedAt = &now
		c.ERPResponse = out.Response
		if out.CodigoCliente != "" {
			codigo := out.CodigoCliente
			c.CodigoCliente = &codigo
		}
		c.UpdatedAt = now
		c.SearchText = searchText(c)
		res, err := tx.NewUpdate().Table("clients").
			Set("codigo_cliente = ?", c.CodigoCliente).Set("erp_synced = ?", c.ERPSynced).
			Set("erp_synced_at = ?", c.ERPSyncedAt).Set("erp_response = ?", c.ERPResponse).
			Set("updated_at = ?", c.UpdatedAt).Set("search_text = ?", c.SearchText).
			Set("erp_sync_claim = NULL").Set("erp_sync_claimed_at = NULL").
			Where("id = ?", id).Where("erp_sync_claim = ?", token).Exec(ctx)
		if err != nil {
			return uniqueError(err, "record client sync")
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return ErrSyncInProgress
		}
		done = c
		return nil
	})
	return done, err
}
