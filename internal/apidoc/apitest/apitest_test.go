package apitest_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/internal/apidoc/apitest"
)

func contract(t *testing.T) *apitest.Contract {
	raw, err := os.ReadFile("../testdata/petstore.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return apitest.MustLoad(t, raw)
}

func request(t *testing.T, method, path string) *http.Request {
	r, err := http.NewRequest(method, "http://127.0.0.1:1"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer x.y.z")
	return r
}

func answer(status int, body string) apitest.Answer {
	return apitest.Answer{Status: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(body)}
}

// Check accepts an exchange that follows the document and refuses each kind of drift, among them
// a renamed answer field.
func TestCheck(t *testing.T) {
	c := contract(t)
	tests := []struct {
		name         string
		method, path string
		reqBody      string
		ans          apitest.Answer
		wantErr      string // "" = conforms
	}{
		{"conforming create", "POST", "/things", `{"name":"a"}`, answer(201, `{"id":"1","name":"a","extra":true}`), ""},
		{"conforming read, trailing slash", "GET", "/things/7/", "", answer(200, `{"id":"7","name":"a"}`), ""},
		{"renamed answer field", "GET", "/things/7", "", answer(200, `{"identifier":"7","name":"a"}`), "missing property 'id'"},
		{"answer field of another type", "GET", "/things/7", "", answer(200, `{"id":7,"name":"a"}`), "id"},
		{"undocumented status", "GET", "/things/7", "", answer(500, `{"status":"error","statusCode":500,"message":"x"}`), "status is not supported"},
		{"error outside the envelope", "GET", "/things/7", "", answer(404, `{"error":"not found"}`), "status"},
		{"invalid request refused with a documented 400", "POST", "/things", `{"name":""}`, answer(400, `{"status":"error","statusCode":400,"message":"Validation failed","errors":["name is required"]}`), ""},
		{"invalid request accepted", "POST", "/things", `{"name":"far too long a name"}`, answer(201, `{"id":"1","name":"x"}`), "the document refuses the request but the service answered 201"},
		{"invalid request failing the service", "POST", "/things", `{"name":""}`, answer(500, `{"status":"error","statusCode":500,"message":"x"}`), "the document refuses the request but the service answered 500"},
		{"secured route served without credentials", "GET", "/things/7 no-auth", "", answer(200, `{"id":"7","name":"a"}`), "the document refuses the request but the service answered 200"},
		{"secured route refusing a request without credentials", "GET", "/things/7 no-auth", "", answer(404, `{"status":"error","statusCode":404,"message":"x"}`), ""},
		{"undocumented operation answered", "DELETE", "/things/7", "", answer(204, ``), "the document has no such operation"},
		{"unknown route answered 404", "GET", "/nothing", "", answer(404, `{}`), ""},
		{"unknown route answered 200", "GET", "/nothing", "", answer(200, `{}`), "the document has no such operation"},
		{"index", "GET", "/", "", apitest.Answer{Status: 200, Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, Body: []byte("<html></html>")}, ""},
		{"number beyond float64 against a bounded schema", "POST", "/things", `{"name":"a","size":1e999999999}`, answer(400, `{"status":"error","statusCode":400,"message":"x"}`), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, noAuth := strings.CutSuffix(tc.path, " no-auth")
			req := request(t, tc.method, path)
			if noAuth {
				req.Header.Del("Authorization")
			}
			err := c.Check(req, []byte(tc.reqBody), tc.ans)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("conforming exchange refused: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatal("drift not caught")
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("error %q does not say %q", err, tc.wantErr)
			}
		})
	}
}

func TestRouteDiff(t *testing.T) {
	c := contract(t)
	app := fiber.New()
	h := func(c *fiber.Ctx) error { return nil }
	app.Get("/", h)
	app.Post("/things/", h)
	app.Get("/things/:id", h)
	app.Get("/debug/pprof/x", h)
	if err := c.RouteDiff(app, "/debug/pprof"); err != nil {
		t.Fatalf("router and document agree, got: %v", err)
	}
	app.Put("/things/:id", h)
	app2 := fiber.New()
	app2.Post("/things", h)
	for name, tc := range map[string]struct {
		app  *fiber.App
		want string
	}{
		"served but not documented": {app, "served but not documented: PUT /things/{id}"},
		"documented but not served": {app2, "documented but not served: GET /things/{id}"},
	} {
		t.Run(name, func(t *testing.T) {
			err := c.RouteDiff(tc.app, "/debug/pprof")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("RouteDiff = %v, want %q", err, tc.want)
			}
		})
	}
}
