package topup

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
)

// MigrationsTable is the bookkeeping table of the top-up service's migrations.
const MigrationsTable = "topup_migrations"

// Migrations is the top-up service's schema. River's own tables are migrated by internal/jobs.
var Migrations = storage.NewMigrations(
	storage.Migration{
		Name: "20261122000100_create_topup_transactions",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx,
				`CREATE TABLE topup_transactions (
					id VARCHAR(36) PRIMARY KEY,
					external_transaction_id VARCHAR(64) UNIQUE,
					external_operation VARCHAR(20),
					source VARCHAR(20) NOT NULL,
					subscriber_id VARCHAR(32),
					offer_id VARCHAR(64),
					quantity INTEGER NOT NULL DEFAULT 1,
					canton VARCHAR(8),
					status VARCHAR(20) NOT NULL,
					invoice_number VARCHAR(100),
					invoice_code VARCHAR(100),
					notification_email VARCHAR(254),
					source_xml_hash VARCHAR(128) UNIQUE,
					product_code VARCHAR(64),
					amount $DECIMAL(14,2),
					rejection_reason TEXT,
					ignored_reason TEXT,
					source_payload TEXT,
					retry_count INTEGER NOT NULL DEFAULT 0,
					carrier_id_recarga VARCHAR(100),
					carrier_id_codigo VARCHAR(20),
					carrier_message TEXT,
					carrier_system_message TEXT,
					carrier_result_code VARCHAR(100),
					carrier_diagnostic TEXT,
					requested_by_user_id VARCHAR(100),
					requested_by_username VARCHAR(200),
					requested_by_email VARCHAR(254),
					raw_request_xml TEXT,
					raw_response_xml TEXT,
					incident BOOLEAN NOT NULL DEFAULT FALSE,
					incident_note TEXT,
					last_reconciled_at $TIMESTAMP,
					created_at $TIMESTAMP NOT NULL,
					updated_at $TIMESTAMP NOT NULL
				)`,
				`CREATE INDEX topup_transactions_status_updated_idx ON topup_transactions (status, updated_at)`,
				`CREATE INDEX topup_transactions_user_created_idx ON topup_transactions (requested_by_user_id, created_at)`,
				`CREATE INDEX topup_transactions_created_idx ON topup_transactions (created_at)`,
				`CREATE INDEX topup_transactions_subscriber_idx ON topup_transactions (subscriber_id)`,
				// Every exchange with the SPR about a transaction (top-ups and queries), for the audit.
				`CREATE TABLE topup_carrier_calls (
					id $ID,
					transaction_id VARCHAR(36) NOT NULL REFERENCES topup_transactions (id),
					carrier_function VARCHAR(40) NOT NULL,
					outcome VARCHAR(20) NOT NULL,
					request_xml TEXT,
					response_xml TEXT,
					diagnostic TEXT,
					duration_ms BIGINT NOT NULL,
					created_at $TIMESTAMP NOT NULL
				)`,
				`CREATE INDEX topup_carrier_calls_tx_idx ON topup_carrier_calls (transaction_id, id)`,
				// Single use of action tokens: the primary key is the token's jti.
				`CREATE TABLE topup_action_tokens (
					jti VARCHAR(200) PRIMARY KEY,
					user_id VARCHAR(100) NOT NULL,
					used_at $TIMESTAMP NOT NULL,
					expires_at $TIMESTAMP NOT NULL
				)`,
				`CREATE INDEX topup_action_tokens_expires_idx ON topup_action_tokens (expires_at)`,
				// The throttle's sliding window: one row per admitted request.
				`CREATE TABLE topup_throttle_hits (
					id $ID,
					user_id VARCHAR(100) NOT NULL,
					grp VARCHAR(40) NOT NULL,
					hit_at $TIMESTAMP NOT NULL
				)`,
				`CREATE INDEX topup_throttle_hits_user_idx ON topup_throttle_hits (user_id, grp, hit_at)`,
			)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx,
				`DROP TABLE topup_throttle_hits`,
				`DROP TABLE topup_action_tokens`,
				`DROP TABLE topup_carrier_calls`,
				`DROP TABLE topup_transactions`,
			)
		},
	},
	storage.Migration{
		// What the carrier answers is not ours to bound: an ID_RECARGA, ID_CODIGO or result
		// longer than the first columns failed the outcome's write on PostgreSQL, leaving a
		// top-up the carrier had made pending behind a 500. SQLite does not enforce VARCHAR
		// lengths, so only PostgreSQL changes.
		Name: "20261122000200_carrier_reply_columns_text",
		Up: func(ctx context.Context, tx bun.Tx) error {
			if !storage.IsPostgres(tx) {
				return nil
			}
			return storage.DDL(ctx, tx, `ALTER TABLE topup_transactions
				ALTER COLUMN carrier_id_recarga TYPE TEXT,
				ALTER COLUMN carrier_id_codigo TYPE TEXT,
				ALTER COLUMN carrier_result_code TYPE TEXT`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			if !storage.IsPostgres(tx) {
				return nil
			}
			return storage.DDL(ctx, tx, `ALTER TABLE topup_transactions
				ALTER COLUMN carrier_id_recarga TYPE VARCHAR(100),
				ALTER COLUMN carrier_id_codigo TYPE VARCHAR(20),
				ALTER COLUMN carrier_result_code TYPE VARCHAR(100)`)
		},
	},
	storage.Migration{
		// An unavailable record whose retries are spent, and which the carrier still does not
		// know, leaves the reconciler's selection: before, it was claimed and queried again
		// every RetryAfter, forever.
		Name: "20261122000300_retries_exhausted_at",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `ALTER TABLE topup_transactions ADD COLUMN retries_exhausted_at $TIMESTAMP`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `ALTER TABLE topup_transactions DROP COLUMN retries_exhausted_at`)
		},
	},
	storage.Migration{
		// An index on invoice_number, for looking up an invoice's records (audit, support).
		// The webhook does not refuse a known invoice number: its idempotency is by
		// source_xml_hash alone (unique), and the same number under another hash is a new
		// top-up.
		Name: "20261122000400_invoice_number_index",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `CREATE INDEX topup_transactions_invoice_idx ON topup_transactions (invoice_number)`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `DROP INDEX topup_transactions_invoice_idx`)
		},
	},
	storage.Migration{
		// A claimed record stays out of other reconciler passes for a lease longer than the
		// calls the claiming pass may still be waiting for.
		Name: "20261125000100_reconcile_lease_until",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `ALTER TABLE topup_transactions ADD COLUMN reconcile_lease_until $TIMESTAMP`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `ALTER TABLE topup_transactions DROP COLUMN reconcile_lease_until`)
		},
	},
	storage.Migration{
		// A repeated delivery names the transaction it repeats, so that only the first repetition
		// of an invoice is announced.
		Name: "20261125000200_duplicate_of",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `ALTER TABLE topup_transactions ADD COLUMN duplicate_of VARCHAR(36)`,
				`CREATE INDEX topup_transactions_duplicate_of_idx ON topup_transactions (duplicate_of)`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `DROP INDEX topup_transactions_duplicate_of_idx`,
				`ALTER TABLE topup_transactions DROP COLUMN duplicate_of`)
		},
	},
	storage.Migration{
		// SQLite keeps every digit of an amount only as text (storage.MoneyAsText).
		Name: "20261125000300_amount_as_text",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.MoneyAsText(ctx, tx, "topup_transactions", "amount")
		},
		Down: func(context.Context, bun.Tx) error { return nil },
	},
	storage.Migration{
		// One row per recipient a notification job reached (sent) or could never reach
		// (rejected): a job retried after a crash sends nothing to the recipients it lists.
		Name: "20261125000400_notification_deliveries",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `CREATE TABLE topup_notification_deliveries (
					job_id BIGINT NOT NULL,
					recipient VARCHAR(320) NOT NULL,
					transaction_id VARCHAR(36) NOT NULL,
					kind VARCHAR(40) NOT NULL,
					state VARCHAR(20) NOT NULL,
					detail TEXT,
					at $TIMESTAMP NOT NULL,
					PRIMARY KEY (job_id, recipient)
				)`,
				`CREATE INDEX topup_notification_deliveries_tx_idx ON topup_notification_deliveries (transaction_id)`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `DROP TABLE topup_notification_deliveries`)
		},
	},
	storage.Migration{
		// Every write of a record bumps its version, so that the settlement of a call can be a
		// compare-and-set on the record the caller holds (Store.UpdateHeld), without reading it.
		Name: "20261125000500_transaction_version",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `ALTER TABLE topup_transactions ADD COLUMN version BIGINT NOT NULL DEFAULT 0`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx, `ALTER TABLE topup_transactions DROP COLUMN version`)
		},
	},
	storage.Migration{
		// The two indexes whose column is empty on most records (a webhook's top-up has no
		// requesting user; only a repeated delivery has a duplicate_of) hold only the records
		// that have it: each webhook's insert wrote two index entries that no query reads. The
		// queries on them (a user's daily count, an invoice's repetitions) compare the column
		// with a value, which both engines take to imply IS NOT NULL. BENCHMARKS.md measures it.
		// Building them reads the whole table once, and writes to it wait meanwhile.
		Name: "20261129000100_partial_null_indexes",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx,
				`DROP INDEX topup_transactions_user_created_idx`,
				`CREATE INDEX topup_transactions_user_created_idx ON topup_transactions (requested_by_user_id, created_at)
					WHERE requested_by_user_id IS NOT NULL`,
				`DROP INDEX topup_transactions_duplicate_of_idx`,
				`CREATE INDEX topup_transactions_duplicate_of_idx ON topup_transactions (duplicate_of) WHERE duplicate_of IS NOT NULL`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx,
				`DROP INDEX topup_transactions_user_created_idx`,
				`CREATE INDEX topup_transactions_user_created_idx ON topup_transactions (requested_by_user_id, created_at)`,
				`DROP INDEX topup_transactions_duplicate_of_idx`,
				`CREATE INDEX topup_transactions_duplicate_of_idx ON topup_transactions (duplicate_of)`)
		},
	},
	storage.Migration{
		// GET /transactions pages newest first (created_at DESC, id DESC). Filtered by status,
		// the (status, updated_at) index made both engines read and sort every record of that
		// status (SQLite 146 ms for a page of 50,000 records, on the top-up service's one
		// connection); (status, created_at, id) gives the page in order, and still finds the
		// reconciler's pending and unavailable records, whose updated_at it compares on those
		// few rows. created_at gains id, the list's second key. The same number of entries per
		// insert, and an update that moves only updated_at (a lease, a retry) moves none.
		// BENCHMARKS.md measures it. Building them reads the whole table once, and writes to
		// it wait meanwhile.
		Name: "20261129000200_list_order_indexes",
		Up: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx,
				`DROP INDEX topup_transactions_status_updated_idx`,
				`CREATE INDEX topup_transactions_status_created_idx ON topup_transactions (status, created_at, id)`,
				`DROP INDEX topup_transactions_created_idx`,
				`CREATE INDEX topup_transactions_created_idx ON topup_transactions (created_at, id)`)
		},
		Down: func(ctx context.Context, tx bun.Tx) error {
			return storage.DDL(ctx, tx,
				`DROP INDEX topup_transactions_status_created_idx`,
				`CREATE INDEX topup_transactions_status_updated_idx ON topup_transactions (status, updated_at)`,
				`DROP INDEX topup_transactions_created_idx`,
				`CREATE INDEX topup_transactions_created_idx ON topup_transactions (created_at)`)
		},
	},
)

// Migrate applies the top-up schema to db.
func Migrate(ctx context.Context, db *bun.DB) ([]string, error) {
	return storage.Migrate(ctx, db, MigrationsTable, Migrations)
}
