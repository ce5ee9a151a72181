package httpx

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/pprof"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultBodyLimit is the request body limit when Config.BodyLimit is zero (1 MiB).
const DefaultBodyLimit = 1 << 20

// DefaultHealthTimeout bounds the database ping of GET /up.
const DefaultHealthTimeout = 2 * time.Second

// HeaderRequestID is the request id header, read from the request and set on every response.
const HeaderRequestID = "X-Request-Id"

// Pinger is what GET /up asks; *bun.DB and *sql.DB satisfy it.
type Pinger interface {
	PingContext(ctx context.Context) error
}

// Config configures New.
type Config struct {
	// Service names the service in logs and as the "service" label of the metrics.
	Service string
	// Logger receives one line per request; nil discards.
	Logger *slog.Logger
	// BodyLimit is the largest request body in bytes; 0 means DefaultBodyLimit.
	BodyLimit int
	// Health is pinged by GET /up; nil means /up answers 200 without a check.
	Health Pinger
	// HealthTimeout bounds the ping; 0 means DefaultHealthTimeout.
	HealthTimeout time.Duration
	// ErrorMapper is the service's one function from domain and SDK errors to *Error; it returns
	// nil for an error it does not know.
	ErrorMapper func(error) *Error
	// Registry receives the HTTP metrics and is served at GET /metrics; nil creates one. Pass your
	// own to register more collectors (for example metrics.Transport) on the same endpoint.
	Registry *prometheus.Registry
	// RequestTimeout is the deadline of every request's context (the database work before an
	// upstream call); 0 means none. An error that is that deadline is a 503.
	RequestTimeout time.Duration
	// Pprof serves net/http/pprof under /debug/pprof/ (DEBUG_PPROF, development only).
	Pprof bool
	// CORSOrigins are the origins browsers may call the API from (CORS_ALLOWED_ORIGINS); empty
	// means no CORS headers and preflights answered like any unknown route.
	CORSOrigins []string
}

// Locals keys.
const localsRequestID = "httpx.request_id"

// routeUnmatched labels requests no route answered, so raw paths never become metric labels.
const routeUnmatched = "unmatched"

// New returns a Fiber app with the plumbing both services share: error envelope, request id,
// request log, metrics, panic recovery, body limit, GET /up and GET /metrics. Mount the service's
// routes on it afterwards.
func New(cfg Config) *fiber.App {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = DefaultBodyLimit
	}
	if cfg.HealthTimeout <= 0 {
		cfg.HealthTimeout = DefaultHealthTimeout
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
		cfg.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m := newHTTPMetrics(cfg.Service, cfg.Registry)
	app := fiber.New(fiber.Config{
		AppName:               cfg.Service,
		BodyLimit:             cfg.BodyLimit,
		ErrorHandler:          errorHandler(cfg.ErrorMapper, cfg.Logger, m),
		DisableStartupMessage: true,
		// Handlers may keep strings from the request (params, headers) past the handler, for
		// example in a record written later; fasthttp would otherwise reuse their bytes.
		Immutable: true,
		// Bodies are JSON whatever their Content-Type (Bind); fasthttp must not parse a
		// multipart body first and answer its own error.
		DisablePreParseMultipartForm: true,
		ReadTimeout:                  30 * time.Second,
		IdleTimeout:                  120 * time.Second,
	})
	if cfg.Pprof {
		app.Use(pprof.New())
	}
	app.Use(requestID, observe(cfg.Logger, m), recoverer, noNULInURL, identityBodyOnly, deadline(cfg.RequestTimeout))
	if len(cfg.CORSOrigins) > 0 {
		app.Use(corsHandler(cfg.CORSOrigins))
	}
	app.Get("/up", health(cfg.Health, cfg.HealthTimeout))
	app.Get("/metrics", adaptor.HTTPHandler(promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{Registry: cfg.Registry})))
	return app
}

// deadline gives the request's context its deadline.
func deadline(d time.Duration) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if d <= 0 {
			return c.Next()
		}
		ctx, cancel := context.WithTimeout(c.UserContext(), d)
		defer cancel()
		c.SetUserContext(ctx)
		return c.Next()
	}
}

// RequestID returns the request's id (from X-Request-Id or generated).
func RequestID(c *fiber.Ctx) string {
	id, _ := c.Locals(localsRequestID).(string)
	return id
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		// Printable ASCII without spaces: the id goes into logs and headers as is.
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// ensureRequestID sets the request id once: the caller's when it is sane, else a new UUID.
func ensureRequestID(c *fiber.Ctx) string {
	if id := RequestID(c); id != "" {
		return id
	}
	id := c.Get(HeaderRequestID)
	if !validRequestID(id) {
		id = uuid.NewString()
	}
	c.Locals(localsRequestID, id)
	c.Set(HeaderRequestID, id)
	return id
}

func requestID(c *fiber.Ctx) error {
	ensureRequestID(c)
	return c.Next()
}

// noNULInURL refuses a request whose path or query holds an encoded NUL (%00) with a 400, as Bind
// does for bodies: no stored identifier holds NUL, and on its way to the database bun drops it on
// PostgreSQL while SQLite cuts the text at it, so /clients/K%001 would find K1 on one engine only.
func noNULInURL(c *fiber.Ctx) error {
	if bytes.Contains(c.Request().RequestURI(), []byte("%00")) {
		return ValidationError("request URL must not contain the NUL character (%00)")
	}
	return c.Next()
}

// identityBodyOnly refuses a compressed request body with 415. Fiber's Ctx.Body inflates a body
// sent with Content-Encoding without any bound, so a 300 KB gzip body became 300 MB in memory
// past the body limit; no caller of these services compresses its requests.
func identityBodyOnly(c *fiber.Ctx) error {
	enc := strings.TrimSpace(c.Get(fiber.HeaderContentEncoding))
	if enc == "" || strings.EqualFold(enc, "identity") || len(c.Request().Body()) == 0 {
		return c.Next()
	}
	return NewError(http.StatusUnsupportedMediaType, "Content-Encoding is not supported: send the body uncompressed")
}

func recoverer(c *fiber.Ctx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &panicError{value: r, stack: debug.Stack()}
		}
	}()
	return c.Next()
}

// observe answers errors through the error handler itself, so it logs and counts the final status.
func observe(log *slog.Logger, m *httpMetrics) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		self := c.Route()
		err := c.Next()
		if err != nil {
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				_ = c.SendStatus(http.StatusInternalServerError)
			}
		}
		elapsed := time.Since(start)
		status := c.Response().StatusCode()
		route := routeLabel(c.Route().Path)
		if c.Route() == self {
			route = routeUnmatched
		}
		method := c.Method()
		m.observe(route, method, status, elapsed)

		level := requestLevel(route, status, err)
		ctx := c.UserContext()
		if !log.Enabled(ctx, level) {
			return nil
		}
		attrs := []slog.Attr{
			slog.String("request_id", RequestID(c)),
			slog.String("method", method),
			slog.String("route", route),
			slog.String("path", c.Path()),
			slog.Int("status", status),
			slog.Duration("latency", elapsed),
		}
		if err != nil && status >= 500 {
			attrs = append(attrs, slog.String("error", err.Error()))
			if pe, ok := err.(*panicError); ok {
				attrs = append(attrs, slog.String("stack", string(pe.stack)))
			}
		}
		log.LogAttrs(ctx, level, "request", attrs...)
		return nil
	}
}

func health(p Pinger, timeout time.Duration) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if p != nil {
			ctx, cancel := context.WithTimeout(c.UserContext(), timeout)
			defer cancel()
			if err := p.PingContext(ctx); err != nil {
				return WrapError(http.StatusServiceUnavailable, "database unavailable", err)
			}
		}
		return c.JSON(fiber.Map{"status": "ok"})
	}
}

type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(service string, reg prometheus.Registerer) *httpMetrics {
	labels := []string{"route", "method", "status"}
	constLabels := prometheus.Labels{"service": service}
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "http_requests_total",
			Help:        "HTTP requests answered, by route template, method and status.",
			ConstLabels: constLabels,
		}, labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "http_request_duration_seconds",
			Help:        "HTTP request latency, by route template, method and status.",
			ConstLabels: constLabels,
			Buckets:     []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, labels),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

func (m *httpMetrics) observe(route, method string, status int, d time.Duration) {
	s := strconv.Itoa(status)
	m.requests.WithLabelValues(route, method, s).Inc()
	m.duration.WithLabelValues(route, method, s).Observe(d.Seconds())
}
