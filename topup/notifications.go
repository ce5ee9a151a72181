package topup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/riverqueue/river"
)

// NotificationQueue is the River queue every notification job goes to.
const NotificationQueue = "recharge-notifications"

// UnavailableMessage is the reason of every recharge-unavailable notification: generic,
// whatever the fault or transport error was (carrier_diagnostic keeps it).
const UnavailableMessage = "carrier unavailable: the carrier could not be reached or did not answer; the top-up will be reconciled"

// The job kinds of the specification's events table.
const (
	KindRechargeSuccess        = "recharge-success"
	KindRechargeFailed         = "recharge-failed"
	KindRechargeUnavailable    = "recharge-unavailable"
	KindRechargeInvalidInvoice = "recharge-invalid-invoice"
)

// Notification is the payload of every notification job: enough for an e-mail without reading
// the database again. Recipients are already de-duplicated (case-insensitively, first spelling
// kept). They may be empty (no notification_email, no operator e-mail, no OPERATIONS_EMAIL):
// the job is inserted all the same, so that every announced status change has its job, and
// the worker completes it without sending anything.
type Notification struct {
	Event                 string    `json:"event"`
	Recipients            []string  `json:"recipients"`
	TransactionID         string    `json:"transaction_id"`
	ExternalTransactionID string    `json:"external_transaction_id,omitempty"`
	Source                Source    `json:"source"`
	Status                Status    `json:"status"`
	SubscriberID          string    `json:"subscriber_id,omitempty"`
	OfferID               string    `json:"offer_id,omitempty"`
	ExternalOperation     Operation `json:"external_operation,omitempty"`
	ProductCode           string    `json:"product_code,omitempty"`
	Amount                string    `json:"amount,omitempty"`
	InvoiceNumber         string    `json:"invoice_number,omitempty"`
	InvoiceCode           string    `json:"invoice_code,omitempty"`
	Canton                string    `json:"canton,omitempty"`
	RequestedByUsername   string    `json:"requested_by_username,omitempty"`
	CarrierIDRecarga      string    `json:"carrier_id_recarga,omitempty"`
	// Message is the reason in words: the carrier's message or diagnostic, or the rejection reason.
	Message    string    `json:"message,omitempty"`
	RetryCount int       `json:"retry_count"`
	OccurredAt time.Time `json:"occurred_at"`
}

// The River job args of the four kinds. Each embeds Notification; the worker that sends the
// e-mails registers with AddNotificationWorkers.
type (
	RechargeSuccessArgs        struct{ Notification }
	RechargeFailedArgs         struct{ Notification }
	RechargeUnavailableArgs    struct{ Notification }
	RechargeInvalidInvoiceArgs struct{ Notification }
)

func (RechargeSuccessArgs) Kind() string        { return KindRechargeSuccess }
func (RechargeFailedArgs) Kind() string         { return KindRechargeFailed }
func (RechargeUnavailableArgs) Kind() string    { return KindRechargeUnavailable }
func (RechargeInvalidInvoiceArgs) Kind() string { return KindRechargeInvalidInvoice }

func (RechargeSuccessArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: NotificationQueue}
}
func (RechargeFailedArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: NotificationQueue}
}
func (RechargeUnavailableArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: NotificationQueue}
}
func (RechargeInvalidInvoiceArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: NotificationQueue}
}

// Args returns the job args of the notification's kind.
func (n Notification) Args() (river.JobArgs, error) {
	switch n.Event {
	case KindRechargeSuccess:
		return RechargeSuccessArgs{n}, nil
	case KindRechargeFailed:
		return RechargeFailedArgs{n}, nil
	case KindRechargeUnavailable:
		return RechargeUnavailableArgs{n}, nil
	case KindRechargeInvalidInvoice:
		return RechargeInvalidInvoiceArgs{n}, nil
	}
	return nil, fmt.Errorf("topup: unknown notification event %q", n.Event)
}

// Delivery is one run of a notification job: the job's id (the key of its per-recipient
// delivery records) and attempt, and the notification.
type Delivery struct {
	JobID   int64
	Attempt int
	Notification
}

// ErrUndeliverable marks a Sender's error that no retry can cure (every remaining recipient
// refused for good, a message the server rejects): the job is cancelled with it instead of
// being retried.
var ErrUndeliverable = errors.New("topup: notification cannot be delivered")

// Sender delivers one notification (package topup/email). An error makes River retry the job
// with backoff, unless it wraps ErrUndeliverable. It is never called with an empty Recipients:
// the worker completes such a job without calling it.
type Sender interface {
	Send(ctx context.Context, d Delivery) error
}

// AddNotificationWorkers registers on workers one River worker per notification kind, each
// handing the notification to s. A process that works NotificationQueue calls it; a process
// without a Sender only inserts jobs.
func AddNotificationWorkers(workers *river.Workers, s Sender) error {
	if s == nil {
		return errors.New("topup: nil notification sender")
	}
	return errors.Join(
		river.AddWorkerSafely(workers, &notificationWorker[RechargeSuccessArgs]{s: s}),
		river.AddWorkerSafely(workers, &notificationWorker[RechargeFailedArgs]{s: s}),
		river.AddWorkerSafely(workers, &notificationWorker[RechargeUnavailableArgs]{s: s}),
		river.AddWorkerSafely(workers, &notificationWorker[RechargeInvalidInvoiceArgs]{s: s}),
	)
}

type notificationArgs interface {
	river.JobArgs
	notification() Notification
}

func (a RechargeSuccessArgs) notification() Notification        { return a.Notification }
func (a RechargeFailedArgs) notification() Notification         { return a.Notification }
func (a RechargeUnavailableArgs) notification() Notification    { return a.Notification }
func (a RechargeInvalidInvoiceArgs) notification() Notification { return a.Notification }

type notificationWorker[T notificationArgs] struct {
	river.WorkerDefaults[T]
	s Sender
}

// Work hands the notification to the Sender, or completes the job without sending when it
// has no recipient: the decision is taken here, when the job runs, not when it is inserted.
func (w *notificationWorker[T]) Work(ctx context.Context, job *river.Job[T]) error {
	n := job.Args.notification()
	if len(n.Recipients) == 0 {
		return nil
	}
	err := w.s.Send(ctx, Delivery{JobID: job.ID, Attempt: job.Attempt, Notification: n})
	if errors.Is(err, ErrUndeliverable) {
		return river.JobCancel(err)
	}
	return err
}

// Recipients de-duplicates addresses case-insensitively, trimming blanks and dropping empty
// or unparsable ones, keeping the first spelling and the order given.
func Recipients(addrs ...string) []string {
	seen := make(map[string]bool, len(addrs))
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if _, err := mail.ParseAddress(a); err != nil {
			continue
		}
		key := strings.ToLower(a)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, a)
	}
	return out
}

// notificationFor builds the job announcing that t just reached its current status, or
// reports false when the status announces nothing (pending, ignored, error).
func notificationFor(t *Transaction, operationsEmail string, now time.Time) (Notification, bool) {
	var event, message string
	recipients := []string{t.NotificationEmail, t.RequestedByEmail, operationsEmail}
	switch t.Status {
	case StatusSuccess:
		event, message = KindRechargeSuccess, cmp.Or(t.CarrierSystemMessage, t.CarrierMessage)
	case StatusFailed:
		event, message = KindRechargeFailed, cmp.Or(t.CarrierSystemMessage, t.CarrierMessage, t.CarrierDiagnostic)
	case StatusUnavailable:
		// Not carrier_diagnostic: a transport error names the SPR's URL and host, and the
		// e-mail goes to the branch. The diagnostic stays in the record for operators.
		event, message = KindRechargeUnavailable, UnavailableMessage
	case StatusRejected:
		// The specification sends invalid invoices to the branch and operations only.
		event, message = KindRechargeInvalidInvoice, cmp.Or(t.rejectionDetail, t.RejectionReason)
		recipients = []string{t.NotificationEmail, operationsEmail}
	default:
		return Notification{}, false
	}
	n := Notification{
		Event:                 event,
		Recipients:            Recipients(recipients...),
		TransactionID:         t.ID.String(),
		ExternalTransactionID: t.ExternalTransactionID,
		Source:                t.Source,
		Status:                t.Status,
		SubscriberID:          t.SubscriberID,
		OfferID:               t.OfferID,
		ExternalOperation:     t.ExternalOperation,
		ProductCode:           t.ProductCode,
		InvoiceNumber:         t.InvoiceNumber,
		InvoiceCode:           t.InvoiceCode,
		Canton:                t.Canton,
		RequestedByUsername:   t.RequestedByUsername,
		CarrierIDRecarga:      t.CarrierIDRecarga,
		Message:               message,
		RetryCount:            t.RetryCount,
		OccurredAt:            now.UTC(),
	}
	if t.Amount.Valid {
		n.Amount = t.Amount.Decimal.StringFixed(2)
	}
	return n, true
}
