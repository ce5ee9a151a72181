// Package httpx is the HTTP plumbing both services share, on Fiber v2.
//
// Construct the app with [New] and a [Config] (service name, *slog.Logger, body limit, a
// [Pinger] for the database, the service's ErrorMapper, optionally a Prometheus registry), mount
// the routes, then run it with [Serve]:
//
//	app := httpx.New(httpx.Config{Service: "credit", Logger: log, Health: db, ErrorMapper: mapErr, Registry: reg})
//	app.Post("/api/v1/credigestion/consumo/cupo", auth.Require(a, auth.Bearer), h.Cupo)
//	err := httpx.Serve(ctx, app, cfg.Addr())
//
// # Errors
//
// Every error answer is the envelope {"status":"error","statusCode":N,"message":...,"errors":[...]}
// written by one error handler. A handler returns an [*Error] (NewError, WrapError,
// ValidationError, UpstreamError) or any error; the handler resolves it in this order: an
// *Error anywhere in the chain; else the service's ErrorMapper (the one function per service that
// maps domain and SDK errors; nil for errors it does not know); else a *fiber.Error (404 unknown
// route, 405, 413...); else 500 "Internal Server Error". A 5xx never shows its cause: the cause
// (Error.Err, the panic value and stack) goes to the request log only. `errors` appears only on 400
// validation failures, whose message is then [ValidationMessage]. An upstream rejection's message
// is the [UpstreamMessage] object {message, upstreamMessage, operation, upstreamCode}. A request
// the server refuses while reading it gets a fixed message ("Malformed HTTP request" for a 400,
// else the status text), never the parser's error, which quotes the raw request and its headers.
//
// # Requests
//
//   - X-Request-Id: taken from the request when it is 1-128 printable ASCII characters without
//     spaces, else a new UUID; set on every response (errors, 404, 413 included); [RequestID].
//   - Request log: one slog line per request with request_id, method, route (the template, e.g.
//     /transactions/:id), path, status, latency; ERROR for 5xx (with the error, and the stack of a
//     panic) except WARN for a 5xx caused by an upstream business rejection (an upstream.Error of
//     kind Rejected: the upstream worked and said no; its faults and failures stay ERROR), DEBUG
//     for /up and /metrics, INFO otherwise. [NewLogger] gives JSON in production and text in
//     development.
//   - Panics are recovered into a 500 envelope.
//   - A path or query holding %00 (NUL) is a 400: no identifier holds NUL, and bun drops it on
//     PostgreSQL while SQLite cuts the text at it, so lookups would differ between engines.
//   - Bodies above Config.BodyLimit (default 1 MiB) get 413 before any handler runs. A body sent
//     with a Content-Encoding other than identity gets 415: Fiber would inflate it without bound,
//     past the limit (a 300 KB gzip body became 300 MB), and no caller compresses requests.
//   - [Bind] decodes and validates JSON bodies whatever their Content-Type (the specifications
//     answer 400 for an invalid body and name no 415; a body that is not JSON, form or multipart
//     included, is "request body is not valid JSON"); 400 for an empty body, malformed JSON,
//     several JSON values, a null body ("request body must be a JSON object"), a body holding
//     \u0000 (PostgreSQL stores NUL neither in text nor in jsonb), a wrong JSON type ("monto must
//     be a string") and each failed `validate` tag, one `errors` entry each, named by its full
//     JSON path ("items[1].cantidad must be an integer", "extra_fields.x"). Every mistyped member
//     is named; the tags of every member not at or below a mistyped one are reported beside it;
//     only the first failed tag of a field is reported. Unknown JSON fields are ignored (clients
//     may send more than a version reads). Tags added here describe the wire, not the values:
//     numeric_string (plain decimal text, [validation.PlainDecimal]) and date_ymd (a real
//     calendar date yyyy-mm-dd).
//   - [Decode] and [Invalid] are Bind for a handler whose domain validates: the 400 lists the
//     decoding problems, then the domain's *validation.Error problems of the members that
//     decoded.
//   - Query parameters: [OnlyQuery] (middleware) and [UnknownQuery] (for a handler that reports
//     it with its other problems) answer a parameter a route does not take with 400 "unknown
//     query parameter(s): statuss", so a misspelt filter is never silently ignored.
//   - CORS: Config.CORSOrigins (CORS_ALLOWED_ORIGINS) answers preflights with the API's methods
//     and headers; credentials are never allowed.
//
// # Health and metrics
//
// GET /up pings Config.Health within Config.HealthTimeout (default 2 s): 200 {"status":"ok"}, or
// 503 in the envelope ({"status":"error","statusCode":503,"message":"database unavailable"}) so
// that every non-2xx body of the services has one shape. GET /metrics serves the app's own
// registry (not the global one, so several apps can live in one process): http_requests_total
// and http_request_duration_seconds by route template (without a trailing slash: a route mounted
// at a group's root is /clients, not /clients/), method and status (label "service" constant),
// plus Go and process collectors when New creates the registry. Requests that match no route are
// labelled route="unmatched" so raw paths never become labels. /up and /metrics are
// unauthenticated; expose /metrics only on the internal network.
//
// # Timeouts and shutdown
//
// The server reads a request within 30 s and closes idle keep-alive connections after 120 s.
// [Serve] stops on context cancellation, SIGTERM or SIGINT: it stops accepting connections and
// waits up to [DefaultShutdownGrace] (35 s, above the 30 s upstream timeouts) for in-flight
// requests; [ServeListener] takes the listener and grace period explicitly, and logs when the
// drain starts. [LogListening] writes a service's one "listening" line once it has bound.
// [TuneGC], called first in each service's main, sets the garbage collector's target.
//
// The app is Immutable: strings from the request (params, headers, body) stay valid after the
// handler returns.
package httpx
