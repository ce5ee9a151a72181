package creditsystemtest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/platform/integrations/creditsystem"
	"github.com/platform/integrations/creditsystem/creditsystemtest"
	"github.com/platform/integrations/upstream"
)

// newInProcess is a client over the fake's Transport, as the credit service wires it in
// development mode: no listener.
func newInProcess(t *testing.T, timeout time.Duration) (*creditsystemtest.Fake, *creditsystem.Client) {
	t.Helper()
	fake := creditsystemtest.NewFake(creditsystemtest.WithClock(func() time.Time { return fixedNow }))
	t.Cleanup(fake.Close)
	cfg := creditsystemtest.DevConfig()
	cfg.CarteraURL = creditsystemtest.MockURL + creditsystemtest.CarteraPath
	cfg.CentralURL = creditsystemtest.MockURL + creditsystemtest.CentralPath
	cfg.SOAPNamespace, cfg.Timeout = fake.Namespace(), timeout
	c, err := creditsystem.New(cfg, creditsystem.WithHTTPClient(fake.HTTPClient()))
	if err != nil {
		t.Fatal(err)
	}
	return fake, c
}

// Over Transport the client sees what it sees on the network: answers, refusals and faults as
// they are, a held call as its own timeout, a dropped one as a dropped connection.
func TestTransport(t *testing.T) {
	tests := []struct {
		name     string
		reaction creditsystemtest.Reaction
		monto    string
		check    func(t *testing.T, err error)
		applied  bool // the authorization lowered the line
	}{
		{name: "answer", reaction: creditsystemtest.Process(), monto: "10.00", applied: true,
			check: func(t *testing.T, err error) {
				if err != nil {
					t.Errorf("err = %v, want an answer", err)
				}
			}},
		{name: "magic insufficient credit", reaction: creditsystemtest.Process(), monto: creditsystemtest.MontoInsufficientCredit.String(),
			check: func(t *testing.T, err error) {
				if businessCode(err) != 51 {
					t.Errorf("err = %v, want business error 51", err)
				}
			}},
		{name: "fault", reaction: creditsystemtest.Fault("a:InternalServiceFault", "boom"), monto: "10.00",
			check: func(t *testing.T, err error) {
				var fe *creditsystem.FaultError
				if !errors.As(err, &fe) || fe.HTTPStatus != 500 {
					t.Errorf("err = %v, want a fault in an HTTP 500", err)
				}
			}},
		{name: "hang", reaction: creditsystemtest.Hang(), monto: "10.00",
			check: func(t *testing.T, err error) {
				if !creditsystem.IsTimeout(err) || upstream.KindOf(err) != upstream.OutcomeUnknown {
					t.Errorf("err = %v, want the client's timeout", err)
				}
			}},
		{name: "late success", reaction: creditsystemtest.LateSuccess(), monto: "10.00", applied: true,
			check: func(t *testing.T, err error) {
				if !creditsystem.IsTimeout(err) {
					t.Errorf("err = %v, want the client's timeout", err)
				}
			}},
		{name: "drop", reaction: creditsystemtest.Drop(), monto: "10.00",
			check: func(t *testing.T, err error) {
				if !errors.Is(err, creditsystemtest.ErrConnectionDropped) || creditsystem.IsTimeout(err) || upstream.KindOf(err) != upstream.OutcomeUnknown {
					t.Errorf("err = %v (kind %v), want a dropped connection, outcome unknown", err, upstream.KindOf(err))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, c := newInProcess(t, 300*time.Millisecond)
			fake.Script("GrabarAutorizacion", tt.reaction)
			_, err := c.GrabarAutorizacion(t.Context(), authReq(cliente, tt.monto))
			tt.check(t, err)
			if fake.Calls("GrabarAutorizacion") != 1 {
				t.Errorf("calls = %d, want 1", fake.Calls("GrabarAutorizacion"))
			}
			card, ok := fake.Card(cliente)
			lowered := ok && card.Disponible.LessThan(d("5000.00"))
			if lowered != tt.applied {
				t.Errorf("line lowered = %v (card %+v), want %v", lowered, card, tt.applied)
			}
		})
	}
}

func TestTransportCloseReleasesHeldCalls(t *testing.T) {
	fake, c := newInProcess(t, 20*time.Second)
	done := make(chan error, 1)
	go func() {
		_, err := c.GrabarAutorizacion(context.Background(), authReq(cliente, creditsystemtest.MontoTimeout.String()))
		done <- err
	}()
	for fake.Calls("GrabarAutorizacion") == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	fake.Close()
	select {
	case err := <-done:
		if !errors.Is(err, creditsystemtest.ErrConnectionDropped) {
			t.Errorf("err = %v, want a dropped connection", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not release the held call")
	}
}
