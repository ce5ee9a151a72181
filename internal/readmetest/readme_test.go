//go:build unix

package readmetest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// wantSessions are the README's sessions; the test fails when one is missing.
var wantSessions = []string{"credit-clients", "credit-consumption", "credit-payments", "topup"}

// tools are the commands the sessions use beyond bash's builtins.
var tools = []string{"bash", "curl", "grep", "sed", "date", "sha256sum", "cut"}

const (
	sessionFence = "```sh session="
	startFence   = "```sh sessions-start"
	// sessionTimeout bounds one session (its slowest steps wait the shortened upstream timeouts).
	sessionTimeout = 2 * time.Minute
	// upTimeout bounds a service's start (migrations of a fresh SQLite database).
	upTimeout = time.Minute
)

// block is one fenced block of a session: its README line numbers and lines.
type block struct {
	first int // README line (1-based) of the block's first line, after the fence
	lines []string
}

// readme is what the test reads from README.md.
type readme struct {
	lines    []string
	sessions map[string][]block
	order    []string // session names in README order
	startEnv []string // NAME=VALUE of the sessions-start block
}

var (
	envWordRe = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=\S*$`)
	nameRe    = regexp.MustCompile(`^[a-z0-9-]+$`)
	// curlRe finds a command-position curl: a session checks the status of every request, with
	// the README's call helper (curl -w '%{http_code}') or by piping the headers to grep.
	curlRe = regexp.MustCompile(`(^|[;|&(]|\$\()\s*curl\s`)
)

func parseREADME(text string) (*readme, error) {
	r := &readme{lines: strings.Split(text, "\n"), sessions: map[string][]block{}}
	var (
		inFence  bool
		session  string // the open session block's name, "" when another fence is open
		starting bool   // the open fence is the sessions-start block
		cur      block
		start    []string
	)
	for i, line := range r.lines {
		if !inFence {
			if !strings.HasPrefix(line, "```") {
				continue
			}
			inFence = true
			session, starting = "", false
			switch {
			case strings.HasPrefix(line, sessionFence):
				session = strings.TrimSpace(strings.TrimPrefix(line, sessionFence))
				if !nameRe.MatchString(session) {
					return nil, fmt.Errorf("README.md:%d: session name %q: use lower-case letters, digits and dashes", i+1, session)
				}
				cur = block{first: i + 2}
			case strings.TrimSpace(line) == startFence:
				if start != nil {
					return nil, fmt.Errorf("README.md:%d: a second sessions-start block", i+1)
				}
				starting, start = true, []string{}
			}
			continue
		}
		if strings.TrimSpace(line) != "```" {
			switch {
			case session != "":
				cur.lines = append(cur.lines, line)
			case starting:
				start = append(start, line)
			}
			continue
		}
		inFence = false
		if session != "" {
			if _, seen := r.sessions[session]; !seen {
				r.order = append(r.order, session)
			}
			r.sessions[session] = append(r.sessions[session], cur)
		}
	}
	if inFence {
		return nil, errors.New("README.md: a fenced block is never closed")
	}
	if start == nil {
		return nil, errors.New("README.md: no ```sh sessions-start block (how to start the services for the sessions)")
	}
	env, err := parseStart(start)
	if err != nil {
		return nil, err
	}
	r.startEnv = env
	return r, nil
}

// parseStart reads the sessions-start block: one command, NAME=VALUE words followed by
// `make run`.
func parseStart(lines []string) ([]string, error) {
	var cmd []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			cmd = append(cmd, l)
		}
	}
	if len(cmd) != 1 {
		return nil, fmt.Errorf("README.md: the sessions-start block must hold one command, not %d", len(cmd))
	}
	words := strings.Fields(strings.SplitN(cmd[0], "#", 2)[0])
	var env []string
	for len(words) > 0 && envWordRe.MatchString(words[0]) {
		env, words = append(env, words[0]), words[1:]
	}
	if strings.Join(words, " ") != "make run" {
		return nil, fmt.Errorf("README.md: the sessions-start block must be NAME=VALUE ... make run, not %q", cmd[0])
	}
	return env, nil
}

// sessionLines are the lines of a session's blocks.
func (r *readme) sessionLines(name string) []string {
	var lines []string
	for _, bl := range r.sessions[name] {
		lines = append(lines, bl.lines...)
	}
	return lines
}

// script is a session's bash text and, for each of its lines, the README line it comes from.
func (r *readme) script(name string) (string, map[int]int) {
	var b strings.Builder
	lineOf := map[int]int{}
	n := 0
	add := func(s string, readmeLine int) {
		n++
		b.WriteString(s)
		b.WriteByte('\n')
		if readmeLine > 0 {
			lineOf[n] = readmeLine
		}
	}
	add(`trap 'echo "readmetest: failed at script line $LINENO (exit $?)" >&2' ERR`, 0)
	for _, bl := range r.sessions[name] {
		add(fmt.Sprintf("# README.md:%d", bl.first), 0)
		for i, l := range bl.lines {
			add(l, bl.first+i)
		}
	}
	return b.String(), lineOf
}

func TestREADMESessions(t *testing.T) {
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: the README sessions need bash, curl, grep, sed and coreutils (apt-get install bash curl grep sed coreutils)", tool)
		}
	}
	root := moduleRoot(t)
	text, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := parseREADME(string(text))
	if err != nil {
		t.Fatal(err)
	}
	lintSessions(t, doc)
	if t.Failed() {
		return
	}

	bin := buildBinaries(t, root)
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	svcEnv := append(baseEnv(), "APP_ENV=development")
	svcEnv = append(svcEnv, doc.startEnv...)
	var (
		wg             sync.WaitGroup
		credit, topup  *service
		errCred, errTp error
	)
	wg.Add(2)
	go func() { defer wg.Done(); credit, errCred = startService(t, filepath.Join(bin, "credit"), work, svcEnv) }()
	go func() { defer wg.Done(); topup, errTp = startService(t, filepath.Join(bin, "topup"), work, svcEnv) }()
	wg.Wait()
	if err := errors.Join(errCred, errTp); err != nil {
		t.Fatal(err)
	}
	t.Logf("credit on %s, top-up on %s, started with %s", credit.url, topup.url, strings.Join(doc.startEnv, " "))

	sessEnv := append(baseEnv(), "CREDIT="+credit.url, "TOPUP="+topup.url, "DEVTOKEN="+filepath.Join(bin, "devtoken"))
	for _, name := range doc.order {
		// A failure shows the log of the service the session talks to.
		var used []*service
		text := strings.Join(doc.sessionLines(name), "\n")
		if strings.Contains(text, "$CREDIT") || strings.Contains(text, "${CREDIT") {
			used = append(used, credit)
		}
		if strings.Contains(text, "$TOPUP") || strings.Contains(text, "${TOPUP") {
			used = append(used, topup)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runSession(t, doc, name, sessEnv, used...)
		})
	}
}

// lintSessions checks what bash alone would not: every session is there, starts with its
// overridable variables, and checks the status of every request.
func lintSessions(t *testing.T, doc *readme) {
	t.Helper()
	for _, name := range wantSessions {
		if len(doc.sessions[name]) == 0 {
			t.Errorf("README.md has no ```sh session=%s block", name)
		}
	}
	for _, name := range doc.order {
		first := strings.Join(doc.sessions[name][0].lines, "\n")
		if !strings.Contains(first, "CREDIT=${CREDIT:-http://localhost:3005}") && !strings.Contains(first, "TOPUP=${TOPUP:-http://localhost:3004}") {
			t.Errorf("session %s: its first block must set CREDIT=${CREDIT:-http://localhost:3005} or TOPUP=${TOPUP:-http://localhost:3004}", name)
		}
		if !strings.Contains(first, "DEVTOKEN=${DEVTOKEN:-go run ./services/devtoken}") {
			t.Errorf("session %s: its first block must set DEVTOKEN=${DEVTOKEN:-go run ./services/devtoken}", name)
		}
		for _, bl := range doc.sessions[name] {
			for i, l := range bl.lines {
				code := strings.SplitN(l, " #", 2)[0]
				if curlRe.MatchString(code) && !strings.Contains(code, "%{http_code}") && !strings.Contains(code, "| grep") {
					t.Errorf("README.md:%d (session %s): a curl whose status is not checked; use call STATUS ...: %s", bl.first+i, name, l)
				}
			}
		}
	}
}

// buildBinaries builds both services and devtoken into a temporary directory. Under -race the
// binaries are built with it too, so that they reuse the packages `make test` already compiled.
func buildBinaries(t *testing.T, root string) string {
	t.Helper()
	goTool, err := exec.LookPath("go") // go test puts its GOROOT/bin first in PATH
	if err != nil {
		t.Fatalf("no go command in PATH: %v", err)
	}
	bin := t.TempDir()
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "./services/credit", "./services/topup", "./services/devtoken")
	began := time.Now()
	// A second try: a build racing an edit of the tree, or another go command on the same cache,
	// can fail once ("could not import ..."); a compile error fails both.
	for try := 1; ; try++ {
		cmd := exec.Command(goTool, args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err == nil {
			break
		}
		if try == 2 {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("go %s: %v (trying again)\n%s", strings.Join(args, " "), err, out)
	}
	t.Logf("built credit, topup and devtoken in %v", time.Since(began).Round(time.Millisecond))
	return bin
}

// baseEnv is the environment of the services and the sessions: the user's PATH, HOME and
// temporary directory, and nothing that configures a service (the developer's DATABASE_URL,
// APP_ENV or secrets must not leak into the test).
func baseEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// service is a running service process.
type service struct {
	name string
	url  string
	log  string // path of its combined output
}

// startService starts bin in development mode on a free port, in dir (SQLite under dir/data),
// and waits for GET /up. A port taken between choosing and binding it is retried on another.
func startService(t *testing.T, bin, dir string, env []string) (*service, error) {
	name := filepath.Base(bin)
	var lastErr error
	for attempt := 1; attempt <= 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &service{name: name, url: "http://127.0.0.1:" + strconv.Itoa(port), log: filepath.Join(dir, fmt.Sprintf("%s-%d.log", name, attempt))}
		logf, err := os.Create(s.log)
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(bin)
		cmd.Dir = dir
		cmd.Env = append(append([]string{}, env...), "PORT="+strconv.Itoa(port))
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			logf.Close()
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
		exited := make(chan struct{})
		var waitErr error
		go func() { waitErr = cmd.Wait(); logf.Close(); close(exited) }()
		t.Cleanup(func() {
			stop(t, name, cmd, exited)
			if raceEnabled {
				checkRaces(t, s)
			}
		})

		if err := waitUp(s.url, exited, &waitErr); err != nil {
			lastErr = fmt.Errorf("%s did not come up on port %d: %w\n--- %s log ---\n%s", name, port, err, name, tail(s.log, 60))
			if strings.Contains(tail(s.log, 20), "address already in use") {
				continue
			}
			return nil, lastErr
		}
		return s, nil
	}
	return nil, lastErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitUp(url string, exited <-chan struct{}, waitErr *error) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(upTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("exited: %v", *waitErr)
		default:
		}
		if resp, err := client.Get(url + "/up"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("GET /up did not answer 200 within %v", upTimeout)
}

// stop sends SIGTERM (the services finish in-flight requests) and kills a process that does
// not exit in time.
func stop(t *testing.T, name string, cmd *exec.Cmd, exited <-chan struct{}) {
	select {
	case <-exited:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		t.Errorf("%s did not stop within 15 s of SIGTERM; killed", name)
		_ = cmd.Process.Kill()
		<-exited
	}
}

// checkRaces fails the test when a service built with -race reported a data race while the
// sessions ran (the report is in its log).
func checkRaces(t *testing.T, s *service) {
	text, err := os.ReadFile(s.log)
	if err != nil {
		t.Error(err)
		return
	}
	if i := bytes.Index(text, []byte("WARNING: DATA RACE")); i >= 0 {
		t.Errorf("the %s service reported a data race during the README sessions:\n%s", s.name, text[i:min(len(text), i+8000)])
	}
}

// runSession runs one session's blocks in one bash and fails with the README line of the
// failing command, the session's output and the services' logs.
func runSession(t *testing.T, doc *readme, name string, env []string, services ...*service) {
	text, lineOf := doc.script(name)
	dir := t.TempDir()
	path := filepath.Join(dir, "session-"+name+".sh")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), sessionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", path)
	cmd.Dir = dir
	cmd.Env = env
	// Its own process group, so that a timeout also ends the curl it waits for.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	began := time.Now()
	err := cmd.Run()
	if err == nil {
		t.Logf("session %s passed in %v", name, time.Since(began).Round(time.Millisecond))
		return
	}
	where := "an unknown line"
	if m := regexp.MustCompile(`readmetest: failed at script line (\d+)`).FindAllStringSubmatch(out.String(), -1); len(m) > 0 {
		n, _ := strconv.Atoi(m[len(m)-1][1])
		for ; n > 0; n-- { // a continued command reports its last line; find the nearest README line
			if l, ok := lineOf[n]; ok {
				where = fmt.Sprintf("README.md:%d: %s", l, strings.TrimSpace(doc.lines[l-1]))
				break
			}
		}
	}
	if ctx.Err() != nil {
		where += fmt.Sprintf(" (the session did not finish within %v)", sessionTimeout)
	}
	var logs strings.Builder
	for _, s := range services {
		fmt.Fprintf(&logs, "--- %s log (last lines) ---\n%s\n", s.name, tail(s.log, 40))
	}
	t.Fatalf("session %s failed (%v) at %s\n--- session output ---\n%s\n%s", name, err, where, out.String(), logs.String())
}

// tail is the last n lines of the file at path.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
