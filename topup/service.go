package topup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
	_ "time/tzdata" // America/Guayaquil must load on machines without a zoneinfo database
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/internal/storage"
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

// NewService builds a Service on store (which enqueues the notification jobs) and the SPR.
func NewService(store *Store, c Carrier, cfg Config, opts ...Option) (*Service, error) {
	if store == nil || c == nil {
		return nil, errors.New("topup: NewService needs a store and a carrier")
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
	zone, err := dayZone()
	if err != nil {
		return nil, err
	}
	s := &Service{
		store: store, carrier: c, cfg: cfg, products: cfg.Products, zone: zone,
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

// Recharge runs a manual top-up synchronously: it validates the request, admits and inserts
// the pending record with its guards ([Store.Admit]), commits, calls the SPR and settles the
// outcome from pending with its audit and its notification ([Store.Update]).
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
	from, to := s.day(now)
	if err := s.store.Admit(ctx, t, Admission{
		TokenID:        r.ActionToken.ID,
		TokenExpiresAt: r.ActionToken.ExpiresAt,
		ThrottleLimit:  s.cfg.ThrottleLimit,
		ThrottleWindow: s.cfg.ThrottleWindow,
		DailyLimit:     s.cfg.DailyLimit,
		Unlimited:      r.Operator.Unlimited,
		DayStart:       from,
		DayEnd:         to,
	}); err != nil {
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

// execute sends the top-up of a committed pending record and settles the outcome: the
// transition, the audit of the exchange and the notification, in one transaction.
func (s *Service) execute(ctx context.Context, t *Transaction) (*Transaction, error) {
	wctx := context.WithoutCancel(ctx)
	if err := ctx.Err(); err != nil {
		return s.notSent(wctx, t, err)
	}
	// The call runs to its own deadline (CARRIER_TIMEOUT) whatever happens to the request, and
	// its outcome is written even when the caller went away.
	res, callErr := s.carrier.Topup(wctx, carrier.TopupRequest{
		ExternalOperation:     string(t.ExternalOperation),
		ExternalTransactionID: t.ExternalTransactionID,
		OfferID:               t.OfferID,
		SubscriberID:          t.SubscriberID,
		Quantity:              t.Quantity,
	})
	outcome := callStatus(callErr)
	reply := replyOf(res, callErr)
	call := callOf(t.ID, res, outcome, reply.Diagnostic, s.now())
	var rec *Transaction
	err := storage.RetryWrite(wctx, func(ctx context.Context) (err error) {
		rec, err = s.store.UpdateHeld(ctx, t, func(cur *Transaction) (Settlement, error) {
			if cur.Status != StatusPending {
				// Someone reconciled the record while the SPR answered (query-recharge or the
				// reconciler saw a remote SUCCESS): keep the exchange for the audit and report
				// the record as it now is.
				return Settlement{Call: call}, nil
			}
			switch outcome {
			case StatusSuccess:
				_ = cur.Succeed(reply)
			case StatusFailed:
				_ = cur.Fail(reply)
			default:
				_ = cur.MakeUnavailable(reply)
			}
			cur.UpdatedAt = dbTime(s.now())
			return Settlement{Save: true, Call: call, Notice: s.notice(cur)}, nil
		})
		return err
	})
	if err != nil {
		// The carrier acted (or may have), and its answer could not be written: the record stays
		// pending, and the reconciler asks the carrier about it once PendingAfter has passed.
		s.log.ErrorContext(ctx, "topup: the carrier's answer could not be recorded; the reconciler will settle the top-up",
			"transaction_id", t.ID, "external_transaction_id", t.ExternalTransactionID, "carrier_status", outcome, "error", err)
		return t, &UnrecordedError{Transaction: t, Err: err}
	}
	if rec.Status == StatusSuccess || callErr == nil {
		return rec, nil
	}
	return rec, &CarrierError{Transaction: rec, Err: callErr}
}

// notSent settles a pending record whose request's deadline passed before the carrier was
// called: nothing was sent. A manual top-up fails (the operator was told so and may ask again);
// a webhook's becomes unavailable, so that the reconciler sends it (the service owns its
// retries).
func (s *Service) notSent(ctx context.Context, t *Transaction, cause error) (*Transaction, error) {
	reply := CarrierReply{Diagnostic: "not sent: the request's deadline passed before the carrier was called"}
	var rec *Transaction
	err := storage.RetryWrite(ctx, func(ctx context.Context) (err error) {
		rec, err = s.store.Update(ctx, t.ID, func(cur *Transaction) (Settlement, error) {
			if cur.Status != StatusPending {
				return Settlement{}, nil
			}
			if cur.Source == SourceDashboard {
				_ = cur.Fail(reply)
			} else {
				_ = cur.MakeUnavailable(reply)
			}
			cur.UpdatedAt = dbTime(s.now())
			return Settlement{Save: true, Notice: s.notice(cur)}, nil
		})
		return err
	})
	if err != nil {
		return t, errors.Join(cause, err)
	}
	if rec.Source != SourceDashboard {
		return rec, nil
	}
	return rec, cause
}

// callStatus is the status a carrier call's error gives a top-up (package doc, "Errors").
func callStatus(err error) Status {
	var refused *carrier.Error
	switch {
	case err == nil:
		return StatusSuccess
	case errors.As(err, &refused), errors.Is(err, carrier.ErrInvalidRequest):
		return StatusFailed
	}
	return StatusUnavailable
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
	if callStatus(err) == StatusUnavailable {
		r.Diagnostic = err.Error()
	}
	return r
}

func callOf(id uuid.UUID, res *carrier.Result, outcome Status, diagnostic string, now time.Time) *CarrierCall {
	c := &CarrierCall{TransactionID: id, Outcome: string(outcome), Diagnostic: diagnostic, CreatedAt: dbTime(now)}
	if res != nil {
		c.Function = res.Exchange.Function
		c.RequestXML = string(res.Exchange.Request)
		c.ResponseXML = string(res.Exchange.Response)
		c.DurationMS = res.Exchange.Duration.Milliseconds()
	}
	return c
}

// notice is the job announcing t's current status, nil when the status announces nothing.
func (s *Service) notice(t *Transaction) *Notification {
	if t.Status == StatusUnavailable && t.RetryCount > 1 {
		// One e-mail per record per kind of event: the first pass through unavailable tells;
		// the reconciler's later passes do not repeat it.
		return nil
	}
	n, ok := notificationFor(t, s.cfg.OperationsEmail, s.now())
	if !ok {
		return nil
	}
	return &n
}

// Get returns a transaction.
func (s *Service) Get(ctx context.Context, id uuid.UUID) (*Transaction, error) {
	return s.store.Get(ctx, id)
}

// maxExternalIDLength is the longest external_transaction_id a record can hold (its column;
// query-recharge takes no longer one). The service's own are carrier.ExternalTransactionIDLength.
const maxExternalIDLength = 64

// Lookup returns the transaction that key names: its transaction_id (a UUID, in any form
// uuid.Parse reads) or, when no record has that id, its external_transaction_id, exactly as
// answered (case included). The transaction_id is looked up first and wins: should a value be
// one record's id and another's external id, the first is returned, and the second is reached
// by its own transaction_id. That cannot happen with the ids the service makes: a UUID never
// reads as 26 base32 digits (carrier.NewExternalTransactionID), nor those as a UUID. A key that
// no record can hold (not UTF-8, a control character, longer than an external id) is
// ErrNotFound without a query.
func (s *Service) Lookup(ctx context.Context, key string) (*Transaction, error) {
	if id, err := uuid.Parse(key); err == nil {
		t, err := s.store.Get(ctx, id)
		if !errors.Is(err, ErrNotFound) {
			return t, err
		}
	}
	if !utf8.ValidString(key) || !storable(key, maxExternalIDLength) {
		return nil, ErrNotFound
	}
	return s.store.GetByExternalID(ctx, key)
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
