package httpx_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/internal/httpx"
	"github.com/platform/integrations/upstream"
)

// sdkError is an upstream.Error of a given kind, as the SDKs return.
type sdkError struct{ kind upstream.Kind }

func (e sdkError) Error() string        { return "sdk: " + e.kind.String() }
func (e sdkError) Operation() string    { return "GrabarAutorizacion" }
func (e sdkError) Kind() upstream.Kind  { return e.kind }
func (e sdkError) ErrorCode() string    { return "51" }
func (e sdkError) ErrorMessage() string { return "Cupo insuficiente" }
func (e sdkError) Timeout() bool        { return false }

// TestRequestLogLevels: the request log says ERROR for what needs a look on our side (a 5xx of
// ours, an upstream fault or an upstream that cannot be reached) and WARN for an upstream
// business rejection answered 502: the upstream worked and said no, nothing is broken.
func TestRequestLogLevels(t *testing.T) {
	upstreamAnswer := func(err error) *httpx.Error {
		if ue, ok := upstream.As(err); ok {
			return httpx.UpstreamError(http.StatusBadGateway, httpx.UpstreamMessage{Message: "The creditsystem said no",
				UpstreamMessage: ue.ErrorMessage(), Operation: ue.Operation(), UpstreamCode: ue.ErrorCode()}, err)
		}
		return nil
	}
	tests := []struct {
		name   string
		err    error
		status int
		level  string
	}{
		{"business rejection", sdkError{upstream.Rejected}, http.StatusBadGateway, "WARN"},
		{"business rejection wrapped by the domain", errors.Join(errors.New("consumption: autorizacion"), sdkError{upstream.Rejected}), http.StatusBadGateway, "WARN"},
		{"SOAP fault", sdkError{upstream.Fault}, http.StatusBadGateway, "ERROR"},
		{"upstream not reached", sdkError{upstream.NotSent}, http.StatusBadGateway, "ERROR"},
		{"our own failure", errors.New("boom"), http.StatusInternalServerError, "ERROR"},
		{"a client error", httpx.NewError(http.StatusNotFound, "no such thing"), http.StatusNotFound, "INFO"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			app := httpx.New(httpx.Config{Service: "test", Logger: httpx.NewLogger(&logs, true, slog.LevelDebug), ErrorMapper: upstreamAnswer})
			app.Get("/call", func(*fiber.Ctx) error { return tt.err })
			resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/call", nil))
			if err != nil || resp.StatusCode != tt.status {
				t.Fatalf("GET /call: %v %v, want %d", resp, err, tt.status)
			}
			var line struct {
				Level  string `json:"level"`
				Msg    string `json:"msg"`
				Status int    `json:"status"`
				Error  string `json:"error"`
			}
			if err := json.Unmarshal(logs.Bytes(), &line); err != nil || line.Msg != "request" {
				t.Fatalf("log %q: %v", logs.String(), err)
			}
			if line.Level != tt.level || line.Status != tt.status {
				t.Errorf("request logged at %s with status %d, want %s", line.Level, line.Status, tt.level)
			}
			if tt.status >= 500 && line.Error == "" {
				t.Errorf("the cause of a %d is not logged: %s", tt.status, logs.String())
			}
		})
	}
}
