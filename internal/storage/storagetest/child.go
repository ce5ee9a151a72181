package storagetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childEnv makes a test binary run a command instead of its tests (StartChild).
const childEnv = "STORAGETEST_CHILD_ARGS"

// RunChild, called first in a package's TestMain, runs cmd (the service's run) with the arguments
// StartChild gave and exits with its result, when the binary was started by StartChild; otherwise
// it returns and the tests run.
func RunChild(cmd func(ctx context.Context, args []string) error) {
	raw, ok := os.LookupEnv(childEnv)
	if !ok {
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := cmd(ctx, strings.Fields(raw))
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// StartChild starts the test binary as a process of its own that runs the command with args
// (RunChild), with env added to its environment. The process is killed at the end of the test.
func StartChild(t testing.TB, env map[string]string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+strings.Join(args, " "))
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd
}

// RunChildWithin runs the command to its end and fails the test unless it ends within d; it
// returns what it printed and the command's error (nil for exit status 0).
func RunChildWithin(t testing.TB, d time.Duration, env map[string]string, args ...string) (string, error) {
	t.Helper()
	cmd := StartChild(t, env, args...)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return fmt.Sprint(cmd.Stdout), err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%v did not end within %s: %s", args, d, cmd.Stdout)
		return "", nil
	}
}

// KillDuringMigrations starts the command args, which migrates first, on the target's database
// (env's DATABASE_URL is set to it) and kills it (SIGKILL) while it holds the migration lock.
// On PostgreSQL the moment is made certain: the test holds an uncommitted CREATE TABLE of
// firstTable, the first table the migrations create, so the process waits inside its migration
// with the lock held, and is killed there. On SQLite, whose lock is the migrations' write
// transaction, the process is killed at random moments of runs on fresh files, several times;
// the URL of the last one is returned, for the restart the caller checks.
func KillDuringMigrations(t *testing.T, tg Target, env map[string]string, firstTable string, args ...string) string {
	t.Helper()
	with := func(url string) map[string]string {
		e := map[string]string{"DATABASE_URL": url}
		for k, v := range env {
			e[k] = v
		}
		return e
	}
	if tg.Name != "postgres" {
		url := tg.URL
		for i := range 8 {
			url = "sqlite:" + filepath.Join(t.TempDir(), fmt.Sprintf("kill-%d.db", i))
			cmd := StartChild(t, with(url), args...)
			time.Sleep(time.Duration(rand.IntN(400)) * time.Millisecond)
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		return url
	}
	tx, err := tg.DB.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(t.Context(), "CREATE TABLE "+firstTable+" (blocking INTEGER)"); err != nil {
		t.Fatal(err)
	}
	cmd := StartChild(t, with(tg.URL), args...)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var waiting int
		err := tg.DB.NewRaw(`SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'
			AND query LIKE ? AND pid <> pg_backend_pid()`, "%CREATE TABLE "+firstTable+" %").Scan(t.Context(), &waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v never reached its migration: %s", args, cmd.Stdout)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	return tg.URL
}

// ServeUntilUp runs the service (the child with no arguments) on a free port until GET /up answers
// 200, then stops it with SIGTERM and expects a clean exit.
func ServeUntilUp(t *testing.T, env map[string]string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	with := map[string]string{"PORT": strconv.Itoa(port)}
	for k, v := range env {
		with[k] = v
	}
	cmd := StartChild(t, with)
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/up")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the service did not answer /up within 10 s: %s", cmd.Stdout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("service stopped with %v: %s", err, cmd.Stdout)
	}
}
