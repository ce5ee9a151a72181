package topup

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
)

// Store errors.
var (
	// ErrNotFound: no transaction with that id (or external id).
	ErrNotFound = errors.New("topup: transaction not found")
	// ErrConflict: a compare-and-set found the record no longer in the status it was read in;
	// someone else moved it first.
	ErrConflict = errors.New("topup: transaction changed concurrently")
	// errDuplicateHash: an insert hit the unique source_xml_hash.
	errDuplicateHash = errors.New("topup: source_xml_hash already recorded")
)

// CarrierCall is one exchange with the SPR about a transaction, PASSWORD masked.
type CarrierCall struct {
	bun.BaseModel `bun:"table:topup_carrier_calls"`

	ID            int64     `bun:"id,pk,autoincrement"`
	TransactionID uuid.UUID `bun:"transaction_id,type:varchar(36)"`
	Function      string    `bun:"carrier_function"`
	Outcome       string    `bun:"outcome"`
	RequestXML    string    `bun:"request_xml,nullzero"`
	ResponseXML   string    `bun:"response_xml,nullzero"`
	Diagnostic    string    `bun:"diagnostic,nullzero"`
	DurationMS    int64     `bun:"duration_ms"`
	CreatedAt     time.Time `bun:"created_at"`
}

// Filter selects transactions for List. Zero fields do not filter.
type Filter struct {
	SubscriberID string
	Status       Status
	Source       Source
	Page         int // 1-based; values below 1 mean 1
	PerPage      int // clamped to 1..MaxPerPage; 0 means DefaultPerPage
}

// Pagination defaults of the specification, and the clamp the design uses for every list.
const (
	DefaultPerPage = 20
	MaxPerPage     = 100
)

// maxListOffset is the farthest List reads (bun's OFFSET is an int32); a page beyond it is
// empty without a query.
const maxListOffset = math.MaxInt32

// Normalize applies the defaults and the clamp.
func (f Filter) Normalize() Filter {
	if f.Page < 1 {
		f.Page = 1
	}
	if f.PerPage == 0 {
		f.PerPage = DefaultPerPage
	}
	f.PerPage = min(max(f.PerPage, 1), MaxPerPage)
	return f
}

// Store persists transactions and the guards' state. It is safe for concurrent use; every
// guard holds across several service instances on one database.
type Store struct {
	db *bun.DB
}

// NewStore returns a Store on db (migrated with Migrate).
func NewStore(db *bun.DB) *Store { return &Store{db: db} }

// dbNow is the store's clock truncated to what both engines keep (microseconds), so that a
// time read back equals the one written and can serve in a compare-and-set.
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func (s *Store) insert(ctx context.Context, db bun.IDB, t *Transaction) error {
	if _, err := db.NewInsert().Model(t).Exec(ctx); err != nil {
		if storage.IsUniqueViolation(err) && t.SourceXMLHash != "" && strings.Contains(strings.ToLower(err.Error()), "source_xml_hash") {
			return errDuplicateHash
		}
		return fmt.Errorf("topup: insert transaction: %w", err)
	}
	return nil
}

// Get returns the transaction with id.
func (s *Store) Get(ctx context.Context, id uuid.UUID) (*Transaction, error) {
	return s.getWhere(ctx, s.db, "id = ?", id.String())
}

// GetByExternalID returns the transaction sent to the carrier with externalID.
func (s *Store) GetByExternalID(ctx context.Context, externalID string) (*Transaction, error) {
	return s.getWhere(ctx, s.db, "external_transaction_id = ?", externalID)
}

// GetBySourceXMLHash returns the transaction that holds an invoice's hash.
func (s *Store) GetBySourceXMLHash(ctx context.Context, hash string) (*Transaction, error) {
	return s.getWhere(ctx, s.db, "source_xml_hash = ?", hash)
}

func (s *Store) getWhere(ctx context.Context, db bun.IDB, where string, arg any) (*Transaction, error) {
	t := new(Transaction)
	err := db.NewSelect().Model(t).Where(where, arg).Limit(1).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("topup: read transaction: %w", err)
	}
	return t, nil
}

// List returns one page of transactions, newest first, and the total matching f.
func (s *Store) List(ctx context.Context, f Filter) ([]Transaction, int, error) {
	f = f.Normalize()
	var out []Transaction
	q := s.db.NewSelect().Model(&out)
	if f.SubscriberID != "" {
		q = q.Where("subscriber_id = ?", f.SubscriberID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", string(f.Status))
	}
	if f.Source != "" {
		q = q.Where("source = ?", string(f.Source))
	}
	if f.Page-1 > maxListOffset/f.PerPage {
		// No row is that far, and bun keeps the offset in an int32: a larger one wraps
		// (to the first page, or every row).
		total, err := q.Count(ctx)
		if err != nil {
			return nil, 0, fmt.Errorf("topup: list transactions: %w", err)
		}
		return []Transaction{}, total, nil
	}
	total, err := q.OrderExpr("created_at DESC, id DESC").
		Limit(f.PerPage).Offset((f.Page - 1) * f.PerPage).ScanAndCount(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("topup: list transactions: %w", err)
	}
	return out, total, nil
}

// CarrierCalls returns every exchange with the SPR about transaction id, oldest first.
func (s *Store) CarrierCalls(ctx context.Context, id uuid.UUID) ([]CarrierCall, error) {
	var out []CarrierCall
	if err := s.db.NewSelect().Model(&out).Where("transaction_id = ?", id.String()).OrderExpr("id ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("topup: read carrier calls: %w", err)
	}
	return out, nil
}

func (s *Store) addCarrierCall(ctx context.Context, db bun.IDB, c *CarrierCall) error {
	if _, err := db.NewInsert().Model(c).Exec(ctx); err != nil {
		return fmt.Errorf("topup: record carrier call: %w", err)
	}
	return nil
}

// compareAndSet writes t over the row that still has status from (and, when fromUpdated is
// not zero, that updated_at), or returns ErrConflict.
func (s *Store) compareAndSet(ctx context.Context, db bun.IDB, t *Transaction, from Status, fromUpdated time.Time) error {
	q := db.NewUpdate().Model(t).ExcludeColumn("id", "created_at").
		Where("id = ?", t.ID.String()).Where("status = ?", string(from))
	if !fromUpdated.IsZero() {
		q = q.Where("updated_at = ?", fromUpdated)
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return fmt.Errorf("topup: update transaction: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("topup: update transaction: %w", err)
	}
	if n != 1 {
		return ErrConflict
	}
	return nil
}

// lockUser serialises the guard checks of one user across every connection and instance:
// on PostgreSQL with a transaction-scoped advisory lock; SQLite's BEGIN IMMEDIATE
// (_txlock=immediate) already serialises every writer.
func lockUser(ctx context.Context, tx bun.Tx, userID string) error {
	return lockKey(ctx, tx, "topup-user:"+userID)
}

func lockKey(ctx context.Context, tx bun.Tx, key string) error {
	if !storage.IsPostgres(tx) {
		return nil
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", int64(h.Sum64())); err != nil {
		return fmt.Errorf("topup: lock %s: %w", key, err)
	}
	return nil
}

// throttleHit is one admitted request of the throttle's sliding window.
type throttleHit struct {
	bun.BaseModel `bun:"table:topup_throttle_hits"`

	ID     int64     `bun:"id,pk,autoincrement"`
	UserID string    `bun:"user_id"`
	Group  string    `bun:"grp"`
	HitAt  time.Time `bun:"hit_at"`
}

// takeThrottle admits one request of userID in group when fewer than limit were admitted in
// the window ending now; otherwise it reports how long until the oldest one leaves the window.
//
// The caller holds lockUser for userID in tx, so that two requests of one user cannot both
// see a free place.
func (s *Store) takeThrottle(ctx context.Context, tx bun.Tx, userID, group string, limit int, window time.Duration, now time.Time) (retryAfter time.Duration, err error) {
	since := dbTime(now.Add(-window))
	if _, err := tx.NewDelete().Model((*throttleHit)(nil)).
		Where("user_id = ? AND grp = ? AND hit_at <= ?", userID, group, since).Exec(ctx); err != nil {
		return 0, fmt.Errorf("topup: throttle: %w", err)
	}
	var hits []throttleHit
	if err := tx.NewSelect().Model(&hits).Where("user_id = ? AND grp = ? AND hit_at > ?", userID, group, since).
		OrderExpr("hit_at ASC").Scan(ctx); err != nil {
		return 0, fmt.Errorf("topup: throttle: %w", err)
	}
	if len(hits) >= limit {
		wait := hits[len(hits)-limit].HitAt.Add(window).Sub(now)
		return max(wait, time.Second), ErrThrottled
	}
	if _, err := tx.NewInsert().Model(&throttleHit{UserID: userID, Group: group, HitAt: dbTime(now)}).Exec(ctx); err != nil {
		return 0, fmt.Errorf("topup: throttle: %w", err)
	}
	return 0, nil
}

// actionTokenUse records the single use of an action token.
type actionTokenUse struct {
	bun.BaseModel `bun:"table:topup_action_tokens"`

	JTI       string    `bun:"jti,pk"`
	UserID    string    `bun:"user_id"`
	UsedAt    time.Time `bun:"used_at"`
	ExpiresAt time.Time `bun:"expires_at"`
}

// useActionToken records jti as used, or returns ErrActionTokenUsed. The primary key makes a
// second use fail even when two requests race on two instances.
func (s *Store) useActionToken(ctx context.Context, tx bun.Tx, jti, userID string, expiresAt, now time.Time) error {
	_, err := tx.NewInsert().Model(&actionTokenUse{JTI: jti, UserID: userID, UsedAt: dbTime(now), ExpiresAt: dbTime(expiresAt)}).Exec(ctx)
	if storage.IsUniqueViolation(err) {
		return ErrActionTokenUsed
	}
	if err != nil {
		return fmt.Errorf("topup: action token: %w", err)
	}
	return nil
}

// countManualSince counts the manual top-ups userID requested in [from, to).
func (s *Store) countManualSince(ctx context.Context, tx bun.Tx, userID string, from, to time.Time) (int, error) {
	n, err := tx.NewSelect().Model((*Transaction)(nil)).
		Where("requested_by_user_id = ?", userID).
		Where("source = ?", string(SourceDashboard)).
		Where("created_at >= ? AND created_at < ?", dbTime(from), dbTime(to)).
		Count(ctx)
	if err != nil {
		return 0, fmt.Errorf("topup: daily count: %w", err)
	}
	return n, nil
}

// Purge deletes guard rows that can no longer matter: action tokens past their expiry (a used
// token past exp is refused for its exp anyway) and throttle hits older than window.
func (s *Store) Purge(ctx context.Context, now time.Time, window time.Duration) error {
	if _, err := s.db.NewDelete().Model((*actionTokenUse)(nil)).Where("expires_at < ?", dbTime(now.Add(-time.Minute))).Exec(ctx); err != nil {
		return fmt.Errorf("topup: purge action tokens: %w", err)
	}
	if _, err := s.db.NewDelete().Model((*throttleHit)(nil)).Where("hit_at < ?", dbTime(now.Add(-window))).Exec(ctx); err != nil {
		return fmt.Errorf("topup: purge throttle: %w", err)
	}
	return nil
}

// stale returns up to limit records the reconciler should look at: pending ones untouched
// since pendingBefore and unavailable ones untouched since unavailableBefore whose retries
// are not exhausted, oldest first.
func (s *Store) stale(ctx context.Context, pendingBefore, unavailableBefore time.Time, limit int) ([]Transaction, error) {
	var out []Transaction
	err := s.db.NewSelect().Model(&out).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("status = ? AND updated_at < ?", string(StatusPending), dbTime(pendingBefore)).
				WhereOr("status = ? AND updated_at < ? AND retries_exhausted_at IS NULL", string(StatusUnavailable), dbTime(unavailableBefore))
		}).
		OrderExpr("updated_at ASC").Limit(limit).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("topup: reconciler candidates: %w", err)
	}
	return out, nil
}

// NotificationJob is a notification job River still holds for a transaction (River deletes
// completed jobs after 24 hours and discarded ones after 7 days).
type NotificationJob struct {
	ID         int64
	Kind       string
	State      string
	Attempt    int
	Recipients []string
	OccurredAt time.Time
}

// Notifications returns the notification jobs of transaction id that River still holds,
// oldest first.
func (s *Store) Notifications(ctx context.Context, id uuid.UUID) ([]NotificationJob, error) {
	q := `SELECT id, kind, state, attempt, CAST(args AS TEXT) FROM river_job
		WHERE queue = ? AND json_extract(CAST(args AS TEXT), '$.transaction_id') = ? ORDER BY id`
	if storage.IsPostgres(s.db) {
		q = `SELECT id, kind, state::text, attempt, args::text FROM river_job
			WHERE queue = ? AND args->>'transaction_id' = ? ORDER BY id`
	}
	rows, err := s.db.QueryContext(ctx, q, NotificationQueue, id.String())
	if err != nil {
		return nil, fmt.Errorf("topup: read notifications: %w", err)
	}
	defer rows.Close()
	var out []NotificationJob
	for rows.Next() {
		var (
			j    NotificationJob
			args string
		)
		if err := rows.Scan(&j.ID, &j.Kind, &j.State, &j.Attempt, &args); err != nil {
			return nil, fmt.Errorf("topup: read notifications: %w", err)
		}
		var n Notification
		if err := json.Unmarshal([]byte(args), &n); err == nil {
			j.Recipients, j.OccurredAt = n.Recipients, n.OccurredAt
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("topup: read notifications: %w", err)
	}
	return out, nil
}
