package jobs_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/storage"
)

type exampleArgs struct {
	TransactionID string `json:"transaction_id"`
}

func (exampleArgs) Kind() string { return "recharge-success" }

// A service records a state change and the job announcing it in one transaction; a worker in
// the same process runs the job once the transaction commits.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "jobs-example")
	defer os.RemoveAll(dir)
	db, err := storage.Open(ctx, filepath.Join(dir, "app.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	if err := jobs.Migrate(ctx, db); err != nil {
		fmt.Println(err)
		return
	}

	sent := make(chan string, 1)
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[exampleArgs]) error {
		sent <- job.Args.TransactionID
		return nil
	}))
	q, err := jobs.New(db, workers, jobs.Config{
		Queues:       map[string]int{"recharge-notifications": 5},
		PollInterval: 50 * time.Millisecond,
		Logger:       slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := q.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer q.Stop(ctx)

	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// ... UPDATE the transaction's estado here, in tx ...
		return q.InsertTx(ctx, tx, exampleArgs{TransactionID: "TX-1"},
			&river.InsertOpts{Queue: "recharge-notifications"})
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	select {
	case id := <-sent:
		fmt.Println("notified", id)
	case <-time.After(5 * time.Second):
		fmt.Println("job did not run")
	}
	// Output: notified TX-1
}
