package creditsystem_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"testing"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
)

// FuzzDecodeAnswer feeds arbitrary answers to every operation through the whole client
// (gowsdl's decoder, the post-processed types, fault and business checks): no input may
// panic, and every outcome is a result or one of the three error kinds. The seed corpus in
// testdata/fuzz/FuzzDecodeAnswer holds answers of the fake (success, business error, fault,
// xsi:nil) for each operation.
func FuzzDecodeAnswer(f *testing.F) {
	f.Add(uint8(0), 200, []byte(`<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body/></s:Envelope>`))
	f.Fuzz(func(t *testing.T, op uint8, status int, body []byte) {
		if status < 100 || status > 599 {
			status = 200
		}
		tc := operations[int(op)%len(operations)]
		hc := &http.Client{Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			_, _ = io.Copy(io.Discard, r.Body)
			return &http.Response{
				StatusCode: status, Header: http.Header{"Content-Type": {"text/xml; charset=utf-8"}},
				Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: r,
			}, nil
		})}
		cfg := creditsystemtest.DevConfig()
		cfg.CarteraURL, cfg.CentralURL = "http://creditsystem.invalid/cartera", "http://creditsystem.invalid/central"
		c, err := creditsystem.New(cfg, creditsystem.WithHTTPClient(hc))
		if err != nil {
			t.Fatal(err)
		}
		res, err := tc.call(context.Background(), c, prepared{autorizacion: "AUT0000001", numeroOperacion: 1})
		if err != nil {
			var be *creditsystem.Error
			var fe *creditsystem.FaultError
			if !errors.As(err, &be) && !errors.As(err, &fe) && !creditsystem.IsTransport(err) {
				t.Fatalf("error of no known kind: %T %v", err, err)
			}
			return
		}
		if reflect.ValueOf(res).IsNil() {
			t.Fatal("nil result without an error")
		}
		sameJSON(t, rawOf(t, res))
	})
}

// sameJSON fails unless raw marshals to what json.Marshal writes for the result it holds.
func sameJSON(t *testing.T, raw creditsystem.RawAnswer) {
	t.Helper()
	want, err := json.Marshal(creditsystem.RawResult(raw))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := raw.MarshalJSON(); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Raw marshals to\n%s, %v; json.Marshal of its result to\n%s", got, err, want)
	}
}
