package topup

import (
	"errors"
	"testing"
)

// TestTransitions walks every (status, trigger) pair against the specification's table: the
// listed moves happen, every other one is refused with ErrInvalidTransition and leaves the
// record as it was.
func TestTransitions(t *testing.T) {
	reply := CarrierReply{IDRecarga: "R1", IDCodigo: "0", SystemMessage: "ok", RequestXML: "<req/>", ResponseXML: "<rsp/>"}
	type trigger struct {
		name string
		do   func(tx *Transaction) error
	}
	triggers := []trigger{
		{"spr success", func(tx *Transaction) error { return tx.Succeed(reply) }},
		{"spr business error", func(tx *Transaction) error { return tx.Fail(reply) }},
		{"spr fault or timeout", func(tx *Transaction) error { return tx.MakeUnavailable(reply) }},
		{"retry", func(tx *Transaction) error { return tx.Retry() }},
		{"query remote success", func(tx *Transaction) error { _, err := tx.ConfirmRemoteSuccess(reply, false); return err }},
		{"query remote success, charge confirmed", func(tx *Transaction) error { _, err := tx.ConfirmRemoteSuccess(reply, true); return err }},
	}
	// allowed[from][trigger] = next status; absent = refused.
	allowed := map[Status]map[string]Status{
		StatusPending: {
			"spr success": StatusSuccess, "spr business error": StatusFailed, "spr fault or timeout": StatusUnavailable,
			"query remote success": StatusSuccess, "query remote success, charge confirmed": StatusSuccess,
		},
		StatusUnavailable: {
			"retry": StatusPending, "query remote success": StatusSuccess, "query remote success, charge confirmed": StatusSuccess,
		},
		StatusFailed: {"query remote success, charge confirmed": StatusSuccess},
		// success is final: a remote SUCCESS is a no-op, everything else is refused.
		StatusSuccess: {"query remote success": StatusSuccess, "query remote success, charge confirmed": StatusSuccess},
	}
	for _, from := range Statuses {
		for _, tr := range triggers {
			t.Run(string(from)+"/"+tr.name, func(t *testing.T) {
				rec := &Transaction{Status: from, RetryCount: 2}
				err := tr.do(rec)
				want, ok := allowed[from][tr.name]
				if !ok {
					if !errors.Is(err, ErrInvalidTransition) && !errors.Is(err, ErrChargeNotConfirmed) {
						t.Fatalf("err = %v, want ErrInvalidTransition or ErrChargeNotConfirmed", err)
					}
					if rec.Status != from || rec.RetryCount != 2 || rec.CarrierIDRecarga != "" {
						t.Fatalf("refused transition changed the record: %+v", rec)
					}
					if from == StatusSuccess && !errors.Is(err, ErrFinal) {
						t.Fatalf("err = %v, want ErrFinal for a success record", err)
					}
					return
				}
				if err != nil {
					t.Fatalf("err = %v, want %s", err, want)
				}
				if rec.Status != want {
					t.Fatalf("status = %s, want %s", rec.Status, want)
				}
				wantRetries := 2
				if tr.name == "spr fault or timeout" {
					wantRetries = 3 // retry_count counts the passes through unavailable
				}
				if rec.RetryCount != wantRetries {
					t.Fatalf("retry_count = %d, want %d", rec.RetryCount, wantRetries)
				}
			})
		}
	}
}

func TestFailedNeedsChargeConfirmation(t *testing.T) {
	rec := &Transaction{Status: StatusFailed}
	changed, err := rec.ConfirmRemoteSuccess(CarrierReply{}, false)
	if !errors.Is(err, ErrChargeNotConfirmed) || changed || rec.Status != StatusFailed {
		t.Fatalf("got changed=%v err=%v status=%s; want ErrChargeNotConfirmed and failed", changed, err, rec.Status)
	}
}

func TestRemoteErrorOnSuccessIsAnIncident(t *testing.T) {
	rec := &Transaction{Status: StatusSuccess}
	if !rec.FlagRemoteError("carrier says ERROR") {
		t.Fatal("FlagRemoteError on success reported false")
	}
	if rec.Status != StatusSuccess || !rec.Incident || rec.IncidentNote != "carrier says ERROR" {
		t.Fatalf("record = %+v, want success with the incident flagged", rec)
	}
	for _, s := range []Status{StatusPending, StatusFailed, StatusUnavailable} {
		other := &Transaction{Status: s}
		if other.FlagRemoteError("x") || other.Incident {
			t.Fatalf("%s: flagged an incident on a record that is not success", s)
		}
	}
}

func TestQueryAnswerKeepsTopupXML(t *testing.T) {
	rec := &Transaction{Status: StatusUnavailable, RawRequestXML: "<topup/>", RawResponseXML: "<fault/>"}
	if _, err := rec.ConfirmRemoteSuccess(CarrierReply{IDRecarga: "9", RequestXML: "<query/>", ResponseXML: "<ok/>"}, false); err != nil {
		t.Fatal(err)
	}
	if rec.RawRequestXML != "<topup/>" || rec.RawResponseXML != "<fault/>" {
		t.Fatalf("raw XML overwritten by the query: %q %q", rec.RawRequestXML, rec.RawResponseXML)
	}
	if rec.CarrierIDRecarga != "9" {
		t.Fatalf("carrier_id_recarga = %q, want 9", rec.CarrierIDRecarga)
	}
}
