package makerun

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/platform/integrations/internal/config"
)

// syncBuffer is the output of the script, read while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs scripts/run.sh from the repository's root in its own process group.
func start(t *testing.T, creditPort, topupPort int) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("make run needs bash")
	}
	out := &syncBuffer{}
	cmd := exec.Command("bash", "scripts/run.sh")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CREDIT_PORT="+strconv.Itoa(creditPort), "TOPUP_PORT="+strconv.Itoa(topupPort), "PORT=")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	return cmd, out
}

// wait waits for the script to exit within d after the build finished.
func wait(t *testing.T, cmd *exec.Cmd, out *syncBuffer, d time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("make run still running after %v:\n%s", d, out)
		return nil
	}
}

func up(port int) bool {
	c := http.Client{Timeout: time.Second}
	res, err := c.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/up")
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// A taken port makes make run exit non-zero, saying which service failed, and the other service
// does not outlive it.
func TestPortTakenExitsNonZero(t *testing.T) {
	taken, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	creditPort, topupPort := taken.Addr().(*net.TCPAddr).Port, freePort(t)
	cmd, out := start(t, creditPort, topupPort)
	// The build may take minutes on a cold cache; the services fail or stop within seconds.
	err = wait(t, cmd, out, 8*time.Minute)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("make run with port %d taken: %v, want a non-zero exit:\n%s", creditPort, err, out)
	}
	if !strings.Contains(out.String(), "run: the credit service exited with status") {
		t.Errorf("output does not name the failed service:\n%s", out)
	}
	if up(topupPort) {
		t.Errorf("the top-up service still answers after make run exited")
	}
}

// Both services start, each logs one listening line with its URLs after binding; SIGTERM stops
// both, each logging its drain, and make run exits 0.
func TestRunStartsAndStopsBoth(t *testing.T) {
	creditPort, topupPort := freePort(t), freePort(t)
	cmd, out := start(t, creditPort, topupPort)
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	for !(up(creditPort) && up(topupPort)) {
		if ctx.Err() != nil || cmd.ProcessState != nil {
			t.Fatalf("services not up:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, s := range []struct {
		service string
		port    int
		api     string
	}{{"credit", creditPort, "/api/v1/credigestion"}, {"topup", topupPort, "/api/v1/recargas"}} {
		base := "http://localhost:" + strconv.Itoa(s.port)
		var lines []string
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, "msg=listening") && strings.Contains(l, "service="+s.service) {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 {
			t.Errorf("%s: %d listening lines, want 1:\n%s", s.service, len(lines), out)
			continue
		}
		for _, want := range []string{"url=" + base, "api=" + base + s.api, "docs=" + base + "/docs", "devtoken"} {
			if !strings.Contains(lines[0], want) {
				t.Errorf("%s listening line lacks %q: %s", s.service, want, lines[0])
			}
		}
		// How to mint a token, never a key: not even the development defaults reach the log.
		for _, secret := range []string{config.DevCreditsystemServiceKey, config.DevTopupServiceKey, config.DevJWTSecret, config.DevActionTokenSecret} {
			if strings.Contains(out.String(), secret) {
				t.Errorf("the log holds the development secret %q", secret)
			}
		}
	}
	start := time.Now()
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := wait(t, cmd, out, 40*time.Second); err != nil {
		t.Fatalf("make run after SIGTERM: %v\n%s", err, out)
	}
	if strings.Count(out.String(), "msg=\"stopping: no new connections") != 2 {
		t.Errorf("want one drain line per service:\n%s", out)
	}
	if up(creditPort) || up(topupPort) {
		t.Error("a service still answers after make run exited")
	}
	t.Logf("stopped in %v", time.Since(start))
}
