package httpx_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/platform/integrations/internal/httpx"
)

func problems(t *testing.T, v any) []string {
	t.Helper()
	err := httpx.Validate(v)
	if err == nil {
		return nil
	}
	var he *httpx.Error
	if !errors.As(err, &he) || he.Status != http.StatusBadRequest || he.Message != httpx.ValidationMessage {
		t.Fatalf("Validate returned %v, want a 400 *httpx.Error", err)
	}
	return he.Errors
}

func TestNumericString(t *testing.T) {
	type body struct {
		Monto string `json:"monto" validate:"numeric_string"`
	}
	cases := []struct {
		in string
		ok bool
	}{
		{"100", true}, {"100.50", true}, {"0", true}, {"0.01", true}, {"-5.5", true},
		{"12345678901234567890.123456", true},
		{"", false}, {"1e3", false}, {"1E3", false}, {"+1", false}, {".5", false}, {"5.", false},
		{"1,000.00", false}, {" 1", false}, {"1 ", false}, {"NaN", false}, {"Infinity", false},
		{"0x10", false}, {"1.2.3", false}, {"-", false}, {"١٢", false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%q", tc.in), func(t *testing.T) {
			got := problems(t, body{Monto: tc.in})
			if (got == nil) != tc.ok {
				t.Errorf("numeric_string(%q) problems = %v, want ok=%v", tc.in, got, tc.ok)
			}
			if !tc.ok && (len(got) != 1 || got[0] != "monto must be a numeric string") {
				t.Errorf("message = %q", got)
			}
		})
	}
}

func TestDateYMD(t *testing.T) {
	type body struct {
		Fecha string `json:"fecha_pago" validate:"date_ymd"`
	}
	cases := []struct {
		in string
		ok bool
	}{
		{"2024-02-29", true}, {"2025-12-31", true}, {"0001-01-01", true},
		{"2023-02-29", false}, {"2024-13-01", false}, {"2024-00-10", false}, {"2024-1-5", false},
		{"24-01-05", false}, {"2024/01/05", false}, {"2024-01-05T00:00:00Z", false}, {"", false}, {"05-01-2024", false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got := problems(t, body{Fecha: tc.in})
			if (got == nil) != tc.ok {
				t.Errorf("date_ymd(%q) problems = %v, want ok=%v", tc.in, got, tc.ok)
			}
			if !tc.ok && (len(got) != 1 || got[0] != "fecha_pago must be a date in yyyy-mm-dd format") {
				t.Errorf("message = %q", got)
			}
		})
	}
}

func TestMessages(t *testing.T) {
	type inner struct {
		Codigo string `json:"codigo" validate:"required"`
	}
	type body struct {
		Nombre  string   `json:"nombre_cliente" validate:"max=5"`
		Tipo    string   `json:"external_operation" validate:"oneof=RECARGA_DATOS RECARGA_PINES"`
		Qty     int      `json:"quantity" validate:"min=1"`
		Tags    []string `json:"tags" validate:"max=1"`
		ID      string   `json:"transaction_id" validate:"uuid"`
		Nested  inner    `json:"nested"`
		Pointer *inner   `json:"pointer" validate:"required"`
		NoJSON  string   `validate:"required"`
	}
	got := problems(t, body{Nombre: "ñandú y más", Tipo: "X", Tags: []string{"a", "b"}, ID: "nope"})
	want := []string{
		"nombre_cliente must be at most 5 characters long",
		"external_operation must be one of: RECARGA_DATOS, RECARGA_PINES",
		"quantity must be at least 1",
		"tags must be a list of at most 1 items",
		"transaction_id must be a UUID",
		"nested.codigo is required",
		"pointer is required",
		"NoJSON is required",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func ExampleBind() {
	type consulta struct {
		CodigoEmpresa  string `json:"codigo_empresa" validate:"required,max=20"`
		Identificacion string `json:"identificacion" validate:"required,max=50"`
		Monto          string `json:"monto" validate:"required,numeric_string"`
	}
	app := httpx.New(httpx.Config{Service: "example"})
	app.Post("/consumo/cupo", func(c *fiber.Ctx) error {
		var req consulta
		if err := httpx.Bind(c, &req); err != nil {
			return err
		}
		return c.JSON(req)
	})
	req := httptest.NewRequest(http.MethodPost, "/consumo/cupo", strings.NewReader(`{"codigo_empresa":"000598","monto":"1e3"}`))
	req.Header.Set("Content-Type", "application/json")
	res, err := app.Test(req)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(res.Body)
	fmt.Println(res.StatusCode, string(body))
	// Output:
	// 400 {"status":"error","statusCode":400,"message":"Validation failed","errors":["identificacion is required","monto must be a numeric string"]}
}

// bindApp answers 200 with the decoded body of POST / bound into a fresh T, or Bind's error.
func bindApp[T any](t *testing.T) *fiber.App {
	t.Helper()
	app := httpx.New(httpx.Config{Service: "bind-test"})
	app.Post("/", func(c *fiber.Ctx) error {
		var dst T
		if err := httpx.Bind(c, &dst); err != nil {
			return err
		}
		return c.JSON(dst)
	})
	return app
}

// post sends body to app with the given Content-Type ("" for none) and returns the status and
// the decoded answer.
func bindPost(t *testing.T, app *fiber.App, contentType, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	req.Header.Del("Content-Type")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := app.Test(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
		t.Fatalf("answer %d is not a JSON object: %v", res.StatusCode, err)
	}
	return res.StatusCode, m
}

// TestBindReadsJSONWhateverTheContentType: the body is JSON whatever the request declares; a
// body that is not JSON is the 400 of malformed JSON, never a 415.
func TestBindReadsJSONWhateverTheContentType(t *testing.T) {
	type body struct {
		Monto string `json:"monto" validate:"required,numeric_string"`
	}
	app := bindApp[body](t)
	contentTypes := []string{"", "application/json", "application/json; charset=utf-8", "text/plain",
		"application/x-www-form-urlencoded", "application/xml", "not a media type"}
	for _, ct := range contentTypes {
		t.Run(fmt.Sprintf("%q/valid JSON is decoded", ct), func(t *testing.T) {
			status, m := bindPost(t, app, ct, `{"monto":"12.50"}`)
			if status != http.StatusOK || m["monto"] != "12.50" {
				t.Fatalf("status %d, answer %v; want 200 with the decoded body", status, m)
			}
		})
		t.Run(fmt.Sprintf("%q/not JSON is 400", ct), func(t *testing.T) {
			status, m := bindPost(t, app, ct, `monto=12.50`)
			got := errorsOf(m)
			if status != http.StatusBadRequest || m["status"] != "error" || m["message"] != httpx.ValidationMessage ||
				len(got) != 1 || got[0] != "request body is not valid JSON" {
				t.Fatalf("status %d, answer %v; want 400 \"request body is not valid JSON\" in the envelope", status, m)
			}
		})
		t.Run(fmt.Sprintf("%q/JSON breaking a rule is 400", ct), func(t *testing.T) {
			status, m := bindPost(t, app, ct, `{"monto":"doce"}`)
			if got := errorsOf(m); status != http.StatusBadRequest || len(got) != 1 || got[0] != "monto must be a numeric string" {
				t.Fatalf("status %d, answer %v", status, m)
			}
		})
	}
}

// Types of TestBindNamesFullJSONPath.
type (
	pathBase struct {
		Codigo string `json:"codigo" validate:"required,max=3"`
	}
	pathLinea struct {
		Precio   string          `json:"precio" validate:"omitempty,numeric_string"`
		Cantidad int             `json:"cantidad"`
		Valor    decimal.Decimal `json:"valor"`
	}
	pathItem struct {
		Lineas []pathLinea `json:"lineas" validate:"dive"`
		Inner  *pathLinea  `json:"inner"`
	}
	pathBody struct {
		pathBase
		Named  *pathBase            `json:"named"`
		Items  []pathItem           `json:"items" validate:"dive"`
		Extra  map[string]string    `json:"extra_fields" validate:"dive,max=2"`
		Grupos map[string]pathLinea `json:"grupos" validate:"dive"`
		Matriz [][]int              `json:"matriz" validate:"dive,dive,min=1"`
	}
)

// TestBindNamesFullJSONPath: every problem names its field by the full JSON path a caller
// wrote: array indexes at every depth, map keys as members, members of embedded structs at
// the level where the JSON has them.
func TestBindNamesFullJSONPath(t *testing.T) {
	app := bindApp[pathBody](t)
	cases := []struct {
		name string
		body string
		want []string
	}{
		{"embedded struct member is top-level", `{"codigo":"ABCD"}`, []string{"codigo must be at most 3 characters long"}},
		{"embedded struct member missing", `{}`, []string{"codigo is required"}},
		{"embedded struct member mistyped", `{"codigo":1}`, []string{"codigo must be a string"}},
		{"named struct", `{"codigo":"A","named":{"codigo":"ABCD"}}`, []string{"named.codigo must be at most 3 characters long"}},
		{"rule in an array inside an array", `{"codigo":"A","items":[{},{"lineas":[{"precio":"1"},{"precio":"x"}]}]}`,
			[]string{"items[1].lineas[1].precio must be a numeric string"}},
		{"mistyped in an array inside an array", `{"codigo":"A","items":[{"lineas":[{"cantidad":1},{"cantidad":"dos"}]}]}`,
			[]string{"items[0].lineas[1].cantidad must be an integer"}},
		{"every mistyped member of one element", `{"codigo":"A","items":[{"lineas":[{"cantidad":"x"}],"inner":{"cantidad":"y"}}]}`,
			[]string{"items[0].lineas[0].cantidad must be an integer", "items[0].inner.cantidad must be an integer"}},
		{"invalid decimal deep down", `{"codigo":"A","items":[{"inner":{"valor":"doce"}}]}`,
			[]string{"items[0].inner.valor has an invalid value"}},
		{"map value rule", `{"codigo":"A","extra_fields":{"ok":"ab","x":"abc"}}`, []string{"extra_fields.x must be at most 2 characters long"}},
		{"map value mistyped", `{"codigo":"A","extra_fields":{"b":"ab","a":1,"c":true}}`,
			[]string{"extra_fields.a must be a string", "extra_fields.c must be a string"}},
		{"map key holding brackets", `{"codigo":"A","extra_fields":{"a]b[0]":"abc"}}`, []string{"extra_fields.a]b[0] must be at most 2 characters long"}},
		{"struct in a map", `{"codigo":"A","grupos":{"g1":{"precio":"x"}}}`, []string{"grupos.g1.precio must be a numeric string"}},
		{"struct in a map mistyped", `{"codigo":"A","grupos":{"g1":{"cantidad":[]}}}`, []string{"grupos.g1.cantidad must be an integer"}},
		{"array of arrays", `{"codigo":"A","matriz":[[1],[2,0]]}`, []string{"matriz[1][1] must be at least 1"}},
		{"array of arrays mistyped", `{"codigo":"A","matriz":[[1],[2,"x"]]}`, []string{"matriz[1][1] must be an integer"}},
		{"key in another case names the declared field", `{"CODIGO":"ABCD","Items":[{"Lineas":[{"PRECIO":"x"}]}]}`,
			[]string{"codigo must be at most 3 characters long", "items[0].lineas[0].precio must be a numeric string"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, m := bindPost(t, app, "application/json", tc.body)
			if got := errorsOf(m); status != http.StatusBadRequest || strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("status %d, errors\n  %q\nwant\n  %q", status, got, tc.want)
			}
		})
	}
}
