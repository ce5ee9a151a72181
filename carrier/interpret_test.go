package carrier

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/platform/integrations/carrier/internal/umsprot"
	"github.com/platform/integrations/upstream"
)

func identity(s string) string { return s }

func readAnswer(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "answers", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// kindOf is the upstream kind of err (0 for nil) when err is one of the
// package's error types and its kind is the one that type has, -1 otherwise.
func kindOf(err error) upstream.Kind {
	var (
		be *Error
		fe *FaultError
		te *TransportError
	)
	k := upstream.KindOf(err)
	switch {
	case err == nil:
		return 0
	case errors.As(err, &be) && k == upstream.Rejected,
		errors.As(err, &fe) && k == upstream.Fault,
		errors.As(err, &te) && (k == upstream.OutcomeUnknown || k == upstream.NotSent):
		return k
	}
	return -1
}

// TestInterpret decodes every answer shape and classifies it by the
// specification's rules: success only for STATUS=SUCCESS, ID_CODIGO=0 and no
// fault (success criterion, rule 3); STATUS=ERROR or a non-zero ID_CODIGO is a
// business error, kind Rejected (rules 1, 2, 3); a SOAP Fault, in any HTTP
// status, is kind Fault and never success (rules 1, 2), faultcode 350 being
// ErrIPNotAuthorized (rule 4); what cannot be read is a transport error, kind
// OutcomeUnknown.
func TestInterpret(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		status    int
		kind      upstream.Kind // 0: success
		code      string        // ID_CODIGO of a business error, faultcode of a fault
		is        error         // a sentinel errors.Is must find
		isNot     error         // a sentinel errors.Is must not find
		idRecarga string
		mensaje   string
	}{
		{name: "success", file: "success.xml", status: 200, idRecarga: "700000001", mensaje: "top-up applied"},
		{name: "success with ID_CODIGO 00", file: "success-code-00.xml", status: 200, idRecarga: "700000002"},
		{name: "success wrapped in a SOAP envelope", file: "success-in-soap-envelope.xml", status: 200, idRecarga: "700000004"},
		{name: "success in ISO-8859-1", file: "success-iso-8859-1.xml", status: 200, idRecarga: "700000005", mensaje: "Recarga aplicada con éxito"},
		{name: "business error (no balance)", file: "business-error.xml", status: 200, kind: upstream.Rejected, code: "1", mensaje: "no balance"},
		{name: "STATUS SUCCESS with non-zero ID_CODIGO", file: "success-with-nonzero-code.xml", status: 200, kind: upstream.Rejected, code: "7"},
		{name: "STATUS ERROR with ID_CODIGO 0", file: "error-with-zero-code.xml", status: 200, kind: upstream.Rejected, code: "0"},
		{name: "STATUS ERROR without ID_CODIGO", file: "error-without-code.xml", status: 200, kind: upstream.Rejected, code: ""},
		{name: "fault 350 in HTTP 500", file: "fault-350.xml", status: 500, kind: upstream.Fault, code: "350", is: ErrIPNotAuthorized},
		{name: "fault 350 in HTTP 200", file: "fault-350.xml", status: 200, kind: upstream.Fault, code: "350", is: ErrIPNotAuthorized},
		{name: "qualified faultcode Server.350", file: "fault-qualified-350.xml", status: 500, kind: upstream.Fault, code: "SOAP-ENV:Server.350", is: ErrIPNotAuthorized},
		{name: "server fault in HTTP 500", file: "fault-server.xml", status: 500, kind: upstream.Fault, code: "soap:Server"},
		{name: "fault after a success in one document", file: "success-then-fault.xml", status: 200, kind: upstream.Fault, code: "500"},
		{name: "fault inside exec_rsp", file: "fault-inside-exec-rsp.xml", status: 200, kind: upstream.Fault, code: "351"},
		// Outside 2xx an exec_rsp still speaks for the carrier: its business error is
		// Rejected, not a transport error; a success the HTTP status contradicts stays
		// OutcomeUnknown (reconciled); a body that is no exec_rsp keeps the HTTP error.
		{name: "business error in HTTP 500", file: "business-error.xml", status: 500, kind: upstream.Rejected, code: "1", mensaje: "no balance"},
		{name: "business error in HTTP 400", file: "business-error.xml", status: 400, kind: upstream.Rejected, code: "1", mensaje: "no balance"},
		{name: "non-zero ID_CODIGO in HTTP 503", file: "success-with-nonzero-code.xml", status: 503, kind: upstream.Rejected, code: "7"},
		{name: "STATUS ERROR without ID_CODIGO in HTTP 500", file: "error-without-code.xml", status: 500, kind: upstream.Rejected, code: ""},
		{name: "success in HTTP 500", file: "success.xml", status: 500, kind: upstream.OutcomeUnknown, is: ErrBadStatus, idRecarga: "700000001"},
		{name: "STATUS SUCCESS without ID_CODIGO in HTTP 500", file: "success-without-code.xml", status: 500, kind: upstream.OutcomeUnknown, is: ErrBadStatus, idRecarga: "700000003"},
		{name: "STATUS both SUCCESS and ERROR in HTTP 500", file: "conflicting-status.xml", status: 500, kind: upstream.OutcomeUnknown, is: ErrBadStatus},
		{name: "HTML error page in HTTP 502", file: "html-error.html", status: 502, kind: upstream.OutcomeUnknown, is: ErrBadStatus, isNot: ErrMalformedAnswer},
		{name: "truncated document in HTTP 500", file: "truncated.xml", status: 500, kind: upstream.OutcomeUnknown, is: ErrBadStatus, isNot: ErrMalformedAnswer},
		{name: "empty body in HTTP 503", file: "empty.xml", status: 503, kind: upstream.OutcomeUnknown, is: ErrBadStatus, isNot: ErrMalformedAnswer},
		{name: "HTML page in HTTP 200", file: "html-error.html", status: 200, kind: upstream.OutcomeUnknown, is: ErrMalformedAnswer},
		{name: "garbage", file: "garbage.txt", status: 200, kind: upstream.OutcomeUnknown, is: ErrMalformedAnswer},
		{name: "empty body", file: "empty.xml", status: 200, kind: upstream.OutcomeUnknown, is: ErrMalformedAnswer},
		{name: "truncated document", file: "truncated.xml", status: 200, kind: upstream.OutcomeUnknown, is: ErrMalformedAnswer},
		{name: "two exec_rsp", file: "two-exec-rsp.xml", status: 200, kind: upstream.OutcomeUnknown, is: ErrMalformedAnswer},
		{name: "no data elements", file: "no-data.xml", status: 200, kind: upstream.OutcomeUnknown, is: ErrMalformedAnswer},
		{name: "STATUS SUCCESS without ID_CODIGO", file: "success-without-code.xml", status: 200, kind: upstream.OutcomeUnknown, is: ErrMalformedAnswer, idRecarga: "700000003"},
		{name: "ID_CODIGO 0 without STATUS", file: "code-zero-without-status.xml", status: 200, kind: upstream.OutcomeUnknown, is: ErrMalformedAnswer},
		{name: "unknown STATUS", file: "unknown-status.xml", status: 200, kind: upstream.OutcomeUnknown, is: ErrMalformedAnswer},
		{name: "STATUS both SUCCESS and ERROR", file: "conflicting-status.xml", status: 200, kind: upstream.OutcomeUnknown, is: ErrMalformedAnswer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &Result{}
			_, err := interpret(FunctionTopup, tt.status, readAnswer(t, tt.file), res, identity)
			if got := kindOf(err); got != tt.kind {
				t.Fatalf("error %v is kind %v, want %v", err, got, tt.kind)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.is)
			}
			if tt.isNot != nil && errors.Is(err, tt.isNot) {
				t.Errorf("errors.Is(%v, %v) = true", err, tt.isNot)
			}
			if tt.is != ErrIPNotAuthorized && errors.Is(err, ErrIPNotAuthorized) {
				t.Errorf("%v matches ErrIPNotAuthorized", err)
			}
			switch tt.kind {
			case upstream.Rejected:
				var be *Error
				errors.As(err, &be)
				if be.Code != tt.code || be.Op != FunctionTopup {
					t.Errorf("Error = %+v, want code %q op %s", be, tt.code, FunctionTopup)
				}
				if tt.mensaje != "" && be.Message != tt.mensaje {
					t.Errorf("Error.Message = %q, want %q", be.Message, tt.mensaje)
				}
			case upstream.Fault:
				var fe *FaultError
				errors.As(err, &fe)
				if fe.Code != tt.code || fe.HTTPStatus != tt.status || fe.String == "" {
					t.Errorf("FaultError = %+v, want code %q in HTTP %d", fe, tt.code, tt.status)
				}
				if res.ResultCode != tt.code {
					t.Errorf("Result.ResultCode = %q, want the faultcode %q", res.ResultCode, tt.code)
				}
			case 0:
				if res.Status != StatusSuccess || res.ResultCode != "0" || res.Diagnostic != "OK" {
					t.Errorf("Result = %+v", res)
				}
			}
			if tt.kind != upstream.Fault && errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%v looks like a timeout", err)
			}
			if res.IDRecarga != tt.idRecarga {
				t.Errorf("IDRecarga = %q, want %q", res.IDRecarga, tt.idRecarga)
			}
			if tt.kind == 0 && tt.mensaje != "" && res.Mensaje != tt.mensaje {
				t.Errorf("Mensaje = %q, want %q", res.Mensaje, tt.mensaje)
			}
		})
	}
}

// A fault never yields success, whatever else the answer says and whatever
// the HTTP status.
func TestInterpretFaultNeverSuccess(t *testing.T) {
	for _, file := range []string{"fault-350.xml", "fault-server.xml", "success-then-fault.xml", "fault-inside-exec-rsp.xml", "fault-qualified-350.xml"} {
		for _, status := range []int{200, 202, 400, 500, 503} {
			t.Run(fmt.Sprintf("%s/%d", file, status), func(t *testing.T) {
				_, err := interpret(FunctionTopup, status, readAnswer(t, file), &Result{}, identity)
				var fe *FaultError
				if !errors.As(err, &fe) || upstream.KindOf(err) != upstream.Fault {
					t.Fatalf("got %v (kind %v), want a *FaultError, kind Fault", err, upstream.KindOf(err))
				}
			})
		}
	}
}

func TestInterpretFromTheFake(t *testing.T) {
	// The httpmock fixtures are recorded from the fake; the client must read
	// them as the scenario names say.
	tests := []struct {
		file   string
		status int
		kind   upstream.Kind // 0: success
	}{
		{"sre_topupd_76186/success.xml", http.StatusOK, 0},
		{"sre_topupd_76186/no-balance.xml", http.StatusOK, upstream.Rejected},
		{"sre_topupd_76186/invalid-number.xml", http.StatusOK, upstream.Rejected},
		{"sre_topupd_76186/ip-not-authorized.xml", http.StatusInternalServerError, upstream.Fault},
		{"sre_consulta_recarga/success.xml", http.StatusOK, 0},
		{"sre_consulta_recarga/not-found.xml", http.StatusOK, upstream.Rejected},
		{"sre_consulta_inventario/success.xml", http.StatusOK, 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("carriertest", "fixtures", "testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			_, err = interpret(FunctionTopup, tt.status, b, &Result{}, identity)
			if got := kindOf(err); got != tt.kind {
				t.Errorf("kind = %v (%v), want %v", got, err, tt.kind)
			}
		})
	}
}

func TestInventoryItems(t *testing.T) {
	tests := []struct {
		name    string
		data    [][2]string
		want    []InventoryItem
		wantErr bool
	}{
		{name: "two offers", data: [][2]string{{"STATUS", "SUCCESS"}, {"OFFERID", "31"}, {"DESCRIPCION", "Pin 3"}, {"CANTIDAD", "10"}, {"OFFERID", "150"}, {"CANTIDAD", " 0 "}},
			want: []InventoryItem{{OfferID: "31", Description: "Pin 3", Available: 10}, {OfferID: "150", Available: 0}}},
		{name: "no offers", data: [][2]string{{"STATUS", "SUCCESS"}}},
		{name: "CANTIDAD before OFFERID", data: [][2]string{{"CANTIDAD", "1"}, {"OFFERID", "31"}}, wantErr: true},
		{name: "offer without CANTIDAD", data: [][2]string{{"OFFERID", "31"}, {"DESCRIPCION", "Pin 3"}}, wantErr: true},
		{name: "CANTIDAD not a number", data: [][2]string{{"OFFERID", "31"}, {"CANTIDAD", "12.5"}}, wantErr: true},
		{name: "negative CANTIDAD", data: [][2]string{{"OFFERID", "31"}, {"CANTIDAD", "-1"}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rsp := rspOf(tt.data)
			got, err := inventoryItems(rsp)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("items = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestIsZeroCode(t *testing.T) {
	for code, want := range map[string]bool{"0": true, "00": true, "": false, "1": false, "10": false, "-0": false, "O": false, "0x0": false} {
		if got := isZeroCode(code); got != want {
			t.Errorf("isZeroCode(%q) = %v, want %v", code, got, want)
		}
	}
}

func rspOf(pairs [][2]string) *umsprot.Response {
	rsp := &umsprot.Response{}
	for _, p := range pairs {
		rsp.Data = append(rsp.Data, umsprot.Data{Name: p[0], Value: p[1]})
	}
	return rsp
}

func TestInterpretSuccessWithoutIDCodigo(t *testing.T) {
	body := []byte(`<umsprot version="1"><exec_rsp result="0" diagnostic="OK">` +
		`<data name="STATUS">SUCCESS</data><data name="OFFERID">31</data><data name="CANTIDAD">5</data>` +
		`</exec_rsp></umsprot>`)
	if _, err := interpret(FunctionQueryInventory, 200, body, &Result{}, identity); err != nil {
		t.Fatalf("inventory with STATUS=SUCCESS and no ID_CODIGO: %v, want success", err)
	}
	// A top-up or a query moves money or records: without ID_CODIGO=0 the outcome stays unknown.
	for _, fn := range []string{FunctionTopup, FunctionQueryRecharge} {
		_, err := interpret(fn, 200, body, &Result{}, identity)
		if !errors.Is(err, ErrMalformedAnswer) {
			t.Fatalf("%s with STATUS=SUCCESS and no ID_CODIGO: err %v, want ErrMalformedAnswer", fn, err)
		}
	}
}
