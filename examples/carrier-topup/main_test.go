package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/upstream"
)

const testPassword = "example-spr-password"

func TestRun(t *testing.T) {
	// Mock mode whatever the developer's shell holds; the credentials are
	// checked by the fake on sre_consulta_recarga and must never be printed.
	t.Setenv("CARRIER_SPR_URL", "")
	t.Setenv("CARRIER_MOCK_MODE", "")
	t.Setenv("CARRIER_OAUTH_TOKEN_URL", "")
	t.Setenv("CARRIER_TIMEOUT", "")
	t.Setenv("CARRIER_USER", "apiuser")
	t.Setenv("CARRIER_PASSWORD", testPassword)
	t.Setenv("CARRIER_COMPANY_ID", "1001")

	tests := []struct {
		name    string
		args    []string
		want    []string // lines, in order
		wantErr func(error) bool
		notSent bool // refused before anything went on the wire
	}{
		{
			name: "success is confirmed by the query",
			args: []string{"-subscriber", "593987654321", "-offer", "31"},
			want: []string{
				"mode: mock (in-process fake SPR)",
				`topup: ok STATUS=SUCCESS ID_CODIGO=0 ID_RECARGA=700000001 MENSAJE="top-up applied"`,
				`query: ok STATUS=SUCCESS ID_CODIGO=0 ID_RECARGA=700000001 MENSAJE="top-up found"`,
				"final: applied",
			},
			wantErr: func(err error) bool { return err == nil },
		},
		{
			name: "no balance is rejected, a final refusal",
			args: []string{"-subscriber", "593990000001", "-offer", "150", "-operation", carrier.ExternalOperationData},
			want: []string{
				`topup: rejected STATUS=ERROR ID_CODIGO=1 ID_RECARGA= MENSAJE="no balance"`,
				`query: rejected STATUS=ERROR ID_CODIGO=1 ID_RECARGA= MENSAJE="no balance"`,
				"final: refused",
			},
			wantErr: func(err error) bool {
				var e *carrier.Error
				return errors.As(err, &e) && e.Code == "1" && upstream.KindOf(err) == upstream.Rejected
			},
		},
		{
			name: "late success times out and is reconciled, not sent again",
			args: []string{"-subscriber", "593990000004", "-timeout", "300ms"},
			want: []string{
				"topup: outcome-unknown error=",
				"hint: timed out; not sent again, reconciling with sre_consulta_recarga",
				`query: ok STATUS=SUCCESS ID_CODIGO=0 ID_RECARGA=700000001 MENSAJE="top-up found"`,
				"final: applied",
			},
			wantErr: func(err error) bool { return err == nil },
		},
		{
			name: "timeout with nothing applied is reconciled as not applied",
			args: []string{"-subscriber", "593990000003", "-timeout", "300ms"},
			want: []string{
				"topup: outcome-unknown error=",
				"hint: timed out",
				`query: rejected STATUS=ERROR ID_CODIGO=1 ID_RECARGA= MENSAJE="transaction not found"`,
				"reconciled: not applied by the carrier; safe to send again with the same id",
				"final: not-applied",
			},
			wantErr: func(err error) bool { return carrier.IsTimeout(err) && upstream.KindOf(err) == upstream.OutcomeUnknown },
		},
		{
			name: "faultcode 350 is recognised",
			args: []string{"-subscriber", "593990000002"},
			want: []string{
				"topup: fault error=",
				"hint: the carrier does not accept our outgoing IP address (faultcode 350)",
				"final: refused",
			},
			wantErr: func(err error) bool {
				return errors.Is(err, carrier.ErrIPNotAuthorized) && upstream.KindOf(err) == upstream.Fault
			},
		},
		{
			name:    "bad operation is refused before sending",
			args:    []string{"-operation", "RECARGA_OTRA"},
			want:    []string{"audit: request 0 bytes, response 0 bytes", "topup: invalid-request error="},
			wantErr: func(err error) bool { return errors.Is(err, carrier.ErrInvalidRequest) },
			notSent: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(t.Context(), tt.args, &out)
			got := out.String()
			if !tt.wantErr(err) {
				t.Errorf("run() error = %v", err)
			}
			assertInOrder(t, got, tt.want)
			if strings.Contains(got, testPassword) || (err != nil && strings.Contains(err.Error(), testPassword)) {
				t.Errorf("the password was printed:\n%s", got)
			}
			if !tt.notSent && !regexp.MustCompile(`(?m)^audit: request [1-9]\d* bytes`).MatchString(got) {
				t.Errorf("no audit length of the sent XML:\n%s", got)
			}
			if !regexp.MustCompile(`(?m)^external_transaction_id: [0-9A-Z]{26}$`).MatchString(got) {
				t.Errorf("no 26-character external transaction id:\n%s", got)
			}
		})
	}
}

// With CARRIER_SPR_URL set the program builds a real client; the test points
// it at its own fake SPR, which checks the credentials of the query.
func TestRunAgainstConfiguredSPR(t *testing.T) {
	srv := carriertest.NewServer(carriertest.WithCredentials("apiuser", testPassword, "1001"))
	t.Cleanup(srv.Close)
	t.Setenv("CARRIER_SPR_URL", srv.URL)
	t.Setenv("CARRIER_MOCK_MODE", "false")
	t.Setenv("CARRIER_OAUTH_TOKEN_URL", "")
	t.Setenv("CARRIER_TIMEOUT", "0.3")
	t.Setenv("CARRIER_USER", "apiuser")
	t.Setenv("CARRIER_PASSWORD", testPassword)
	t.Setenv("CARRIER_COMPANY_ID", "1001")

	var out bytes.Buffer
	if err := run(t.Context(), []string{"-subscriber", carriertest.SubscriberLateSuccess, "-offer", "30"}, &out); err != nil {
		t.Fatalf("run() error = %v\n%s", err, out.String())
	}
	assertInOrder(t, out.String(), []string{
		"mode: SPR from CARRIER_SPR_URL",
		"topup: outcome-unknown",
		`query: ok STATUS=SUCCESS ID_CODIGO=0 ID_RECARGA=700000001 MENSAJE="top-up found"`,
		"final: applied",
	})
	if n := srv.Calls(carrier.FunctionTopup); n != 1 {
		t.Errorf("sre_topupd_76186 sent %d times, want 1: a timed-out top-up is not retried", n)
	}
	if strings.Contains(out.String(), testPassword) {
		t.Errorf("the password was printed:\n%s", out.String())
	}
}

// An SPR where nothing listens: the top-up never left, so it is not reconciled.
func TestRunAgainstRefusedConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	t.Setenv("CARRIER_SPR_URL", "http://"+ln.Addr().String()+"/spr")
	t.Setenv("CARRIER_MOCK_MODE", "false")
	t.Setenv("CARRIER_OAUTH_TOKEN_URL", "")
	t.Setenv("CARRIER_TIMEOUT", "1")

	var out bytes.Buffer
	err = run(t.Context(), []string{"-subscriber", "593987654321"}, &out)
	if upstream.KindOf(err) != upstream.NotSent {
		t.Errorf("run() error = %v, want kind not-sent", err)
	}
	assertInOrder(t, out.String(), []string{
		"topup: not-sent error=",
		"hint: never left this process; safe to send again with the same id",
		"reconciled: never sent, so not applied; safe to send again with the same id",
		"final: not-applied",
	})
}

// decide and sdkWord read an error by kind, whatever wraps it.
func TestDecide(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("caller: %w", err) }
	tests := []struct {
		name     string
		err      error
		decision string
		word     string
	}{
		{name: "success", err: nil, decision: applied, word: "ok"},
		{name: "invalid request", err: wrap(fmt.Errorf("%w: QUANTITY", carrier.ErrInvalidRequest)), decision: refused, word: "invalid-request"},
		{name: "business error", err: wrap(&carrier.Error{Op: carrier.FunctionTopup, Code: "1"}), decision: refused, word: "rejected"},
		{name: "fault", err: wrap(&carrier.FaultError{Op: carrier.FunctionTopup, Code: "350"}), decision: refused, word: "fault"},
		{name: "dial refused", err: &carrier.TransportError{Op: carrier.FunctionTopup, Err: &net.OpError{Op: "dial", Err: errors.New("refused")}}, decision: notApplied, word: "not-sent"},
		{name: "timeout", err: &carrier.TransportError{Op: carrier.FunctionTopup, Err: context.DeadlineExceeded}, decision: unknown, word: "outcome-unknown"},
		{name: "bad status", err: &carrier.TransportError{Op: carrier.FunctionTopup, HTTPStatus: 502, Err: carrier.ErrBadStatus}, decision: unknown, word: "outcome-unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decide(tt.err); got != tt.decision {
				t.Errorf("decide = %q, want %q", got, tt.decision)
			}
			if got := sdkWord(tt.err); got != tt.word {
				t.Errorf("sdkWord = %q, want %q", got, tt.word)
			}
		})
	}
}

func TestRunRejectsUnknownFlag(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), []string{"-nope"}, &out); err == nil {
		t.Fatal("run accepted an unknown flag")
	}
}

// assertInOrder checks that every wanted fragment appears in got, each on a
// line after the previous fragment's.
func assertInOrder(t *testing.T, got string, want []string) {
	t.Helper()
	rest := got
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("output lacks %q after the previous lines:\n%s", w, got)
		}
		rest = rest[i+len(w):]
	}
}
