package topup

// Observer is told of the steps of a record's life that the service's metrics count, each once
// per record, after the write that made it is committed (a write that rolled back tells
// nothing). Its methods are called in the goroutine of the write: they must be quick and safe
// for concurrent use.
type Observer interface {
	// Reached: the record reached status for the first time: success, failed, unavailable,
	// rejected or ignored (pending and the legacy error are not reported). A record reaches
	// each status at most once: the reconciler's later passes through unavailable, which send
	// it again, are not reported again (the rule of the notifications: one per record and
	// kind), so a record that became unavailable and later success is reported twice, once
	// under each.
	Reached(source Source, status Status)
	// RetriesExhausted: the reconciler gave up on an unavailable record (retries_exhausted_at
	// set): a person must settle it.
	RetriesExhausted(source Source)
}

// StoreOption configures a Store.
type StoreOption func(*Store)

// WithObserver makes the Store tell o of each record's steps (Observer) as it commits them.
func WithObserver(o Observer) StoreOption { return func(s *Store) { s.observer = o } }

// observe tells the observer what the committed write from prev (nil: an insert) to next made
// of the record.
func (s *Store) observe(prev, next *Transaction) {
	if s.observer == nil || next == nil {
		return
	}
	if reached(prev, next) {
		s.observer.Reached(next.Source, next.Status)
	}
	if !next.RetriesExhaustedAt.IsZero() && (prev == nil || prev.RetriesExhaustedAt.IsZero()) {
		s.observer.RetriesExhausted(next.Source)
	}
}

// reached reports whether next holds a status that prev did not and that the record never had
// before: every status is entered once, except unavailable, whose passes retry_count counts.
func reached(prev, next *Transaction) bool {
	switch {
	case next.Status == StatusPending, next.Status == StatusError:
		return false
	case prev != nil && prev.Status == next.Status:
		return false
	case next.Status == StatusUnavailable:
		return next.RetryCount <= 1
	}
	return true
}
