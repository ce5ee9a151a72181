package httpx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/internal/storage"
)

// ValidationMessage is the fixed message of every 400 that lists its problems in `errors`.
const ValidationMessage = "Validation failed"

// Error is an HTTP error answered in the envelope
//
//	{"status":"error","statusCode":N,"message":...,"errors":[...]}
//
// Handlers return it (or a domain error their service's ErrorMapper turns into one).
type Error struct {
	// Status is the HTTP status.
	Status int
	// Message is the envelope's message when Upstream is nil. It is shown to the client: no
	// internals, no secrets.
	Message string
	// Upstream, when set, replaces Message with the upstream-rejection object.
	Upstream *UpstreamMessage
	// Errors lists validation problems, one entry each; only on 400.
	Errors []string
	// Err is the cause, logged for 5xx and never sent.
	Err error
	// Body, when set, is sent instead of the envelope: an error answer the specification shapes
	// otherwise (a 409 naming the record that already exists, a rejection carrying a record's
	// ids).
	Body any
	// Headers are set on the answer (Retry-After of a 429).
	Headers map[string]string
}

// UpstreamMessage is the envelope's message for an upstream rejection.
type UpstreamMessage struct {
	// Message is our text, e.g. "The creditsystem rejected the authorization".
	Message string `json:"message"`
	// UpstreamMessage is the upstream's own text (cTextoError, SYSTEMMESSAGE, ...).
	UpstreamMessage string `json:"upstreamMessage"`
	// Operation is the upstream operation, e.g. "GrabarAutorizacion" or "create".
	Operation string `json:"operation"`
	// UpstreamCode is the upstream's error code as text (nNumeroError "51", faultcode "350").
	UpstreamCode string `json:"upstreamCode"`
}

// NewError returns an *Error with a client-facing message.
func NewError(status int, message string) *Error {
	return &Error{Status: status, Message: message}
}

// Errorf is NewError with a format.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

// WrapError returns an *Error that keeps err as its (logged, never sent) cause.
func WrapError(status int, message string, err error) *Error {
	return &Error{Status: status, Message: message, Err: err}
}

// ValidationError is the 400 with ValidationMessage and one entry per problem.
func ValidationError(problems ...string) *Error {
	return &Error{Status: http.StatusBadRequest, Message: ValidationMessage, Errors: problems}
}

// UpstreamError is an upstream rejection (usually 502) whose message is the upstream object.
func UpstreamError(status int, m UpstreamMessage, err error) *Error {
	return &Error{Status: status, Message: m.Message, Upstream: &m, Err: err}
}

func (e *Error) Error() string {
	msg := e.Message
	if e.Upstream != nil {
		msg = e.Upstream.Operation + ": " + e.Upstream.Message + ": " + e.Upstream.UpstreamMessage
	}
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %v", e.Status, msg, e.Err)
	}
	return fmt.Sprintf("%d %s", e.Status, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Envelope is the JSON body of every error answer.
type Envelope struct {
	Status     string   `json:"status"`
	StatusCode int      `json:"statusCode"`
	Message    any      `json:"message"`
	Errors     []string `json:"errors,omitempty"`
}

// Envelope returns the body sent for e.
func (e *Error) Envelope() Envelope {
	env := Envelope{Status: "error", StatusCode: e.Status, Message: e.Message, Errors: e.Errors}
	if e.Upstream != nil {
		env.Message = e.Upstream
	}
	return env
}

// deadlineError answers a request whose own deadline (Config.RequestTimeout) passed: the
// database work before the upstream call took too long, and nothing was sent upstream (an
// upstream call runs to its own deadline and is answered by the mapper).
func deadlineError(err error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Message: "The request could not be completed within its deadline; nothing was sent upstream. Try again.", Err: err}
}

// panicError carries a recovered panic to the error handler, which logs it and answers a plain 500.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// resolve turns any error a handler returned into the *Error to answer: an *Error as is, then the
// service's mapper, then fiber's own errors (404 route, 405, 413...), else a 500 without internals.
func resolve(err error, mapper func(error) *Error) *Error {
	var he *Error
	if errors.As(err, &he) {
		if he.Status < 400 || he.Status > 599 {
			return &Error{Status: http.StatusInternalServerError, Message: http.StatusText(http.StatusInternalServerError), Err: err}
		}
		return he
	}
	var pe *panicError
	if !errors.As(err, &pe) && mapper != nil {
		if he := mapper(err); he != nil {
			return he
		}
	}
	if errors.Is(err, context.DeadlineExceeded) || storage.IsUnavailable(err) {
		return deadlineError(err)
	}
	var fe *fiber.Error
	if errors.As(err, &fe) && fe.Code >= 400 && fe.Code < 500 {
		return &Error{Status: fe.Code, Message: fe.Message, Err: err}
	}
	if errors.As(err, &fe) && fe.Code >= 500 {
		return &Error{Status: fe.Code, Message: http.StatusText(fe.Code), Err: err}
	}
	return &Error{Status: http.StatusInternalServerError, Message: http.StatusText(http.StatusInternalServerError), Err: err}
}

func errorHandler(mapper func(error) *Error, log *slog.Logger, m *httpMetrics) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		he := resolve(err, mapper)
		// No request id yet means the server refused the request before any middleware ran
		// (body over the limit, headers too large, read timeout): log and count it here.
		outside := RequestID(c) == ""
		if outside {
			he = refused(he)
		}
		ensureRequestID(c)
		for k, v := range he.Headers {
			c.Set(k, v)
		}
		var body any = he.Envelope()
		if he.Body != nil {
			body = he.Body
		}
		if err := c.Status(he.Status).JSON(body); err != nil {
			return err
		}
		if outside {
			m.observe(routeUnmatched, c.Method(), he.Status, 0)
			log.LogAttrs(c.UserContext(), slog.LevelInfo, "request refused",
				slog.String("request_id", RequestID(c)),
				slog.String("method", c.Method()),
				slog.String("path", c.Path()),
				slog.Int("status", he.Status),
			)
		}
		return nil
	}
}

// refused gives a request the server refused while reading it a fixed message: fasthttp's parse
// errors, which Fiber passes on as a 400, quote the raw request, Authorization header included.
func refused(he *Error) *Error {
	msg := http.StatusText(he.Status)
	if he.Status == http.StatusBadRequest {
		msg = "Malformed HTTP request"
	}
	if msg == "" {
		msg = "Request refused"
	}
	return &Error{Status: he.Status, Message: msg, Err: he.Err}
}
