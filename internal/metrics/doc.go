// Package metrics records the latency and outcome of the services' calls to upstream systems
// (creditsystem, carrier SPR, ERP) with Prometheus.
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
// outcome is ok (status < 400), http_error (status >= 400; WCF SOAP faults arrive as HTTP 500),
// timeout (context deadline or network timeout, before the answer or while reading it) or error
// (refused, reset, cancelled, ...). The latency is measured until the response body reaches EOF or
// is closed, so it includes a slow body; a caller that never closes a body records nothing, which
// is also a connection leak.
//
// The operation comes from a function of the request, normally an SDK's OperationFromContext;
// when it is missing or empty the label is "unknown". Operations are a small fixed set per SDK, so
// the label cardinality stays bounded. Several transports can share one registerer: the first
// call registers the collectors and later calls reuse them. The transport adds no timeout of its
// own: deadlines come from the SDK's configuration.
package metrics
