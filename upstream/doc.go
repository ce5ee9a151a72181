// Package upstream is the error interface shared by the SDKs of the external systems
// (creditsystem, carrier, erp), modelled on aws/smithy-go's OperationError and APIError:
// a caller maps the kind of a failure, not the type of each SDK's error.
//
// Every error an SDK call returns for a failed upstream call implements Error. What its
// Kind means for a money-moving operation:
//
//   - Rejected, Fault: the upstream did not apply it.
//   - OutcomeUnknown: it may have been applied. Never repeat it automatically; reconcile it
//     (query the upstream) instead.
//   - NotSent: it was not applied, and repeating it is safe.
//
// Errors refused before any call (each SDK's ErrInvalidRequest) are plain sentinels, not
// Errors: KindOf gives 0 for them, as for any error that holds no Error.
//
// Timeout is independent of the kind: a call that ran out of time is normally
// OutcomeUnknown, but a dial that timed out is NotSent. Each SDK's IsTimeout is IsTimeout.
package upstream
