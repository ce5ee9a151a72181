package httpx_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawRequest sends raw bytes, for requests no well-behaved client would build.
func rawRequest(t *testing.T, a testApp, raw string) response {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(a.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: body}
}

// A request the server refuses while parsing it (here a header name with a space) gets the
// envelope with a fixed message: the parser's own error quotes the raw request, Authorization
// header included, and that must reach neither the answer nor the log.
func TestMalformedRequestIsRefusedWithoutEchoingIt(t *testing.T) {
	a := newTestApp(t, nil)
	const secret = "s3cret-token-value"
	r := rawRequest(t, a, "GET /things/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+secret+"\r\nBad Header: x\r\n\r\n")
	if r.status != http.StatusBadRequest {
		t.Fatalf("status = %d, want 400: %s", r.status, r.body)
	}
	env := envelope(t, r)
	if env["message"] != "Malformed HTTP request" {
		t.Errorf("message = %v, want %q", env["message"], "Malformed HTTP request")
	}
	for _, leak := range []string{secret, "Authorization", "Buffer size"} {
		if strings.Contains(string(r.body), leak) {
			t.Errorf("answer quotes the request (%q): %s", leak, r.body)
		}
		if strings.Contains(a.logs.String(), leak) {
			t.Errorf("log quotes the request (%q): %s", leak, a.logs.String())
		}
	}
}
