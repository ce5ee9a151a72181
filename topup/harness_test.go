package topup

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river/rivertype"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/internal/jobs"
	"github.com/platform/integrations/internal/storage/storagetest"
)

const (
	testCarrierPassword = "Sup3r-S3cret-PASSWORD"
	testOperations      = "ops@example.com"
)

type env struct {
	svc   *Service
	store *Store
	spr   *carriertest.Server
	db    *bun.DB
	queue *jobs.Queue
}

// newEnv migrates tg, starts a fake SPR on loopback (wire level) with a short client timeout and
// builds a Service on them.
func newEnv(t *testing.T, tg storagetest.Target, cfg Config, opts ...Option) *env {
	t.Helper()
	return newEnvTimeout(t, tg, cfg, 400*time.Millisecond, opts...)
}

func newEnvTimeout(t *testing.T, tg storagetest.Target, cfg Config, timeout time.Duration, opts ...Option) *env {
	t.Helper()
	ctx := t.Context()
	if _, err := Migrate(ctx, tg.DB); err != nil {
		t.Fatal(err)
	}
	if err := jobs.Migrate(ctx, tg.DB, JobIndex); err != nil {
		t.Fatal(err)
	}
	q, err := jobs.New(tg.DB, nil, jobs.Config{})
	if err != nil {
		t.Fatal(err)
	}
	spr := carriertest.NewServer(carriertest.WithCredentials("user", testCarrierPassword, "C1"))
	t.Cleanup(spr.Close)
	client, err := carrier.New(carrier.Config{URL: spr.URL, User: "user", Password: testCarrierPassword, CompanyID: "C1", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OperationsEmail == "" {
		cfg.OperationsEmail = testOperations
	}
	store := NewStore(tg.DB, q)
	svc, err := NewService(store, client, cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return &env{svc: svc, store: store, spr: spr, db: tg.DB, queue: q}
}

type queuedJob struct {
	Kind  string
	Queue string
	Args  Notification
}

// jobsQueued reads every job River holds, oldest first.
func (e *env) jobsQueued(t *testing.T) []queuedJob {
	t.Helper()
	rows, err := e.queue.JobsByState(context.Background(), rivertype.JobStateAvailable, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var out []queuedJob
	for _, r := range rows {
		var n Notification
		if err := json.Unmarshal(r.EncodedArgs, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, queuedJob{Kind: r.Kind, Queue: r.Queue, Args: n})
	}
	slices.SortStableFunc(out, func(a, b queuedJob) int { return a.Args.OccurredAt.Compare(b.Args.OccurredAt) })
	return out
}

func (e *env) jobsFor(t *testing.T, txID string) []queuedJob {
	t.Helper()
	var out []queuedJob
	for _, j := range e.jobsQueued(t) {
		if j.Args.TransactionID == txID {
			out = append(out, j)
		}
	}
	return out
}

func operator(id string) Operator {
	return Operator{UserID: id, Username: "user-" + id, Email: id + "@example.com"}
}

var tokenSeq atomic.Int64

func manual(op Operator, subscriber string) ManualRequest {
	return ManualRequest{
		Operator:          op,
		ActionToken:       ActionToken{ID: fmt.Sprintf("jti-%s-%d", op.UserID, tokenSeq.Add(1)), Subject: op.UserID, ExpiresAt: time.Now().Add(5 * time.Minute)},
		SubscriberID:      subscriber,
		OfferID:           "31",
		Quantity:          1,
		ExternalOperation: OperationPines,
		Canton:            "1701",
	}
}

func mustV7() uuid.UUID { return uuid.Must(uuid.NewV7()) }
