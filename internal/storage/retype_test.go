package storage_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// A money column of a table made before $DECIMAL was TEXT on SQLite is rebuilt as TEXT: rows,
// indexes and the foreign keys pointing at the table stay, and every digit is kept from then on.
func TestMoneyAsText(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		ctx := t.Context()
		const old = "NUMERIC(18,2)" // what $DECIMAL was on SQLite
		ms := storage.NewMigrations(
			storage.Migration{Name: "1_tables", Up: func(ctx context.Context, tx bun.Tx) error {
				return storage.DDL(ctx, tx,
					`CREATE TABLE pagos (id $ID, code VARCHAR(10) NOT NULL UNIQUE, monto `+old+` NOT NULL, otro `+old+`)`,
					`CREATE INDEX pagos_monto_idx ON pagos (monto)`,
					`CREATE TABLE pago_items (id $ID, pago_id BIGINT NOT NULL REFERENCES pagos (id))`,
					`INSERT INTO pagos (code, monto, otro) VALUES ('A', 1500.50, 1)`,
					`INSERT INTO pago_items (pago_id) VALUES (1)`)
			}},
			storage.Migration{Name: "2_money_as_text", Up: func(ctx context.Context, tx bun.Tx) error {
				return storage.MoneyAsText(ctx, tx, "pagos", "monto", "otro")
			}},
		)
		if _, err := storage.Migrate(ctx, tg.DB, "retype_migrations", ms); err != nil {
			t.Fatal(err)
		}
		if _, err := tg.DB.ExecContext(ctx, `INSERT INTO pagos (code, monto) VALUES ('B', '9999999999999999.99')`); err != nil {
			t.Fatal(err)
		}
		var got []string
		if err := tg.DB.NewRaw(`SELECT CAST(monto AS TEXT) FROM pagos ORDER BY id`).Scan(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[1] != "9999999999999999.99" || (got[0] != "1500.5" && got[0] != "1500.50") {
			t.Fatalf("amounts %q, want the old row kept and every digit of the new one", got)
		}
		if _, err := tg.DB.ExecContext(ctx, `INSERT INTO pago_items (pago_id) VALUES (1)`); err != nil {
			t.Fatalf("the foreign key to the rebuilt table: %v", err)
		}
		if _, err := tg.DB.ExecContext(ctx, `INSERT INTO pago_items (pago_id) VALUES (999)`); err == nil {
			t.Fatal("a dangling reference was accepted: the foreign key was lost")
		}
		if _, err := tg.DB.ExecContext(ctx, `INSERT INTO pagos (code, monto) VALUES ('A', 1)`); !storage.IsUniqueViolation(err) {
			t.Fatalf("the unique code was lost: %v", err)
		}
		if tg.Name == "sqlite" {
			var n int
			if err := tg.DB.NewRaw(`SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'pagos_monto_idx'`).Scan(ctx, &n); err != nil || n != 1 {
				t.Fatalf("index lost: %d %v", n, err)
			}
		}
	})
}
