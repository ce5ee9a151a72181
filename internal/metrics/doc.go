// Package metrics records the latency and the outcome of the services' calls to upstream
// systems (creditsystem, carrier SPR, ERP) with Prometheus.
//
// Construct one http.RoundTripper per upstream with [Transport] and give it to the SDK client as
// its HTTP client's transport:
//
//	reg := prometheus.NewRegistry() // the one passed to httpx.Config.Registry, served at /metrics
//	hc := &http.Client{Transport: metrics.Transport(nil, "creditsystem",
//		metrics.OperationFrom(creditsystem.OperationFromContext), reg)}
//
// Metrics (labels upstream, operation, outcome):
//
//   - upstream_requests_total, a counter;
//   - upstream_request_duration_seconds, a histogram with buckets up to 60 s (upstream timeouts
//     are 30 s by default).
//
// # Outcome: the business result
//
// outcome is what the call came to, in five values whatever the upstream:
//
//   - ok: the upstream answered and did what was asked;
//   - rejected: it answered and refused (creditsystem lError or nNumeroError 2, carrier
//     STATUS=ERROR or a non-zero ID_CODIGO, ERP error_api or a 4xx);
//   - fault: it answered but failed (a SOAP fault, a 5xx, an answer the SDK could not read);
//   - timeout: no complete answer before the deadline (the context's, http.Client.Timeout or
//     a network timeout), before the answer or while reading it;
//   - unreachable: no answer for another reason (refused, reset, DNS, TLS, dropped, cancelled).
//
// The upstreams put their business refusals in the body of an HTTP 200, which a RoundTripper
// cannot read without decoding three protocols. The SDK does decode them, so the business
// result is taken where it is known: each SDK method starts its call with upstream.StartCall
// and reports the error it returns (the upstream.Error kinds every SDK shares); the transport,
// when the exchange ends, asks for that report with upstream.OnResult and records the
// exchange once the SDK has interpreted the answer ([Transport] keeps the exchange's latency;
// only the label waits). A request that belongs to no SDK call (the carrier's OAuth2 token
// request, any other client) is labelled from its HTTP status: below 400 ok, 4xx rejected, 5xx
// fault.
//
// Other seams were weighed. Counters in the domain services would need one line at each of
// their many call sites, would miss the calls made elsewhere (the reversal pass, the
// reconciler's queries, the inventory) and would leave outcome="ok" on the transport's series
// for a refusal; a second metric beside this one would count the same calls twice under two
// vocabularies. The report travels in the request's context, which is what the SDKs already
// use to name the operation (OperationFromContext), and needs nothing from this package in the
// SDKs (they import only upstream).
//
// An exchange whose SDK call is never reported records nothing; every exported SDK method that
// calls its upstream reports, by a deferred call. A caller that never closes a response body
// records nothing either, which is also a connection leak.
//
// # Labels
//
// The operation comes from a function of the request, normally an SDK's OperationFromContext;
// when it is missing or empty the label is "unknown". Operations are a small fixed set per SDK
// and outcomes the five above, so the label cardinality stays bounded (no ids, no codes).
// Several transports can share one registerer: the first call registers the collectors and
// later calls reuse them. The transport adds no timeout of its own: deadlines come from the
// SDK's configuration.
//
// The business series of each service (top-ups by final status, records waiting for the
// reconciler, credit operations with an unknown outcome, notification jobs waiting) are the
// services' own, in services/*/server.go; docs/operations.md lists every metric with example
// alerts.
package metrics
