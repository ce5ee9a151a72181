package carriertest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/platform/integrations/carrier"
	"github.com/platform/integrations/carrier/carriertest"
	"github.com/platform/integrations/upstream"
)

// failAfter bounds a wait for something the test itself causes: it is a failure
// timeout for a broken fake, never a measure of how long anything took.
const failAfter = 30 * time.Second

func topupReq(id, subscriber string) carrier.TopupRequest {
	return carrier.TopupRequest{ExternalOperation: carrier.ExternalOperationPins, ExternalTransactionID: id, OfferID: "31", SubscriberID: subscriber, Quantity: 1}
}

// startTopup runs a top-up in the background and returns where its error lands.
func startTopup(ctx context.Context, c *carrier.Client, req carrier.TopupRequest) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := c.Topup(ctx, req)
		done <- err
	}()
	return done
}

func waitReached(t *testing.T, g *carriertest.Gate) {
	t.Helper()
	select {
	case <-g.Reached():
	case <-time.After(failAfter):
		t.Fatal("no call reached the gate")
	}
}

func waitDone(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(failAfter):
		t.Fatal("the held call did not end")
		return nil
	}
}

// stillHeld fails when the call has already ended. It needs no clock: a gated
// call cannot answer before the gate opens, so anything in done is a bug.
func stillHeld(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("the call ended (%v) before the gate opened", err)
	default:
	}
}

// A gate holds the answer, not the work: while the caller waits the ledger already has
// what the reaction commits, and opening the gate delivers the answer. Over loopback and
// in process, scripted per function and per subscriber.
func TestGateHoldsTheAnswer(t *testing.T) {
	mock := func(t *testing.T) (*carrier.Client, *carriertest.Fake) {
		c, f, err := carriertest.NewMock(carrier.Config{Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.Close)
		return c, f
	}
	server := func(t *testing.T) (*carrier.Client, *carriertest.Fake) {
		srv := carriertest.NewServer()
		t.Cleanup(srv.Close)
		c, err := carrier.New(carrier.Config{URL: srv.URL, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return c, srv.Fake
	}
	for name, newFake := range map[string]func(*testing.T) (*carrier.Client, *carriertest.Fake){"mock": mock, "server": server} {
		t.Run(name+"/process", func(t *testing.T) {
			c, f := newFake(t)
			g := carriertest.NewGate()
			f.Script(carrier.FunctionTopup, carriertest.Process().Until(g))
			done := startTopup(context.Background(), c, topupReq("GATE-1", "593987654321"))
			waitReached(t, g)
			e, ok := f.Entry("GATE-1")
			if !ok || e.Status != carrier.StatusSuccess || e.IDRecarga == "" {
				t.Fatalf("ledger while held: %+v, %v; want SUCCESS committed", e, ok)
			}
			// The query is not gated: it sees the commit while the top-up waits.
			q, err := c.QueryRecharge(t.Context(), carrier.QueryRequest{ExternalTransactionID: "GATE-1", OfferID: "31"})
			if err != nil || q.Status != carrier.StatusSuccess || q.IDRecarga != e.IDRecarga {
				t.Fatalf("query while held: %+v, %v", q, err)
			}
			stillHeld(t, done)
			g.Open()
			if err := waitDone(t, done); err != nil {
				t.Fatalf("answer after the gate opened: %v", err)
			}
			// An open gate lets later calls through.
			f.Script(carrier.FunctionTopup, carriertest.Process().Until(g))
			if _, err := c.Topup(t.Context(), topupReq("GATE-2", "593987654321")); err != nil {
				t.Fatalf("through an open gate: %v", err)
			}
		})
		t.Run(name+"/subscriber business error", func(t *testing.T) {
			c, f := newFake(t)
			g := carriertest.NewGate()
			f.ScriptSubscriber("593911111111", carriertest.BusinessError("9", "blocked line").Until(g))
			done := startTopup(context.Background(), c, topupReq("GATE-3", "593911111111"))
			waitReached(t, g)
			if e, _ := f.Entry("GATE-3"); e.Status != carrier.StatusError || e.IDCodigo != "9" {
				t.Fatalf("ledger while held: %+v", e)
			}
			stillHeld(t, done)
			g.Open()
			var be *carrier.Error
			if err := waitDone(t, done); !errors.As(err, &be) || be.Code != "9" {
				t.Fatalf("answer after the gate opened: %v, want business error 9", err)
			}
		})
	}
}

// Hang and LateSuccess never answer: an opened gate ends them as a dropped connection, a
// transport error the caller sees at once (not its timeout). LateSuccess has committed.
func TestGateEndsAHoldAsADrop(t *testing.T) {
	for _, tt := range []struct {
		name     string
		reaction func(*carriertest.Gate) carriertest.Reaction
		ledger   string // "" = nothing committed
	}{
		{"hang", func(g *carriertest.Gate) carriertest.Reaction { return carriertest.Hang().Until(g) }, ""},
		{"late success", func(g *carriertest.Gate) carriertest.Reaction { return carriertest.LateSuccess().Until(g) }, carrier.StatusSuccess},
		{"drop", func(g *carriertest.Gate) carriertest.Reaction { return carriertest.Drop().Until(g) }, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, f, err := carriertest.NewMock(carrier.Config{Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			g := carriertest.NewGate()
			f.Script(carrier.FunctionTopup, tt.reaction(g))
			done := startTopup(context.Background(), c, topupReq("HOLD-1", "593987654321"))
			waitReached(t, g)
			if e, _ := f.Entry("HOLD-1"); e.Status != tt.ledger {
				t.Fatalf("ledger while held: %+v, want status %q", e, tt.ledger)
			}
			stillHeld(t, done)
			g.Open()
			err = waitDone(t, done)
			if !errors.Is(err, carriertest.ErrConnectionDropped) || carrier.IsTimeout(err) || upstream.KindOf(err) != upstream.OutcomeUnknown {
				t.Fatalf("err = %v (kind %v), want a dropped connection, outcome unknown", err, upstream.KindOf(err))
			}
		})
	}
}

// handlersGone waits until no goroutine runs the fake's handler, bounded by failAfter.
func handlersGone(t *testing.T) {
	t.Helper()
	give := time.Now().Add(failAfter)
	for {
		buf := make([]byte, 1<<16)
		for {
			n := runtime.Stack(buf, true)
			if n < len(buf) {
				buf = buf[:n]
				break
			}
			buf = make([]byte, 2*len(buf))
		}
		if !bytes.Contains(buf, []byte("carriertest.(*Fake).ServeHTTP")) {
			return
		}
		if time.Now().After(give) {
			t.Fatalf("a handler is still held at the gate:\n%s", buf)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A call held at a gate that is never opened still ends when its caller gives up (its
// context is cancelled or its deadline passes), as a dropped connection that leaves no
// goroutine behind, and what the reaction committed stays. The checks run while the fake is
// still open and the gate closed, so that Close cannot hide a handler stuck at the gate.
func TestGatedCallEndsWithTheCaller(t *testing.T) {
	// The no-socket transport keeps the goroutine of an exchange that ended, waiting for the next.
	idleWorker := goleak.IgnoreTopFunction("github.com/platform/integrations/internal/fakehttp.work")
	newFake := map[string]func(*testing.T, time.Duration) (*carrier.Client, *carriertest.Fake, func()){
		"mock": func(t *testing.T, timeout time.Duration) (*carrier.Client, *carriertest.Fake, func()) {
			c, f, err := carriertest.NewMock(carrier.Config{Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			return c, f, f.Close
		},
		"server": func(t *testing.T, timeout time.Duration) (*carrier.Client, *carriertest.Fake, func()) {
			srv := carriertest.NewServer()
			c, err := carrier.New(carrier.Config{URL: srv.URL, Timeout: timeout})
			if err != nil {
				srv.Close()
				t.Fatal(err)
			}
			return c, srv.Fake, srv.Close
		},
	}
	for name, open := range newFake {
		t.Run(name+"/cancel", func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), idleWorker)
			c, f, closeFake := open(t, time.Minute)
			defer closeFake()
			g := carriertest.NewGate()
			f.Script(carrier.FunctionTopup, carriertest.Process().Until(g))
			ctx, cancel := context.WithCancel(context.Background())
			done := startTopup(ctx, c, topupReq("END-1", "593987654321"))
			waitReached(t, g)
			cancel()
			if err := waitDone(t, done); !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled", err)
			}
			handlersGone(t)
			if e, _ := f.Entry("END-1"); e.Status != carrier.StatusSuccess {
				t.Errorf("what the reaction committed was lost: %+v", e)
			}
		})
		t.Run(name+"/deadline", func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), idleWorker)
			// The client's deadline is what this case is about, not its length. A call can
			// time out before it reaches the fake at all (a loaded machine); then try again
			// with a new id until one timed out at the gate.
			c, f, closeFake := open(t, 200*time.Millisecond)
			defer closeFake()
			give := time.Now().Add(failAfter)
			for attempt := 1; ; attempt++ {
				g := carriertest.NewGate()
				f.ScriptSubscriber("593987654321", carriertest.Process().Until(g))
				id := fmt.Sprintf("END-2-%d", attempt)
				if _, err := c.Topup(context.Background(), topupReq(id, "593987654321")); !carrier.IsTimeout(err) {
					t.Fatalf("err = %v, want a timeout", err)
				}
				select {
				case <-g.Reached():
				default:
					if time.Now().After(give) {
						t.Fatal("no call reached the gate before its deadline")
					}
					continue
				}
				handlersGone(t)
				if e, _ := f.Entry(id); e.Status != carrier.StatusSuccess {
					t.Errorf("what the reaction committed was lost: %+v", e)
				}
				break
			}
		})
	}
	t.Run("fake closes", func(t *testing.T) {
		c, f, err := carriertest.NewMock(carrier.Config{Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		g := carriertest.NewGate()
		f.Script(carrier.FunctionTopup, carriertest.Process().Until(g))
		done := startTopup(context.Background(), c, topupReq("END-4", "593987654321"))
		waitReached(t, g)
		f.Close()
		if err := waitDone(t, done); !errors.Is(err, carriertest.ErrConnectionDropped) {
			t.Errorf("err = %v, want a dropped connection", err)
		}
	})
	t.Run("server closes", func(t *testing.T) {
		srv := carriertest.NewServer()
		c, err := carrier.New(carrier.Config{URL: srv.URL, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		g := carriertest.NewGate()
		srv.Script(carrier.FunctionTopup, carriertest.Process().Until(g))
		done := startTopup(context.Background(), c, topupReq("END-5", "593987654321"))
		waitReached(t, g)
		closed := make(chan struct{})
		go func() { srv.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(failAfter):
			t.Fatal("Server.Close blocked on a call held at a gate")
		}
		if err := waitDone(t, done); !carrier.IsTransport(err) || upstream.KindOf(err) != upstream.OutcomeUnknown {
			t.Errorf("err = %v (kind %v), want a transport error, outcome unknown", err, upstream.KindOf(err))
		}
	})
}
