package topup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
	_ "time/tzdata" // America/Guayaquil must load on machines without a zoneinfo database

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/platform/integrations/carrier"
)

// Defaults of Config.
const (
	DefaultDailyLimit     = 50
	DefaultThrottleLimit  = 5
	DefaultThrottleWindow = 60 * time.Second
	DefaultCanton         = "1701"
	// ThrottleGroup is the throttle group of the manual endpoint.
	ThrottleGroup = "recharge"
	// DayZone is the time zone whose calendar day the daily limit counts.
	DayZone = "America/Guayaquil"
)

// Carrier is what the service needs from the SPR; *carrier.Client implements it.
type Carrier interface {
	Topup(ctx context.Context, r carrier.TopupRequest) (*carrier.Result, error)
	QueryRecharge(ctx context.Context, r carrier.QueryRequest) (*carrier.Result, error)
	Inventory(ctx context.Context) (*carrier.Inventory, error)
}

// Config holds the business settings. Zero fields take the defaults above.
type Config struct {
	// DailyLimit is RECARGAS_DAILY_LIMIT: manual top-ups per user per calendar day in DayZone,
	// unless the user has unlimited_recargas.
	DailyLimit int
	// ThrottleLimit requests per ThrottleWindow per user (5 per 60 s in the specification).
	ThrottleLimit  int
	ThrottleWindow time.Duration
	// DefaultCanton is RECARGAS_DEFAULT_CANTON, used when a webhook carries no canton.
	DefaultCanton string
	// OperationsEmail is OPERATIONS_EMAIL, a recipient of every notification.
	OperationsEmail string
	// Products is the product mapping; nil means DefaultProducts.
	Products *Products
	// Reconcile configures the reconciler.
	Reconcile ReconcileConfig
}

// Service runs top-ups: guards, persistence before the carrier call, outcome, notifications,
// reconciliation. It is safe for concurrent use by many requests and many instances on one
// database.
type Service struct {
	store    *Store
	carrier  Carrier
	queue    Enqueuer
	cfg      Config
	products *Products
	zone     *time.Location
	now      func() time.Time
	newExtID func() string
	log      *slog.Logger
}

// Option configures a Service.
type Option func(*Service) error

// WithClock replaces time.Now (tests of the daily window and the reconciler thresholds).
func WithClock(now func() time.Time) Option {
	return func(s *Service) error {
		if now == nil {
			return errors.New("topup: nil clock")
		}
		s.now = now
		return nil
	}
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(s *Service) error {
		if l == nil {
			return errors.New("topup: nil logger")
		}
		s.log = l
		return nil
	}
}

// WithExternalIDs replaces carrier.NewExternalTransactionID.
func WithExternalIDs(gen func() string) Option {
	return func(s *Service) error {
		if gen == nil {
			return errors.New("topup: nil external id generator")
		}
		s.newExtID = gen
		return nil
	}
}

// NewService builds a Service. queue receives the notification jobs inside the transactions
// of the status changes.
func NewService(store *Store, c Carrier, queue Enqueuer, cfg Config, opts ...Option) (*Service, error) {
	if store == nil || c == nil || queue == nil {
		return nil, errors.New("topup: NewService needs a store, a carrier and a queue")
	}
	cfg.DailyLimit = cmp.Or(cfg.DailyLimit, DefaultDailyLimit)
	cfg.ThrottleLimit = cmp.Or(cfg.ThrottleLimit, DefaultThrottleLimit)
	cfg.ThrottleWindow = cmp.Or(cfg.ThrottleWindow, DefaultThrottleWindow)
	cfg.DefaultCanton = cmp.Or(cfg.DefaultCanton, DefaultCanton)
	if cfg.DailyLimit < 0 || cfg.ThrottleLimit < 0 || cfg.ThrottleWindow < 0 {
		return nil, errors.New("topup: negative DailyLimit, ThrottleLimit or ThrottleWindow")
	}
	if !cantonRe.MatchString(cfg.DefaultCanton) {
		return nil, fmt.Errorf("topup: DefaultCanton %q is not a 4-digit INEC code", cfg.DefaultCanton)
	}
	if err := cfg.Reconcile.normalize(); err != nil {
		return nil, err
	}
	zone, err := time.LoadLocation(DayZone)
	if err != nil {
		return nil, fmt.Errorf("topup: %w", err)
	}
	s := &Service{
		store: store, carrier: c, queue: queue, cfg: cfg, products: cfg.Products, zone: zone,
		now: time.Now, newExtID: carrier.NewExternalTransactionID, log: slog.Default(),
	}
	if s.products == nil {
		s.products = DefaultProducts()
	}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("topup: nil Option")
		}
		if err := o(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Operator is the authenticated user of a manual request, from the user token.
type Operator struct {
	UserID    string
	Username  string
	Email     string
	Unlimited bool // permission unlimited_recargas
}

// ActionToken is the verified X-Action-Token: its jti, subject and expiry.
type ActionToken struct {
	ID        string
	Subject   string
	ExpiresAt time.Time
}

// ManualRequest is POST /recharge.
type ManualRequest struct {
	Operator          Operator
	ActionToken       ActionToken
	SubscriberID      string
	OfferID           string
	Quantity          int
	ExternalOperation Operation
	Canton            string
}

// Recharge runs a manual top-up synchronously. In one transaction, serialised per user, it
// spends the action token, takes a place in the throttle's window, checks the daily limit and
// inserts the pending record; that commit happens before the SPR is called. A guard that
// refuses rolls the whole transaction back: the token stays unspent and the request does not
// count. The outcome is then written with a compare-and-set from pending, with its
// notification in the same transaction.
//
// It returns the record and nil on success; the record and a *CarrierError when the carrier
// refused (failed) or could not be reached (unavailable); nil and a *ValidationError,
// ErrActionTokenInvalid, ErrActionTokenUsed, a *ThrottleError (ErrThrottled) or ErrDailyLimit
// when nothing was sent.
func (s *Service) Recharge(ctx context.Context, r ManualRequest) (*Transaction, error) {
	if fields := r.validate(); len(fields) > 0 {
		return nil, &ValidationError{Fields: fields}
	}
	if !storable(r.Operator.UserID, maxUserID) || !storable(r.ActionToken.ID, maxTokenID) ||
		r.ActionToken.Subject != r.Operator.UserID || r.ActionToken.ExpiresAt.IsZero() {
		return nil, ErrActionTokenInvalid
	}
	// The name and e-mail only describe the operator: keep what fits their columns rather
	// than refuse a valid token over them.
	r.Operator.Username = clipText(r.Operator.Username, maxUsername)
	if !storable(r.Operator.Email, maxEmail) {
		r.Operator.Email = ""
	}
	now := dbTime(s.now())
	t := &Transaction{
		ID:                    uuid.Must(uuid.NewV7()),
		ExternalTransactionID: s.newExtID(),
		ExternalOperation:     r.ExternalOperation,
		Source:                SourceDashboard,
		SubscriberID:          r.SubscriberID,
		OfferID:               r.OfferID,
		Quantity:              r.Quantity,
		Canton:                r.Canton,
		Status:                StatusPending,
		RequestedByUserID:     r.Operator.UserID,
		RequestedByUsername:   r.Operator.Username,
		RequestedByEmail:      r.Operator.Email,
		CreatedAt:             now,
		UpdatedAt:             now,
	}
	var wait time.Duration
	err := s.store.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := lockUser(ctx, tx, r.Operator.UserID); err != nil {
			return err
		}
		if err := s.store.useActionToken(ctx, tx, r.ActionToken.ID, r.Operator.UserID, r.ActionToken.ExpiresAt, now); err != nil {
			return err
		}
		var err error
		if wait, err = s.store.takeThrottle(ctx, tx, r.Operator.UserID, ThrottleGroup, s.cfg.ThrottleLimit, s.cfg.ThrottleWindow, now); err != nil {
			return err
		}
		if !r.Operator.Unlimited {
			from, to := s.day(now)
			n, err := s.store.countManualSince(ctx, tx, r.Operator.UserID, from, to)
			if err != nil {
				return err
			}
			if n >= s.cfg.DailyLimit {
				return ErrDailyLimit
			}
		}
		return s.store.insert(ctx, tx, t)
	})
	if errors.Is(err, ErrThrottled) {
		return nil, &ThrottleError{Limit: s.cfg.ThrottleLimit, Window: s.cfg.ThrottleWindow, RetryAfter: wait}
	}
	if err != nil {
		return nil, err
	}
	return s.execute(ctx, t)
}

// day returns the calendar day of DayZone that contains t.
func (s *Service) day(t time.Time) (from, to time.Time) {
	l := t.In(s.zone)
	from = time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, s.zone)
	return from, from.AddDate(0, 0, 1)
}

// execute sends the top-up of a committed pending record and writes the outcome.
func (s *Service) execute(ctx context.Context, t *Transaction) (*Transaction, error) {
	// The outcome must be written even when the caller goes away; the carrier client has its
	// own deadline (CARRIER_TIMEOUT).
	ctx = context.WithoutCancel(ctx)
	res, callErr := s.carrier.Topup(ctx, carrier.TopupRequest{
		ExternalOperation:     string(t.ExternalOperation),
		ExternalTransactionID: t.ExternalTransactionID,
		OfferID:               t.OfferID,
		SubscriberID:          t.SubscriberID,
		Quantity:              t.Quantity,
	})
	outcome := carrier.Outcome(callErr)
	reply := replyOf(res, callErr)
	call := callOf(t.ID, res, outcome, reply.Diagnostic, s.now())

	next := *t
	switch outcome {
	case carrier.OutcomeSuccess:
		_ = next.Succeed(reply)
	case carrier.OutcomeFailed:
		_ = next.Fail(reply)
	default:
		_ = next.MakeUnavailable(reply)
	}
	next.UpdatedAt = dbTime(s.now())
	err := s.store.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := s.store.compareAndSet(ctx, tx, &next, StatusPending, time.Time{}); err != nil {
			return err
		}
		if err := s.store.addCarrierCall(ctx, tx, call); err != nil {
			return err
		}
		return s.notify(ctx, tx, &next)
	})
	if errors.Is(err, ErrConflict) {
		// Someone reconciled the record while the SPR answered (query-recharge or the
		// reconciler saw a remote SUCCESS). Keep the exchange for the audit and report the
		// record as it now is.
		if aerr := s.store.addCarrierCall(ctx, s.store.db, call); aerr != nil {
			s.log.ErrorContext(ctx, "topup: audit of a top-up answer lost", "transaction_id", t.ID, "error", aerr)
		}
		cur, gerr := s.store.Get(ctx, t.ID)
		if gerr != nil {
			return nil, gerr
		}
		if cur.Status == StatusSuccess || callErr == nil {
			return cur, nil
		}
		return cur, &CarrierError{Transaction: cur, Err: callErr}
	}
	if err != nil {
		return nil, err
	}
	if callErr != nil {
		return &next, &CarrierError{Transaction: &next, Err: callErr}
	}
	return &next, nil
}

// replyOf copies what the SPR said (or why it said nothing) for the record. The technical
// diagnostic of a fault or transport error is the error itself; the carrier package keeps
// the PASSWORD out of both.
func replyOf(res *carrier.Result, err error) CarrierReply {
	var r CarrierReply
	if res != nil {
		r = CarrierReply{
			IDRecarga:     res.IDRecarga,
			IDCodigo:      res.IDCodigo,
			Message:       res.Mensaje,
			SystemMessage: res.SystemMessage,
			ResultCode:    res.ResultCode,
			Diagnostic:    res.Diagnostic,
			RequestXML:    string(res.Exchange.Request),
			ResponseXML:   string(res.Exchange.Response),
		}
	}
	if err != nil && carrier.Outcome(err) == carrier.OutcomeUnavailable {
		r.Diagnostic = err.Error()
	}
	return r
}

func callOf(id uuid.UUID, res *carrier.Result, outcome, diagnostic string, now time.Time) *CarrierCall {
	c := &CarrierCall{TransactionID: id, Outcome: outcome, Diagnostic: diagnostic, CreatedAt: dbTime(now)}
	if res != nil {
		c.Function = res.Exchange.Function
		c.RequestXML = string(res.Exchange.Request)
		c.ResponseXML = string(res.Exchange.Response)
		c.DurationMS = res.Exchange.Duration.Milliseconds()
	}
	return c
}

// notify enqueues, inside tx, the job announcing t's current status, if the status announces
// anything. The job is inserted even with no recipient: the worker skips those.
func (s *Service) notify(ctx context.Context, tx bun.Tx, t *Transaction) error {
	n, ok := notificationFor(t, s.cfg.OperationsEmail, s.now())
	if !ok {
		return nil
	}
	args, err := n.Args()
	if err != nil {
		return err
	}
	return s.queue.InsertTx(ctx, tx, args, nil)
}

// Get returns a transaction.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (*Transaction, error) {
	return s.store.Get(ctx, id)
}

// List returns one page of transactions and the total.
func (s *Service) List(ctx context.Context, f Filter) ([]Transaction, int, error) {
	return s.store.List(ctx, f)
}

// CarrierCalls returns the audit of every SPR exchange about a transaction.
func (s *Service) CarrierCalls(ctx context.Context, id uuid.UUID) ([]CarrierCall, error) {
	return s.store.CarrierCalls(ctx, id)
}

// Inventory returns the stock at the SPR.
func (s *Service) Inventory(ctx context.Context) (*carrier.Inventory, error) {
	return s.carrier.Inventory(ctx)
}

// Notifications returns the notification jobs River still holds for a transaction.
func (s *Service) Notifications(ctx context.Context, id uuid.UUID) ([]NotificationJob, error) {
	return s.store.Notifications(ctx, id)
}
