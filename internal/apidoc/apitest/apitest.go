// Package apitest checks a service's HTTP traffic and router against its OpenAPI document.
//
// A service's test harness loads the document once with [Load] and sends its requests through
// [Contract.Transport]; every request and answer is then validated with kin-openapi
// (openapi3filter, JSON Schema 2020-12 for a 3.1 document):
//
//   - the answer's status must be documented for the operation, and its headers and body must
//     match; an answer to a path and method the document does not have is accepted only as 404
//     or 405 (nothing is served there);
//   - a request the document refuses must be refused by the service with a 4xx: a service that
//     accepts what its contract forbids has drifted from it, one that fails on it (5xx) has a
//     bug. Tests send invalid requests on
//     purpose; those pass when the service answers them with a documented 4xx.
//
// [Contract.CheckRoutes] compares the routes a Fiber router serves with the document's paths.
// CORS preflights (OPTIONS with Access-Control-Request-Method) are the CORS middleware's and are
// not checked.
package apitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/gofiber/fiber/v2"
)

func init() {
	// Bodies the documents declare as plain text beside JSON.
	text := func(r io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		b, err := io.ReadAll(r)
		return string(b), err
	}
	for _, ct := range []string{"text/html", "application/yaml", "application/javascript"} {
		openapi3filter.RegisterBodyDecoder(ct, text)
	}
}

// Contract is a loaded, validated OpenAPI document.
type Contract struct {
	doc *openapi3.T
}

// Load parses and validates an OpenAPI 3.1 document.
func Load(yamlDoc []byte) (*Contract, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(yamlDoc)
	if err != nil {
		return nil, fmt.Errorf("apitest: parse: %w", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		return nil, fmt.Errorf("apitest: document is OpenAPI %s, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("apitest: invalid document: %w", err)
	}
	return &Contract{doc: doc}, nil
}

// MustLoad is Load for tests: it fails t on an error.
func MustLoad(t testing.TB, yamlDoc []byte) *Contract {
	t.Helper()
	c, err := Load(yamlDoc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Answer is a response as seen by Check.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Check validates one exchange. req's body, if any, must be readable again (GetBody or a
// bytes reader); Check does not consume the caller's copy.
func (c *Contract) Check(req *http.Request, reqBody []byte, ans Answer) error {
	if req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") != "" {
		return nil
	}
	route, params := c.find(req.Method, req.URL.Path)
	if route == nil {
		if ans.Status == http.StatusNotFound || ans.Status == http.StatusMethodNotAllowed {
			return nil
		}
		return fmt.Errorf("%s %s answered %d but the document has no such operation", req.Method, req.URL.Path, ans.Status)
	}
	r := req.Clone(context.Background())
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	in := &openapi3filter.RequestValidationInput{
		Request:    r,
		PathParams: params,
		Route:      route,
		Options: &openapi3filter.Options{
			AuthenticationFunc: credentialsPresent,
			MultiError:         true,
		},
	}
	reqErr := safe(func() error { return openapi3filter.ValidateRequest(context.Background(), in) })
	// Bad input is a 4xx: a request the document refuses must not be served, nor fail the
	// service (5xx).
	if reqErr != nil && (ans.Status < 400 || ans.Status >= 500) {
		return fmt.Errorf("%s %s: the document refuses the request but the service answered %d: %v", req.Method, req.URL.Path, ans.Status, reqErr)
	}
	in.Request.Body = io.NopCloser(bytes.NewReader(reqBody))
	opts := &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 ans.Status,
		Header:                 ans.Header,
		Body:                   io.NopCloser(bytes.NewReader(ans.Body)),
		Options:                opts,
	}
	if err := safe(func() error { return openapi3filter.ValidateResponse(context.Background(), out) }); err != nil {
		return fmt.Errorf("%s %s answered %d %s: %w", req.Method, req.URL.Path, ans.Status, truncate(ans.Body), err)
	}
	return nil
}

// credentialsPresent meets a security requirement when the request carries its credential: a
// Bearer token in Authorization, or the API key's header. Whether the credential is right is the
// service's to decide (its tests); the contract only says a route without one must not be served.
func credentialsPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	s, h := in.SecurityScheme, in.RequestValidationInput.Request.Header
	switch {
	case s.Type == "http" && strings.EqualFold(s.Scheme, "bearer"):
		if auth := h.Get("Authorization"); len(auth) < 7 || !strings.EqualFold(auth[:7], "Bearer ") {
			return errors.New("no Bearer token")
		}
	case s.Type == "apiKey" && s.In == "header":
		if h.Get(s.Name) == "" {
			return fmt.Errorf("no %s header", s.Name)
		}
	}
	return nil
}

// safe runs a validation, turning a panic of the validator into its error: jsonschema v6 panics
// on numbers such as 1e999999999 against a bounded schema, which the tests send on purpose.
func safe(validate func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the validator panicked: %v", p)
		}
	}()
	return validate()
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// find matches a request path against the document's path templates: literal segments win over
// parameters (Fiber's order for these routers), a trailing slash is ignored (Fiber's default).
func (c *Contract) find(method, path string) (*routers.Route, map[string]string) {
	path = strings.TrimSuffix(path, "/")
	if path == "" {
		path = "/"
	}
	segs := strings.Split(path, "/")
	var best *routers.Route
	var bestParams map[string]string
	bestLiterals := -1
	for tmpl, item := range c.doc.Paths.Map() {
		op := item.GetOperation(strings.ToUpper(method))
		if method == http.MethodHead && op == nil {
			op = item.Get
		}
		if op == nil {
			continue
		}
		if tmpl == "/" || path == "/" {
			if tmpl == path {
				return &routers.Route{Spec: c.doc, Path: tmpl, PathItem: item, Method: strings.ToUpper(method), Operation: op}, map[string]string{}
			}
			continue
		}
		tsegs := strings.Split(strings.TrimSuffix(tmpl, "/"), "/")
		if len(tsegs) != len(segs) {
			continue
		}
		params := map[string]string{}
		literals := 0
		ok := true
		for i, ts := range tsegs {
			if strings.HasPrefix(ts, "{") && strings.HasSuffix(ts, "}") {
				if segs[i] == "" {
					ok = false
					break
				}
				params[ts[1:len(ts)-1]] = segs[i]
				continue
			}
			if !strings.EqualFold(ts, segs[i]) {
				ok = false
				break
			}
			literals++
		}
		if ok && literals > bestLiterals {
			best = &routers.Route{Spec: c.doc, Path: tmpl, PathItem: item, Method: strings.ToUpper(method), Operation: op}
			bestParams, bestLiterals = params, literals
		}
	}
	return best, bestParams
}

// Transport returns a RoundTripper (over base, or http.DefaultTransport when nil) that checks
// every exchange with Check and reports a violation with t.Errorf.
func (c *Contract) Transport(t testing.TB, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{t: t, c: c, base: base}
}

type transport struct {
	t    testing.TB
	c    *Contract
	base http.RoundTripper
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	resp, err := tr.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return resp, nil // the caller sees the same read error's effect: a short body
	}
	if cerr := tr.c.Check(req, reqBody, Answer{Status: resp.StatusCode, Header: resp.Header, Body: body}); cerr != nil {
		tr.t.Errorf("contract (OpenAPI document): %v", cerr)
	}
	return resp, nil
}

// Route is a method and path template, with parameters written {name}.
type Route struct{ Method, Path string }

func (r Route) String() string { return r.Method + " " + r.Path }

// Served lists the routes app serves, as the document writes them: Fiber's :name parameters
// become {name}, a trailing slash is dropped, HEAD (which Fiber adds to every GET) and
// middleware are left out. Paths under any of the skip prefixes are left out too.
func Served(app *fiber.App, skip ...string) []Route {
	seen := map[Route]bool{}
	var out []Route
	for _, r := range app.GetRoutes(true) {
		if r.Method == http.MethodHead || r.Method == "USE" {
			continue
		}
		p := r.Path
		if p != "/" {
			p = strings.TrimSuffix(p, "/")
		}
		if slices.ContainsFunc(skip, func(s string) bool { return strings.HasPrefix(p, s) }) {
			continue
		}
		segs := strings.Split(p, "/")
		for i, s := range segs {
			if strings.HasPrefix(s, ":") {
				segs[i] = "{" + strings.TrimSuffix(s[1:], "?") + "}"
			}
		}
		rt := Route{Method: r.Method, Path: strings.Join(segs, "/")}
		if !seen[rt] {
			seen[rt] = true
			out = append(out, rt)
		}
	}
	return out
}

// Documented lists the document's operations.
func (c *Contract) Documented() []Route {
	var out []Route
	for path, item := range c.doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, Route{Method: method, Path: path})
		}
	}
	return out
}

// CheckServed checks a service's document as the service serves it (the body of GET
// /openapi.json): a valid OpenAPI 3.1 document whose every operation has an operationId and a
// summary (generated clients and the docs page need them), listing exactly the routes app
// serves (CheckRoutes with skip). It returns the loaded document.
func CheckServed(t testing.TB, servedJSON []byte, app *fiber.App, skip ...string) *Contract {
	t.Helper()
	served, err := Load(servedJSON)
	if err != nil {
		t.Fatalf("served document: %v", err)
	}
	for _, op := range served.Documented() {
		o := served.doc.Paths.Find(op.Path).GetOperation(op.Method)
		if o.OperationID == "" || o.Summary == "" {
			t.Errorf("%s: operationId %q, summary %q", op, o.OperationID, o.Summary)
		}
	}
	served.CheckRoutes(t, app, skip...)
	return served
}

// CheckRoutes fails t for every route app serves that the document lacks and every documented
// operation app does not serve. skip names path prefixes left out on both sides (for example the
// profiler's /debug/pprof, served only when enabled).
func (c *Contract) CheckRoutes(t testing.TB, app *fiber.App, skip ...string) {
	t.Helper()
	if err := c.RouteDiff(app, skip...); err != nil {
		t.Error(err)
	}
}

// RouteDiff is CheckRoutes as an error.
func (c *Contract) RouteDiff(app *fiber.App, skip ...string) error {
	served := map[Route]bool{}
	for _, r := range Served(app, skip...) {
		served[r] = true
	}
	documented := map[Route]bool{}
	for _, r := range c.Documented() {
		if !slices.ContainsFunc(skip, func(s string) bool { return strings.HasPrefix(r.Path, s) }) {
			documented[r] = true
		}
	}
	var problems []string
	for r := range served {
		if !documented[r] {
			problems = append(problems, "served but not documented: "+r.String())
		}
	}
	for r := range documented {
		if !served[r] {
			problems = append(problems, "documented but not served: "+r.String())
		}
	}
	if len(problems) == 0 {
		return nil
	}
	slices.Sort(problems)
	return errors.New(strings.Join(problems, "\n"))
}
