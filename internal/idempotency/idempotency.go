// Package idempotency makes a money-moving POST safe to retry: a request carrying an
// Idempotency-Key header runs once per caller and key; a retry with the same key and the same
// request gets the stored answer again, with Idempotent-Replayed: true, and runs nothing.
//
//	store := idempotency.NewStore(db, "credit_idempotency_keys")   // table created by Migrations
//	app.Post("/consumo/confirmar", bearer, idempotency.Middleware(store, scope), h.confirmar)
//
// The contract, for every route that mounts the middleware:
//
//   - no Idempotency-Key: the request runs as usual;
//   - a key is 1 to 255 visible ASCII characters, else 400;
//   - keys are scoped to the caller (the scope function: a user's sub, the service key) and kept
//     at least 24 hours ([DefaultTTL]), then deleted by [Store.Run] (every [PurgeInterval] in the
//     services); the same key of another caller is another key;
//   - the first request with a key runs and its answer is stored, whatever its status, except
//     401, 403, 409, 429 and 503, which mean the request did not run (bad or used credentials, a
//     conflict with another request, a limit, the request's deadline passed before anything was
//     sent): the key is released and may be used again;
//   - the same key with the same request (method, URL and body, byte for byte) replays the
//     stored status, Content-Type and body with Idempotent-Replayed: true;
//   - the same key with another request is 422;
//   - the same key while the first request is still running is 409, and so is a key whose
//     request was interrupted (the process stopped mid-request): what it did is in the record it
//     left, and a new attempt needs a new key.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/internal/storage"
)

// Headers of the contract.
const (
	Header         = "Idempotency-Key"
	ReplayedHeader = "Idempotent-Replayed"
)

// DefaultTTL is how long a key is kept.
const DefaultTTL = 24 * time.Hour

// maxKey is the longest key accepted.
const maxKey = 255

// States of a key.
const (
	stateInFlight = "in_flight"
	stateDone     = "done"
)

var (
	// ErrMismatch: the key was used with another request.
	ErrMismatch = errors.New("idempotency: key used with another request")
	// ErrInFlight: the key's first request has not finished (or was interrupted).
	ErrInFlight = errors.New("idempotency: a request with this key is in progress")
)

// Record is a stored key.
type Record struct {
	bun.BaseModel `bun:"table:idempotency_keys"`

	Scope       string    `bun:"scope,pk"`
	Key         string    `bun:"key,pk"`
	Fingerprint string    `bun:"fingerprint,notnull"`
	State       string    `bun:"state,notnull"`
	Status      int       `bun:"status,notnull"`
	ContentType string    `bun:"content_type,nullzero"`
	Body        string    `bun:"body,nullzero"`
	CreatedAt   time.Time `bun:"created_at,notnull"`
	ExpiresAt   time.Time `bun:"expires_at,notnull"`
}

// Migrations create the keys table named table, recorded in table+"_migrations".
func Migrations(table string) *storage.Migrations {
	return storage.NewMigrations(storage.Migration{
		Name: "20261125000100_create_" + table,
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `CREATE TABLE `+table+` (
				scope VARCHAR(200) NOT NULL,
				key VARCHAR(255) NOT NULL,
				fingerprint VARCHAR(64) NOT NULL,
				state VARCHAR(10) NOT NULL,
				status INTEGER NOT NULL DEFAULT 0,
				content_type VARCHAR(100),
				body TEXT,
				created_at $TIMESTAMP NOT NULL,
				expires_at $TIMESTAMP NOT NULL,
				PRIMARY KEY (scope, key)
			)`, `CREATE INDEX `+table+`_expires_idx ON `+table+` (expires_at)`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `DROP TABLE `+table)
		},
	})
}

// Migrate applies Migrations(table).
func Migrate(ctx context.Context, db *bun.DB, table string) error {
	_, err := storage.Migrate(ctx, db, table+"_migrations", Migrations(table))
	return err
}

// Store keeps keys in one table.
type Store struct {
	db    *bun.DB
	table string
	ttl   time.Duration
	now   func() time.Time
}

// NewStore keeps keys in table (migrated with Migrate) for DefaultTTL.
func NewStore(db *bun.DB, table string) *Store {
	return &Store{db: db, table: table, ttl: DefaultTTL, now: time.Now}
}

// WithClock replaces time.Now (tests).
func (s *Store) WithClock(now func() time.Time) *Store {
	c := *s
	c.now = now
	return &c
}

// Begin claims key for scope. It returns nil when the request may run (the key is now in
// flight); the stored record when the key's request finished (replay it); ErrMismatch when the
// key was used with another fingerprint; ErrInFlight when its request has not finished. A key past
// its expiry is claimed anew.
func (s *Store) Begin(ctx context.Context, scope, key, fingerprint string) (*Record, error) {
	now := s.now().UTC()
	var out *Record
	err := storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewDelete().TableExpr("?", bun.Ident(s.table)).
			Where("scope = ? AND key = ? AND expires_at < ?", scope, key, now).Exec(ctx); err != nil {
			return err
		}
		rec := &Record{Scope: scope, Key: key, Fingerprint: fingerprint, State: stateInFlight, CreatedAt: now, ExpiresAt: now.Add(s.ttl)}
		res, err := tx.NewInsert().Model(rec).ModelTableExpr("?", bun.Ident(s.table)).On("CONFLICT (scope, key) DO NOTHING").Returning("NULL").Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		old := new(Record)
		if err := tx.NewSelect().Model(old).ModelTableExpr("? AS record", bun.Ident(s.table)).
			Where("scope = ? AND key = ?", scope, key).Scan(ctx); err != nil {
			return err
		}
		switch {
		case old.Fingerprint != fingerprint:
			return ErrMismatch
		case old.State != stateDone:
			return ErrInFlight
		}
		out = old
		return nil
	})
	if err != nil && !errors.Is(err, ErrMismatch) && !errors.Is(err, ErrInFlight) {
		return nil, fmt.Errorf("idempotency: begin: %w", err)
	}
	return out, err
}

// Finish stores the answer of the key's request.
func (s *Store) Finish(ctx context.Context, scope, key string, status int, contentType string, body []byte) error {
	_, err := s.db.NewUpdate().TableExpr("?", bun.Ident(s.table)).
		Set("state = ?", stateDone).Set("status = ?", status).Set("content_type = ?", contentType).Set("body = ?", string(body)).
		Where("scope = ? AND key = ?", scope, key).Exec(ctx)
	if err != nil {
		return fmt.Errorf("idempotency: finish: %w", err)
	}
	return nil
}

// Release forgets the key, so that it may be used again.
func (s *Store) Release(ctx context.Context, scope, key string) error {
	_, err := s.db.NewDelete().TableExpr("?", bun.Ident(s.table)).Where("scope = ? AND key = ?", scope, key).Exec(ctx)
	if err != nil {
		return fmt.Errorf("idempotency: release: %w", err)
	}
	return nil
}

// PurgeInterval is how often the services delete expired keys (Store.Run).
const PurgeInterval = time.Hour

// purgeBatch is how many keys one statement of Purge deletes: each is a short write, so that a
// request waiting for SQLite's one connection does not wait behind a day's keys.
var purgeBatch = 500

// Purge deletes the keys past their expiry, purgeBatch keys per statement, and returns how
// many it deleted. Without it a key is deleted only when its caller uses it again.
func (s *Store) Purge(ctx context.Context) (int, error) {
	now, deleted := s.now().UTC(), 0
	for {
		expired := s.db.NewSelect().TableExpr("?", bun.Ident(s.table)).Column("scope", "key").
			Where("expires_at < ?", now).Limit(purgeBatch)
		res, err := s.db.NewDelete().TableExpr("?", bun.Ident(s.table)).Where("(scope, key) IN (?)", expired).Exec(ctx)
		if err != nil {
			return deleted, fmt.Errorf("idempotency: purge: %w", err)
		}
		n, _ := res.RowsAffected()
		deleted += int(n)
		if n < int64(purgeBatch) {
			return deleted, nil
		}
	}
}

// Run purges the expired keys at once and then every interval until ctx ends. A failed purge
// is logged and tried again at the next tick.
func (s *Store) Run(ctx context.Context, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := s.Purge(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.WarnContext(ctx, "idempotency keys not purged; trying again later", "table", s.table, "error", err)
		case n > 0:
			log.InfoContext(ctx, "expired idempotency keys purged", "table", s.table, "keys", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Fingerprint identifies a request: its method, URL (path and query) and body.
func Fingerprint(method, path string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(method + " " + path + "\n"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// notRun are the statuses of an answer given without running the request: the key is released.
func notRun(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusConflict, http.StatusTooManyRequests, http.StatusServiceUnavailable:
		return true
	}
	return false
}

// Middleware applies the contract (package documentation) to the routes it is mounted on, after
// authentication. scope names the caller. The handler's error, if any, is answered here by the
// app's error handler, so that the answer stored is the one sent.
func Middleware(s *Store, scope func(*fiber.Ctx) string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		key := c.Get(Header)
		if key == "" {
			return c.Next()
		}
		if !validKey(key) {
			return httpx.ValidationError(Header + " must be 1 to 255 visible ASCII characters")
		}
		ctx := c.UserContext()
		who := scope(c)
		rec, err := s.Begin(ctx, who, key, Fingerprint(c.Method(), c.OriginalURL(), c.Body()))
		switch {
		case errors.Is(err, ErrMismatch):
			return httpx.NewError(http.StatusUnprocessableEntity, "This "+Header+" was already used with another request; use a new key for a new request")
		case errors.Is(err, ErrInFlight):
			return httpx.NewError(http.StatusConflict, "A request with this "+Header+" is in progress or was interrupted; look the operation up before retrying with a new key")
		case err != nil:
			return err
		case rec != nil:
			c.Set(ReplayedHeader, "true")
			if rec.ContentType != "" {
				c.Set(fiber.HeaderContentType, rec.ContentType)
			}
			return c.Status(rec.Status).Send([]byte(rec.Body))
		}
		if err := c.Next(); err != nil {
			if herr := c.App().Config().ErrorHandler(c, err); herr != nil {
				return herr
			}
		}
		status := c.Response().StatusCode()
		// The answer is stored on a context of its own: the caller may be gone, the answer is not.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if notRun(status) {
			return s.Release(wctx, who, key)
		}
		body := bytes.Clone(c.Response().Body())
		return s.Finish(wctx, who, key, status, string(c.Response().Header.ContentType()), body)
	}
}

func validKey(k string) bool {
	if len(k) == 0 || len(k) > maxKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < '!' || k[i] > '~' {
			return false
		}
	}
	return true
}
