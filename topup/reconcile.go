package topup

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/platform/integrations/carrier"
)

// Defaults of ReconcileConfig.
const (
	DefaultReconcileInterval     = time.Minute
	DefaultReconcilePendingAfter = 5 * time.Minute
	DefaultReconcileRetryAfter   = time.Minute
	DefaultReconcileMaxRetries   = 3
	DefaultReconcileBatch        = 50
)

// ReconcileConfig configures the reconciler. Zero fields take the defaults.
type ReconcileConfig struct {
	// Interval between two passes of Run.
	Interval time.Duration
	// PendingAfter is how long a record may stay pending before the reconciler treats it as
	// abandoned (a crash between the commit and the outcome). Keep it well above the carrier
	// timeout, so that a top-up still in flight is not taken.
	PendingAfter time.Duration
	// RetryAfter is how long an unavailable record rests between two looks.
	RetryAfter time.Duration
	// MaxRetries is how many times an unavailable top-up is sent again (retry_count counts the
	// passes through unavailable, so it is sent again while retry_count <= MaxRetries).
	// Negative disables retries; the carrier is still asked.
	MaxRetries int
	// Batch is the most records one pass looks at.
	Batch int
	// Lease is how long a claimed record stays out of every other pass, whichever the instance:
	// longer than the calls the claiming pass may make (a query and a top-up, each up to the
	// carrier timeout), so that a slow pass is never overtaken and a top-up never sent twice at
	// once. Default DefaultReconcileLease; the service sets it from CARRIER_TIMEOUT.
	Lease time.Duration
}

// DefaultReconcileLease fits two calls of the default 30 s carrier timeout and a margin.
const DefaultReconcileLease = 90 * time.Second

func (c *ReconcileConfig) normalize() error {
	if c.Interval < 0 || c.PendingAfter < 0 || c.RetryAfter < 0 || c.Batch < 0 || c.Lease < 0 {
		return errors.New("topup: negative reconciler setting")
	}
	if c.Interval == 0 {
		c.Interval = DefaultReconcileInterval
	}
	if c.Lease == 0 {
		c.Lease = DefaultReconcileLease
	}
	if c.PendingAfter == 0 {
		c.PendingAfter = DefaultReconcilePendingAfter
	}
	if c.RetryAfter == 0 {
		c.RetryAfter = DefaultReconcileRetryAfter
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultReconcileMaxRetries
	}
	if c.Batch == 0 {
		c.Batch = DefaultReconcileBatch
	}
	return nil
}

// QueryRequest is POST /query-recharge.
type QueryRequest struct {
	ExternalTransactionID string
	OfferID               string
	// ChargeConfirmed is the business confirming the charge of a failed transaction that the
	// carrier reports SUCCESS: only then does it become success.
	ChargeConfirmed bool
}

// QueryResult is the carrier's answer and what it did to the local record.
type QueryResult struct {
	// Remote is the carrier's answer, never nil; RemoteSuccess is STATUS=SUCCESS, ID_CODIGO=0.
	Remote        *carrier.Result
	RemoteSuccess bool
	// Transaction is the local record after the query, nil when there is none.
	Transaction    *Transaction
	PreviousStatus Status
	Changed        bool
	// Note explains a remote SUCCESS that did not move the record, or a flagged incident.
	Note string
}

// QueryRecharge asks the carrier for the real status of a top-up (sre_consulta_recarga) and
// applies the reconciliation transitions to the local record, when there is one: pending and
// unavailable become success on a remote SUCCESS; failed becomes success on a remote SUCCESS
// only with ChargeConfirmed; a local success that the carrier answers with ERROR is flagged
// as an incident and stays success. A query whose offer_id is not the record's changes
// nothing (the carrier's answer is about another pair). It creates no transaction. The
// transitions apply to the record as it is when the answer arrives, locked while they are
// settled with the audit of the exchange.
//
// A carrier answer, SUCCESS or ERROR, is a result (nil error). A fault or transport error is a
// *CarrierError without a Transaction (the exchange is audited on the local record, which does
// not change).
func (s *Service) QueryRecharge(ctx context.Context, r QueryRequest) (*QueryResult, error) {
	var f fieldErrors
	f.text("external_transaction_id", r.ExternalTransactionID, true, 64)
	f.text("offer_id", r.OfferID, true, maxOfferID)
	if len(f) > 0 {
		return nil, &ValidationError{Fields: f}
	}
	local, err := s.store.GetByExternalID(ctx, r.ExternalTransactionID)
	if errors.Is(err, ErrNotFound) {
		local = nil
	} else if err != nil {
		return nil, err
	}
	ctx = context.WithoutCancel(ctx)
	res, callErr := s.carrier.QueryRecharge(ctx, carrier.QueryRequest{ExternalTransactionID: r.ExternalTransactionID, OfferID: r.OfferID})
	outcome := callStatus(callErr)
	out := &QueryResult{Remote: res, RemoteSuccess: callErr == nil}
	if local != nil {
		reply := replyOf(res, callErr)
		call := callOf(local.ID, res, outcome, reply.Diagnostic, s.now())
		rec, err := s.store.Update(ctx, local.ID, func(t *Transaction) (Settlement, error) {
			out.PreviousStatus = t.Status
			if !s.applyQueryAnswer(t, r, outcome, reply, out) {
				return Settlement{Call: call}, nil
			}
			t.UpdatedAt = dbTime(s.now())
			t.LastReconciledAt = bun.NullTime{Time: t.UpdatedAt}
			st := Settlement{Save: true, Call: call}
			if t.Status != out.PreviousStatus {
				st.Notice = s.notice(t)
			}
			return st, nil
		})
		if err != nil {
			return nil, err
		}
		out.Transaction, out.Changed = rec, rec.Status != out.PreviousStatus
	}
	if outcome == StatusUnavailable {
		return nil, &CarrierError{Err: callErr}
	}
	return out, nil
}

// applyQueryAnswer applies the carrier's answer to a query about t (outcome success: remote
// SUCCESS; failed: remote ERROR) and reports whether t changed; out.Note explains an answer
// that did not move the record, or a flagged incident.
func (s *Service) applyQueryAnswer(t *Transaction, r QueryRequest, outcome Status, reply CarrierReply, out *QueryResult) bool {
	// The carrier answers about the pair (external_transaction_id, offer_id): with another
	// offer than the record's it answers ERROR ("wrong product for the query"), which says
	// nothing about the top-up. Applying it would flag a false incident on a success.
	if t.OfferID != "" && t.OfferID != r.OfferID {
		out.Note = fmt.Sprintf("offer_id %s is not the transaction's (%s): the carrier's answer is not applied to it", r.OfferID, t.OfferID)
		return false
	}
	switch outcome {
	case StatusSuccess:
		changed, err := t.ConfirmRemoteSuccess(reply, r.ChargeConfirmed)
		switch {
		case errors.Is(err, ErrChargeNotConfirmed):
			out.Note = "the carrier reports SUCCESS for a failed transaction: it becomes success only when the business confirms the charge (confirm_charge)"
		case err != nil:
			out.Note = fmt.Sprintf("the carrier reports SUCCESS; a %s transaction does not change", t.Status)
		}
		return changed
	case StatusFailed:
		note := "the carrier reports ERROR for a transaction that is success locally: operational incident, not downgraded"
		if msg := cmp.Or(reply.Message, reply.SystemMessage); msg != "" {
			note += " (" + msg + ")"
		}
		wasIncident := t.Incident
		if t.FlagRemoteError(note) {
			out.Note = note
			return !wasIncident
		}
	}
	return false
}

// ReconcileReport counts what one pass did.
type ReconcileReport struct {
	Checked    int // records looked at (and claimed)
	Succeeded  int // moved to success on the carrier's word
	Retried    int // top-up sent again with the same external_transaction_id
	Exhausted  int // unavailable with no retry left, marked retries_exhausted_at: an operator must decide
	Unresolved int // the carrier could not be asked, or a retry did not succeed
}

// Reconcile runs one pass of the reconciler (package doc, "Reconciler"): it claims each stale
// record, asks the carrier about it first, and makes it success on a remote SUCCESS or sends
// it again, with the same external_transaction_id, on a remote ERROR.
func (s *Service) Reconcile(ctx context.Context) (ReconcileReport, error) {
	var rep ReconcileReport
	now := s.now()
	cands, err := s.store.stale(ctx, now, now.Add(-s.cfg.Reconcile.PendingAfter), now.Add(-s.cfg.Reconcile.RetryAfter), s.cfg.Reconcile.Batch)
	if err != nil {
		return rep, err
	}
	var errs []error
	for i := range cands {
		if ctx.Err() != nil {
			break
		}
		if err := s.reconcileOne(ctx, &cands[i], &rep); err != nil {
			errs = append(errs, fmt.Errorf("transaction %s: %w", cands[i].ID, err))
		}
	}
	if err := s.store.Purge(ctx, now, s.cfg.ThrottleWindow); err != nil {
		errs = append(errs, err)
	}
	return rep, errors.Join(errs...)
}

// Purge deletes the action-token uses past their expiry and the throttle hits outside the
// window, which no check reads any more. Reconcile does it at every pass; a process that runs
// no reconciler calls it itself.
func (s *Service) Purge(ctx context.Context) error {
	return s.store.Purge(ctx, s.now(), s.cfg.ThrottleWindow)
}

func (s *Service) reconcileOne(ctx context.Context, seen *Transaction, rep *ReconcileReport) error {
	// The claim: the record is still as the selection read it, and its updated_at moves, so
	// that no other instance (nor the next pass) takes it meanwhile.
	claimed, err := s.store.Update(ctx, seen.ID, func(t *Transaction) (Settlement, error) {
		if t.Status != seen.Status || !t.UpdatedAt.Equal(seen.UpdatedAt) {
			return Settlement{}, ErrConflict
		}
		t.UpdatedAt = dbTime(s.now())
		t.LastReconciledAt = bun.NullTime{Time: t.UpdatedAt}
		t.ReconcileLeaseUntil = bun.NullTime{Time: t.UpdatedAt.Add(s.cfg.Reconcile.Lease)}
		return Settlement{Save: true}, nil
	})
	if errors.Is(err, ErrConflict) {
		return nil // another instance, or the record's own top-up, got there first
	} else if err != nil {
		return err
	}
	rep.Checked++
	res, callErr := s.carrier.QueryRecharge(ctx, carrier.QueryRequest{ExternalTransactionID: claimed.ExternalTransactionID, OfferID: claimed.OfferID})
	outcome := callStatus(callErr)
	reply := replyOf(res, callErr)
	call := callOf(claimed.ID, res, outcome, reply.Diagnostic, s.now())
	// ours: nobody moved the record since the claim. When someone did, the answer is only
	// audited.
	ours := func(t *Transaction) bool { return t.Status == claimed.Status && t.UpdatedAt.Equal(claimed.UpdatedAt) }

	switch outcome {
	case StatusSuccess:
		succeeded := false
		_, err := s.store.Update(ctx, claimed.ID, func(t *Transaction) (Settlement, error) {
			if !ours(t) {
				return Settlement{Call: call}, nil
			}
			if _, err := t.ConfirmRemoteSuccess(reply, false); err != nil {
				return Settlement{}, err
			}
			t.UpdatedAt = dbTime(s.now())
			succeeded = true
			return Settlement{Save: true, Call: call, Notice: s.notice(t)}, nil
		})
		if err == nil && succeeded {
			rep.Succeeded++
		}
		return err

	case StatusFailed:
		// The carrier does not know the top-up: only now is it sent again, with the same
		// external_transaction_id (the rule in doc.go, "Reconciler"; an issue requires it).
		send, exhausted := false, false
		rec, err := s.store.Update(ctx, claimed.ID, func(t *Transaction) (Settlement, error) {
			st := Settlement{Call: call}
			switch {
			case !ours(t):
			case t.Status != StatusUnavailable:
				send = true // an abandoned pending record is sent as it is
			case s.cfg.Reconcile.MaxRetries < 0 || t.RetryCount > s.cfg.Reconcile.MaxRetries:
				// The last send was asked about (a late success of it would have been
				// SUCCESS above) and the carrier does not have it: give up, so that the
				// record leaves the selection instead of being queried every pass forever.
				t.RetriesExhaustedAt = bun.NullTime{Time: dbTime(s.now())}
				st.Save, exhausted = true, true
			default:
				if err := t.Retry(); err != nil {
					return Settlement{}, err
				}
				t.UpdatedAt = dbTime(s.now())
				st.Save, send = true, true
			}
			return st, nil
		})
		if err != nil {
			return err
		}
		if exhausted {
			rep.Exhausted++
			s.log.WarnContext(ctx, "topup: unavailable top-up has no retry left and the carrier does not have it; an operator must reconcile it",
				"transaction_id", claimed.ID, "external_transaction_id", claimed.ExternalTransactionID, "retry_count", claimed.RetryCount)
		}
		if !send {
			return nil
		}
		rep.Retried++
		done, err := s.execute(ctx, rec)
		var ce *CarrierError
		switch {
		case errors.As(err, &ce):
			rep.Unresolved++
			return nil
		case err != nil:
			return err
		case done.Status == StatusSuccess:
			rep.Succeeded++
		}
		return nil

	default:
		rep.Unresolved++
		s.log.WarnContext(ctx, "topup: reconciler could not ask the carrier", "transaction_id", claimed.ID, "error", callErr)
		_, err := s.store.Update(ctx, claimed.ID, func(*Transaction) (Settlement, error) {
			return Settlement{Call: call}, nil
		})
		return err
	}
}

// ReconcileBacklog counts what waits for the reconciler (pending records untouched for
// PendingAfter, unavailable ones with retries left) and what it gave up on, in one query, for
// the service's metrics. OldestAge is how long ago, by the service's clock, the oldest waiting
// record was created; 0 when none waits.
func (s *Service) ReconcileBacklog(ctx context.Context) (b Backlog, oldestAge time.Duration, err error) {
	now := s.now()
	b, err = s.store.backlog(ctx, now.Add(-s.cfg.Reconcile.PendingAfter))
	if err != nil || b.Oldest.IsZero() {
		return b, 0, err
	}
	return b, max(now.Sub(b.Oldest), 0), nil
}

// Run calls Reconcile every Interval until ctx ends. Several instances may run it on one
// database: each record is claimed by exactly one of them.
func (s *Service) Run(ctx context.Context) {
	tick := time.NewTicker(s.cfg.Reconcile.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rep, err := s.Reconcile(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.ErrorContext(ctx, "topup: reconciler pass", "error", err)
		}
		if rep.Checked > 0 {
			s.log.InfoContext(ctx, "topup: reconciler pass", "checked", rep.Checked, "succeeded", rep.Succeeded,
				"retried", rep.Retried, "exhausted", rep.Exhausted, "unresolved", rep.Unresolved)
		}
	}
}
