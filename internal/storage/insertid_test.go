package storage_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/storage"
	"github.com/platform/integrations/internal/storage/storagetest"
)

// InsertBoundID sets the new row's key on both engines, alone and in a SQLite commit group
// (where the insert runs in a savepoint).
func TestInsertBoundID(t *testing.T) {
	storagetest.Run(t, func(t *testing.T, tg storagetest.Target) {
		if _, err := storage.Migrate(t.Context(), tg.DB, "test_migrations", testMigrations); err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, code := range []string{"K1", "K2", "K3"} {
			it := &item{Code: code, Estado: "NEW", CreatedAt: time.Now().UTC()}
			err := storage.RunInTx(t.Context(), tg.DB, func(ctx context.Context, tx bun.Tx) error {
				return storage.InsertBoundID(ctx, tx, it, &it.ID)
			})
			if err != nil {
				t.Fatal(err)
			}
			var got string
			if err := tg.DB.NewSelect().Model((*item)(nil)).Column("code").Where("id = ?", it.ID).Scan(t.Context(), &got); err != nil || got != code {
				t.Fatalf("row of id %d: %q, %v; want %s", it.ID, got, err, code)
			}
			ids = append(ids, it.ID)
		}
		if ids[0] < 1 || ids[1] <= ids[0] || ids[2] <= ids[1] {
			t.Fatalf("ids %v, want increasing keys", ids)
		}
	})
}

// BenchmarkInsertBoundID: one row with its key read back, as bun's RETURNING "id" and as
// InsertBoundID, 100 rows per transaction so that the commit does not hide the statement.
func BenchmarkInsertBoundID(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		for _, how := range []string{"returning", "InsertBoundID"} {
			b.Run(engine+"/"+how, func(b *testing.B) {
				db := storagetest.Fresh(b, engine).DB
				if _, err := storage.Migrate(b.Context(), db, "test_migrations", testMigrations); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				n := 0
				for done := 0; done < b.N; done += 100 {
					err := db.RunInTx(b.Context(), nil, func(ctx context.Context, tx bun.Tx) error {
						for range min(100, b.N-done) {
							n++ // codes are unique
							it := &item{Code: "B" + strconv.Itoa(n), Estado: "NEW", CreatedAt: time.Now().UTC()}
							var err error
							if how == "returning" {
								_, err = tx.NewInsert().Model(it).Returning("id").Exec(ctx)
							} else {
								err = storage.InsertBoundID(ctx, tx, it, &it.ID)
							}
							if err != nil || it.ID == 0 {
								b.Fatalf("id %d, %v", it.ID, err)
							}
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
