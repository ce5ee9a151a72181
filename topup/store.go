package topup

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/storage"
)

// Store errors.
var (
	// ErrNotFound: no transaction with that id (or external id).
	ErrNotFound = errors.New("topup: transaction not found")
	// ErrConflict: the record is no longer as it was read; someone else moved it first (a
	// reconciler's claim that another instance, or the record's own top-up, won).
	ErrConflict = errors.New("topup: transaction changed concurrently")
)

// actionTokenKey is the unique key of the action token's single use. PostgreSQL names a primary
// key <table>_pkey. (The webhook's idempotency key, source_xml_hash, is decided by INSERT ... ON
// CONFLICT in InsertInvoice.)
var actionTokenKey = storage.Unique{Name: "topup_action_tokens_pkey", Table: "topup_action_tokens", Columns: []string{"jti"}}

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
	// From and To keep the records created on those calendar days of DayZone (Ecuador time)
	// and on the days between, both included; a zero Day leaves that end open. From after To
	// selects nothing.
	From, To Day
	Page     int // 1-based; values below 1 mean 1
	PerPage  int // clamped to 1..MaxPerPage; 0 means DefaultPerPage
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

// Store persists transactions, their carrier-call audit, the guards' state and the
// notification jobs. It owns every transaction: each method below is one, and a caller decides
// inside Update's closure, never across a carrier call. It is safe for concurrent use; every
// guard holds across several service instances on one database.
type Store struct {
	db       *bun.DB
	queue    *jobs.Queue
	observer Observer
}

// NewStore returns a Store on db (migrated with Migrate, and with jobs.Migrate and JobIndex)
// that enqueues the notification jobs on queue, in the transaction of the change each
// announces.
func NewStore(db *bun.DB, queue *jobs.Queue, opts ...StoreOption) *Store {
	s := &Store{db: db, queue: queue}
	for _, o := range opts {
		if o != nil {
			o(s)
		}
	}
	return s
}

// dbTime is the store's clock truncated to what both engines keep (microseconds), so that a
// time read back equals the one written and can serve in a comparison.
func dbTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// Admission is what Admit checks: the action token (spent once), the throttle and the daily
// limit (lifted by Unlimited).
type Admission struct {
	TokenID        string
	TokenExpiresAt time.Time
	ThrottleLimit  int
	ThrottleWindow time.Duration
	DailyLimit     int
	Unlimited      bool
	// Day is the calendar day whose manual top-ups DailyLimit counts: [DayStart, DayEnd).
	DayStart, DayEnd time.Time
}

// Admit inserts t, a pending manual top-up of user t.RequestedByUserID requested at
// t.CreatedAt, if it passes the guards (package doc, "Guards"), in one transaction serialised
// per user; otherwise it inserts nothing and returns ErrActionTokenUsed, a *ThrottleError or
// ErrDailyLimit.
func (s *Store) Admit(ctx context.Context, t *Transaction, a Admission) error {
	user, now := t.RequestedByUserID, t.CreatedAt
	return storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if err := lockUser(ctx, tx, user); err != nil {
			return err
		}
		if err := useActionToken(ctx, tx, a.TokenID, user, a.TokenExpiresAt, now); err != nil {
			return err
		}
		if err := takeThrottle(ctx, tx, user, ThrottleGroup, a.ThrottleLimit, a.ThrottleWindow, now); err != nil {
			return err
		}
		if !a.Unlimited {
			n, err := countManualSince(ctx, tx, user, a.DayStart, a.DayEnd)
			if err != nil {
				return err
			}
			if n >= a.DailyLimit {
				return ErrDailyLimit
			}
		}
		return insert(ctx, tx, t)
	})
}

// Insert inserts t and, in the same transaction, the job n announces (nil: none).
func (s *Store) Insert(ctx context.Context, t *Transaction, n *Notification) error {
	err := storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if err := insert(ctx, tx, t); err != nil {
			return err
		}
		return s.enqueue(ctx, tx, n)
	})
	if err == nil {
		s.observe(nil, t)
	}
	return err
}

// InsertDuplicate inserts t, the record of a repeated delivery of the invoice whose record is
// t.DuplicateOf, with the job n announces only when it is the first repetition of that invoice:
// one e-mail per repeated invoice, however many times it is delivered again. The original record
// is locked meanwhile, so two first repetitions cannot both count none.
func (s *Store) InsertDuplicate(ctx context.Context, t *Transaction, n *Notification) error {
	err := storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := getWhere(ctx, tx, true, "id = ?", t.DuplicateOf); err != nil {
			return err
		}
		earlier, err := tx.NewSelect().Model((*Transaction)(nil)).Where("duplicate_of = ?", t.DuplicateOf).Count(ctx)
		if err != nil {
			return fmt.Errorf("topup: count repeated deliveries: %w", err)
		}
		if err := insert(ctx, tx, t); err != nil {
			return err
		}
		if earlier > 0 {
			return nil
		}
		return s.enqueue(ctx, tx, n)
	})
	if err == nil {
		s.observe(nil, t)
	}
	return err
}

// InsertInvoice inserts t, a record that holds its invoice's source_xml_hash, with the job n
// announces (nil: none), unless a record already holds that hash: then it inserts nothing and
// returns that record. The unique source_xml_hash decides (INSERT ... ON CONFLICT DO NOTHING):
// of concurrent inserts of one hash exactly one wins, and the others get its record.
func (s *Store) InsertInvoice(ctx context.Context, t *Transaction, n *Notification) (*Transaction, error) {
	inserted := false
	insertOnce := func(ctx context.Context, db bun.IDB) error {
		var res sql.Result
		var a storage.Args
		q, err := storage.BoundInsert(db, t, &a)
		if err == nil {
			res, err = storage.ExecBound(ctx, db, q+" ON CONFLICT (source_xml_hash) DO NOTHING", a)
		}
		if err != nil {
			return fmt.Errorf("topup: insert transaction: %w", err)
		}
		rows, err := res.RowsAffected()
		inserted = rows == 1
		return err
	}
	var err error
	if n == nil {
		err = storage.Write(ctx, s.db, insertOnce)
	} else {
		err = storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
			if err := insertOnce(ctx, tx); err != nil || !inserted {
				return err
			}
			return s.enqueue(ctx, tx, n)
		})
	}
	if err != nil {
		return nil, err
	}
	if inserted {
		s.observe(nil, t)
		return nil, nil
	}
	return s.GetBySourceXMLHash(ctx, t.SourceXMLHash)
}

// Settlement is what an Update's closure decided besides the record's fields.
type Settlement struct {
	// Save writes the record as the closure left it; false leaves the row as it was.
	Save bool
	// Call, when not nil, is a carrier exchange to audit; it is written whatever Save says.
	Call *CarrierCall
	// Notice, when not nil, is enqueued on NotificationQueue: the job announcing the status the
	// closure moved the record to.
	Notice *Notification
}

// Update loads transaction id in a short transaction, locked (SELECT ... FOR UPDATE on
// PostgreSQL; SQLite's write transaction already serialises), hands a copy to fn, and writes
// what fn settled: the record when Save, the audit row and the notification job, all or
// nothing. An error from fn rolls back and is returned as it is (ErrConflict for a claim that
// lost). It returns the record as stored afterwards; ErrNotFound when there is none. fn runs
// once, and must not touch the database (on SQLite the transaction holds the only connection).
func (s *Store) Update(ctx context.Context, id uuid.UUID, fn func(*Transaction) (Settlement, error)) (*Transaction, error) {
	var prev, out *Transaction
	err := storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		cur, err := getWhere(ctx, tx, true, "id = ?", id.String())
		if err != nil {
			return err
		}
		snap := storage.TakeSnapshot(tx, cur)
		next := *cur
		st, err := fn(&next)
		if err != nil {
			return err
		}
		prev, out = cur, cur
		if st.Save {
			if err := s.save(ctx, tx, cur, &next, snap); err != nil {
				return err
			}
			out = &next
		}
		return s.settle(ctx, tx, st)
	})
	if err != nil {
		return nil, err
	}
	s.observe(prev, out)
	return out, nil
}

// UpdateHeld is Update on held, the record as the caller last wrote or read it (its Version):
// fn decides on held, and the write is a compare-and-set on the version, so the record is not
// read again (one round trip and one statement less than Update, on the path of every top-up's
// outcome; on PostgreSQL one statement in all, settleInOne). When someone changed the record
// meanwhile, or fn saves nothing, it is Update itself:
// fn then runs a second time, on the record as stored, and must therefore only change its
// argument.
func (s *Store) UpdateHeld(ctx context.Context, held *Transaction, fn func(*Transaction) (Settlement, error)) (*Transaction, error) {
	snap := storage.TakeSnapshot(s.db, held)
	next := *held
	st, err := fn(&next)
	if err != nil {
		return nil, err
	}
	if !st.Save {
		return s.Update(ctx, held.ID, fn)
	}
	one, err := s.settleInOne(ctx, held, &next, snap, st)
	if !one && err == nil {
		err = storage.RunInTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
			if err := s.save(ctx, tx, held, &next, snap); err != nil {
				return err
			}
			return s.settle(ctx, tx, st)
		})
	}
	if errors.Is(err, storage.ErrStale) {
		return s.Update(ctx, held.ID, fn)
	}
	if err != nil {
		return nil, err
	}
	s.observe(held, &next)
	return &next, nil
}

// settleInOne writes, on PostgreSQL, what UpdateHeld's transaction would (the changed columns
// of next with the version compare-and-set, the carrier call's audit row, the notification job)
// as one statement, a data-modifying WITH whose inserts take their row from the update's:
//
//	WITH u AS (UPDATE topup_transactions SET ... WHERE id = ? AND version = ? RETURNING id),
//	     c AS (INSERT INTO topup_carrier_calls (...) SELECT ... FROM u RETURNING id),
//	     j AS (INSERT INTO river_job (...) SELECT ... FROM u)
//	SELECT (SELECT id FROM c) FROM u
//
// One round trip instead of five (BEGIN, three statements, COMMIT), atomic by itself. When the
// record moved the update matches nothing, so neither insert writes, and it returns
// storage.ErrStale. one is false, with nothing written, where the transaction is still needed:
// on SQLite (whose transactions share a group commit), when no column changed (the transaction
// writes the rest without a compare-and-set), and for a job River's InsertTx must insert
// (jobs.Queue.InsertFrom).
func (s *Store) settleInOne(ctx context.Context, held, next *Transaction, snap storage.Snapshot, st Settlement) (one bool, err error) {
	if !storage.IsPostgres(s.db) {
		return false, nil
	}
	var a storage.Args
	upd, err := snap.BoundUpdate(s.db, next, held.Version, &a)
	if err != nil || upd == "" {
		return err != nil, err
	}
	q := "WITH u AS (" + upd + " RETURNING id)"
	if st.Notice != nil {
		args, err := st.Notice.Args()
		if err != nil {
			return true, err
		}
		job, ok, err := s.queue.InsertFrom(args, nil, "u", &a)
		if err != nil || !ok {
			return err != nil, err
		}
		q += ", j AS (" + job + ")"
	}
	if st.Call != nil {
		call, err := storage.BoundInsertFrom(s.db, st.Call, "u", &a)
		if err != nil {
			return true, err
		}
		q += ", c AS (" + call + ") SELECT (SELECT id FROM c) FROM u"
	} else {
		q += " SELECT NULL FROM u"
	}
	var callID sql.NullInt64
	err = storage.ScanBound(ctx, s.db, q, a, &callID)
	if errors.Is(err, sql.ErrNoRows) {
		return true, storage.ErrStale
	}
	if err != nil {
		return true, fmt.Errorf("topup: settle transaction %s: %w", held.ID, err)
	}
	next.Version = held.Version + 1
	if st.Call != nil {
		st.Call.ID = callID.Int64
	}
	return true, nil
}

// save writes the columns of next that changed since cur (snap) and the next version, on the
// condition that the stored record is still at cur's version (storage.ErrStale otherwise). Only
// the changed columns: the raw XML and payload are not written again.
func (s *Store) save(ctx context.Context, tx bun.Tx, cur, next *Transaction, snap storage.Snapshot) error {
	v, err := snap.Update(ctx, tx, next, cur.Version)
	next.Version = v
	if err != nil && !errors.Is(err, storage.ErrStale) {
		return fmt.Errorf("topup: update transaction %s: %w", cur.ID, err)
	}
	return err
}

// settle writes what a settlement carries besides the record: the carrier call's audit row and
// the notification job.
func (s *Store) settle(ctx context.Context, tx bun.Tx, st Settlement) error {
	if st.Call != nil {
		if err := storage.InsertBoundID(ctx, tx, st.Call, &st.Call.ID); err != nil {
			return fmt.Errorf("topup: record carrier call: %w", err)
		}
	}
	return s.enqueue(ctx, tx, st.Notice)
}

// enqueue inserts, inside tx, the job of n (nil: none). The job is inserted even with no
// recipient: the worker skips those.
func (s *Store) enqueue(ctx context.Context, tx bun.Tx, n *Notification) error {
	if n == nil {
		return nil
	}
	args, err := n.Args()
	if err != nil {
		return err
	}
	return s.queue.InsertTx(ctx, tx, args, nil)
}

func insert(ctx context.Context, db bun.IDB, t *Transaction) error {
	if _, err := db.NewInsert().Model(t).Returning("NULL").Exec(ctx); err != nil {
		return fmt.Errorf("topup: insert transaction: %w", err)
	}
	return nil
}

// Get returns the transaction with id.
func (s *Store) Get(ctx context.Context, id uuid.UUID) (*Transaction, error) {
	return getWhere(ctx, s.db, false, "id = ?", id.String())
}

// GetByExternalID returns the transaction sent to the carrier with externalID.
func (s *Store) GetByExternalID(ctx context.Context, externalID string) (*Transaction, error) {
	return getWhere(ctx, s.db, false, "external_transaction_id = ?", externalID)
}

// GetBySourceXMLHash returns the transaction that holds an invoice's hash.
func (s *Store) GetBySourceXMLHash(ctx context.Context, hash string) (*Transaction, error) {
	return getWhere(ctx, s.db, false, "source_xml_hash = ?", hash)
}

// getWhere reads one transaction; forUpdate locks its row on PostgreSQL (SQLite rejects FOR
// UPDATE, and its write transaction holds the whole database already).
func getWhere(ctx context.Context, db bun.IDB, forUpdate bool, where string, arg any) (*Transaction, error) {
	t := new(Transaction)
	q := db.NewSelect().Model(t).Where(where, arg).Limit(1)
	if forUpdate && storage.IsPostgres(db) {
		q = q.For("UPDATE")
	}
	err := q.Scan(ctx)
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
	q := storage.Reader(s.db).NewSelect().Model(&out)
	if f.SubscriberID != "" {
		q = q.Where("subscriber_id = ?", f.SubscriberID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", string(f.Status))
	}
	if f.Source != "" {
		q = q.Where("source = ?", string(f.Source))
	}
	start, before, none, err := createdRange(f.From, f.To)
	if err != nil {
		return nil, 0, err
	}
	if none {
		return []Transaction{}, 0, nil
	}
	if !start.IsZero() {
		q = q.Where("created_at >= ?", start)
	}
	if !before.IsZero() {
		q = q.Where("created_at < ?", before)
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

// lockUser serialises the guard checks of one user across every connection and instance:
// on PostgreSQL with a transaction-scoped advisory lock; SQLite's BEGIN IMMEDIATE
// (_txlock=immediate) already serialises every writer.
func lockUser(ctx context.Context, tx bun.Tx, userID string) error {
	if !storage.IsPostgres(tx) {
		return nil
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte("topup-user:" + userID))
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", int64(h.Sum64())); err != nil {
		return fmt.Errorf("topup: lock user %s: %w", userID, err)
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
// the window ending now; otherwise it returns a *ThrottleError with the time until the oldest
// one leaves the window.
//
// The caller holds lockUser for userID in tx, so that two requests of one user cannot both
// see a free place.
func takeThrottle(ctx context.Context, tx bun.Tx, userID, group string, limit int, window time.Duration, now time.Time) error {
	since := dbTime(now.Add(-window))
	if _, err := tx.NewDelete().Model((*throttleHit)(nil)).
		Where("user_id = ? AND grp = ? AND hit_at <= ?", userID, group, since).Exec(ctx); err != nil {
		return fmt.Errorf("topup: throttle: %w", err)
	}
	var hits []throttleHit
	if err := tx.NewSelect().Model(&hits).Where("user_id = ? AND grp = ? AND hit_at > ?", userID, group, since).
		OrderExpr("hit_at ASC").Scan(ctx); err != nil {
		return fmt.Errorf("topup: throttle: %w", err)
	}
	if len(hits) >= limit {
		wait := hits[len(hits)-limit].HitAt.Add(window).Sub(now)
		return &ThrottleError{Limit: limit, Window: window, RetryAfter: max(wait, time.Second)}
	}
	if _, err := tx.NewInsert().Model(&throttleHit{UserID: userID, Group: group, HitAt: dbTime(now)}).Returning("NULL").Exec(ctx); err != nil {
		return fmt.Errorf("topup: throttle: %w", err)
	}
	return nil
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
func useActionToken(ctx context.Context, tx bun.Tx, jti, userID string, expiresAt, now time.Time) error {
	_, err := tx.NewInsert().Model(&actionTokenUse{JTI: jti, UserID: userID, UsedAt: dbTime(now), ExpiresAt: dbTime(expiresAt)}).Exec(ctx)
	if actionTokenKey.Violated(err) {
		return ErrActionTokenUsed
	}
	if err != nil {
		return fmt.Errorf("topup: action token: %w", err)
	}
	return nil
}

// countManualSince counts the manual top-ups userID requested in [from, to).
func countManualSince(ctx context.Context, tx bun.Tx, userID string, from, to time.Time) (int, error) {
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
func (s *Store) stale(ctx context.Context, now, pendingBefore, unavailableBefore time.Time, limit int) ([]Transaction, error) {
	var out []Transaction
	err := s.db.NewSelect().Model(&out).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("status = ? AND updated_at < ?", string(StatusPending), dbTime(pendingBefore)).
				WhereOr("status = ? AND updated_at < ? AND retries_exhausted_at IS NULL", string(StatusUnavailable), dbTime(unavailableBefore))
		}).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("reconcile_lease_until IS NULL").WhereOr("reconcile_lease_until < ?", dbTime(now))
		}).
		OrderExpr("updated_at ASC").Limit(limit).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("topup: reconciler candidates: %w", err)
	}
	return out, nil
}

// Backlog is what waits for the reconciler, and what it gave up on (Service.ReconcileBacklog).
type Backlog struct {
	// Pending: pending records untouched since the time given (abandoned: a process that
	// stopped between the commit and the outcome, or an answer that could not be recorded).
	Pending int
	// Unavailable: unavailable records whose retries are not exhausted.
	Unavailable int
	// Oldest is when the oldest of those was created; zero when none waits.
	Oldest time.Time
	// Exhausted: unavailable records the reconciler gave up on (retries_exhausted_at).
	Exhausted int
}

// backlog counts, in one grouped query on the (status, created_at, id) index, the pending records
// untouched since pendingBefore and the unavailable ones, with or without retries left.
func (s *Store) backlog(ctx context.Context, pendingBefore time.Time) (Backlog, error) {
	var rows []struct {
		Kind   string       `bun:"kind"`
		N      int          `bun:"n"`
		Oldest bun.NullTime `bun:"oldest"`
	}
	err := storage.Reader(s.db).NewSelect().TableExpr("topup_transactions").
		ColumnExpr("CASE WHEN status = ? THEN 'pending' WHEN retries_exhausted_at IS NULL THEN 'unavailable' ELSE 'exhausted' END AS kind", string(StatusPending)).
		ColumnExpr("count(*) AS n").
		ColumnExpr("min(created_at) AS oldest").
		Where("(status = ? AND updated_at < ?) OR status = ?", string(StatusPending), dbTime(pendingBefore), string(StatusUnavailable)).
		GroupExpr("kind").
		Scan(ctx, &rows)
	if err != nil {
		return Backlog{}, fmt.Errorf("topup: reconciler backlog: %w", err)
	}
	var b Backlog
	for _, r := range rows {
		switch r.Kind {
		case "pending":
			b.Pending = r.N
		case "unavailable":
			b.Unavailable = r.N
		case "exhausted":
			b.Exhausted = r.N
			continue
		}
		if !r.Oldest.IsZero() && (b.Oldest.IsZero() || r.Oldest.Before(b.Oldest)) {
			b.Oldest = r.Oldest.Time
		}
	}
	return b, nil
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
	// LastError is the error of the job's last failed attempt ("" when none).
	LastError string
	// Deliveries is the recorded outcome of each recipient reached or refused so far.
	Deliveries []RecipientDelivery
}

// JobIndex is the jobs.Migrate option of a top-up database: it indexes River's jobs by the
// transaction_id of their notification, which Notifications reads. Without it Notifications
// reads every job River holds, a day's completed ones (BenchmarkNotifications; BENCHMARKS.md,
// "Notification jobs of a transaction").
var JobIndex = jobs.WithArgIndex(notificationKey)

// notificationKey is the member of a notification job's args that names its transaction.
const notificationKey = "transaction_id"

// Notifications returns the notification jobs of transaction id that River still holds,
// oldest first.
func (s *Store) Notifications(ctx context.Context, id uuid.UUID) ([]NotificationJob, error) {
	rows, err := s.queue.JobsWithArg(ctx, NotificationQueue, notificationKey, id.String())
	if err != nil {
		return nil, fmt.Errorf("topup: read notifications: %w", err)
	}
	deliveries, err := s.TransactionDeliveries(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make([]NotificationJob, 0, len(rows))
	for _, r := range rows {
		j := NotificationJob{ID: r.ID, Kind: r.Kind, State: string(r.State), Attempt: r.Attempt}
		var n Notification
		if err := json.Unmarshal(r.EncodedArgs, &n); err == nil {
			j.Recipients, j.OccurredAt = n.Recipients, n.OccurredAt
		}
		if len(r.Errors) > 0 {
			j.LastError = r.Errors[len(r.Errors)-1].Error
		}
		for _, d := range deliveries {
			if d.JobID == r.ID {
				j.Deliveries = append(j.Deliveries, d)
			}
		}
		out = append(out, j)
	}
	return out, nil
}

// Delivery states of a recipient of a notification job.
const (
	DeliverySent     = "sent"     // the mail server accepted the message for the recipient
	DeliveryRejected = "rejected" // refused for good (a 5xx answer): never tried again
)

// RecipientDelivery is the outcome of a notification job for one recipient.
type RecipientDelivery struct {
	bun.BaseModel `bun:"table:topup_notification_deliveries"`

	JobID         int64     `bun:"job_id,pk"`
	Recipient     string    `bun:"recipient,pk"`
	TransactionID string    `bun:"transaction_id"`
	Kind          string    `bun:"kind"`
	State         string    `bun:"state"`
	Detail        string    `bun:"detail,nullzero"`
	At            time.Time `bun:"at"`
}

// JobDeliveries returns the recorded outcome of each recipient of notification job jobID.
func (s *Store) JobDeliveries(ctx context.Context, jobID int64) ([]RecipientDelivery, error) {
	var out []RecipientDelivery
	var args storage.Args
	err := storage.SelectBound(ctx, s.db, s.db.NewSelect().Model(&out).Where("job_id = ?", bun.Safe(args.Add(jobID))), args, &out)
	if err != nil {
		return nil, fmt.Errorf("topup: read deliveries of job %d: %w", jobID, err)
	}
	return out, nil
}

// RecordDeliveries records the outcome of recipients of a job in one transaction; a recipient
// already recorded keeps its first outcome.
func (s *Store) RecordDeliveries(ctx context.Context, ds []RecipientDelivery) error {
	if len(ds) == 0 {
		return nil
	}
	for i := range ds {
		ds[i].At = dbTime(ds[i].At)
	}
	return storage.Write(ctx, s.db, func(ctx context.Context, db bun.IDB) error {
		var err error
		if len(ds) == 1 { // the common case, one recipient, bound
			var args storage.Args
			var q string
			if q, err = storage.BoundInsert(db, &ds[0], &args); err == nil {
				_, err = storage.ExecBound(ctx, db, q+" ON CONFLICT (job_id, recipient) DO NOTHING", args)
			}
		} else {
			_, err = db.NewInsert().Model(&ds).On("CONFLICT (job_id, recipient) DO NOTHING").Returning("NULL").Exec(ctx)
		}
		if err != nil {
			return fmt.Errorf("topup: record deliveries: %w", err)
		}
		return nil
	})
}

// TransactionDeliveries returns the recipient outcomes of every notification of transaction
// id, in the order they were recorded.
func (s *Store) TransactionDeliveries(ctx context.Context, id uuid.UUID) ([]RecipientDelivery, error) {
	var out []RecipientDelivery
	if err := s.db.NewSelect().Model(&out).Where("transaction_id = ?", id.String()).Order("at", "job_id", "recipient").Scan(ctx); err != nil {
		return nil, fmt.Errorf("topup: read deliveries: %w", err)
	}
	return out, nil
}
