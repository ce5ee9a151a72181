package carrier

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestNewValidates(t *testing.T) {
	ok := Config{URL: "https://spr.example/umsprot"}
	tests := []struct {
		name    string
		cfg     Config
		opts    []Option
		wantErr string
		wantHC  *http.Client // the client New must send through, when set
		wantLog bool         // WithLogger was applied
	}{
		{name: "minimal", cfg: ok},
		{name: "missing URL", cfg: Config{}, wantErr: "URL is required"},
		{name: "URL without scheme", cfg: Config{URL: "spr.example/umsprot"}, wantErr: "not an http(s) URL"},
		{name: "ftp URL", cfg: Config{URL: "ftp://spr.example"}, wantErr: "not an http(s) URL"},
		{name: "negative timeout", cfg: Config{URL: ok.URL, Timeout: -time.Second}, wantErr: "negative"},
		{name: "OAuth2 without secret", cfg: Config{URL: ok.URL, OAuth2: &OAuth2Config{TokenURL: "https://auth.example/token", ClientID: "id"}}, wantErr: "OAuth2 needs"},
		{name: "OAuth2 with a bad token URL", cfg: Config{URL: ok.URL, OAuth2: &OAuth2Config{TokenURL: "token", ClientID: "id", ClientSecret: "s"}}, wantErr: "TokenURL"},
		{name: "WithHTTPClient(nil)", cfg: ok, opts: []Option{WithHTTPClient(nil)}, wantErr: "WithHTTPClient: nil *http.Client"},
		{name: "WithLogger(nil)", cfg: ok, opts: []Option{WithLogger(nil)}, wantErr: "WithLogger: nil *slog.Logger"},
		{name: "nil option is ignored", cfg: ok, opts: []Option{nil}},
		{name: "nil options between others are ignored", cfg: ok, opts: []Option{nil, WithHTTPClient(http.DefaultClient), nil, WithLogger(slog.Default()), nil}, wantHC: http.DefaultClient, wantLog: true},
		{name: "a bad option after a nil one still fails", cfg: ok, opts: []Option{nil, WithLogger(nil)}, wantErr: "WithLogger: nil *slog.Logger"},
		{name: "options", cfg: ok, opts: []Option{WithHTTPClient(http.DefaultClient), WithLogger(slog.Default())}, wantHC: http.DefaultClient, wantLog: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg, tt.opts...)
			if tt.wantErr == "" {
				if err != nil || c == nil {
					t.Fatalf("New = %v, %v", c, err)
				}
				if tt.wantHC != nil && c.hc != tt.wantHC {
					t.Errorf("the client does not send through the given *http.Client")
				}
				if (c.log != nil) != tt.wantLog {
					t.Errorf("logger set = %v, want %v", c.log != nil, tt.wantLog)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestDefaultTimeout(t *testing.T) {
	c, err := New(Config{URL: "http://spr"})
	if err != nil {
		t.Fatal(err)
	}
	if c.timeout != 30*time.Second {
		t.Errorf("timeout = %v, want the specification's 30 s", c.timeout)
	}
	c, _ = New(Config{URL: "http://spr", Timeout: 2 * time.Second})
	if c.timeout != 2*time.Second {
		t.Errorf("timeout = %v, want the configured 2 s", c.timeout)
	}
}

// A Config printed or logged in any way shows neither the password nor the
// OAuth2 client secret.
func TestConfigHidesSecrets(t *testing.T) {
	cfg := Config{
		URL: "https://spr-user:url-secret@spr.example/umsprot", User: "spr-user", Password: "p4ss-w0rd", CompanyID: "1790",
		OAuth2: &OAuth2Config{TokenURL: "https://auth.example/token", ClientID: "cid", ClientSecret: "client-s3cret"},
	}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", "carrier", cfg)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("config", slog.Any("carrier", cfg))
	for _, out := range []string{fmt.Sprint(cfg), fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, cfg), logs.String()} {
		for _, secret := range []string{"p4ss-w0rd", "client-s3cret", "url-secret"} {
			if strings.Contains(out, secret) {
				t.Errorf("%q shows %q", out, secret)
			}
		}
		if !strings.Contains(out, "spr-user") || !strings.Contains(out, mask) {
			t.Errorf("%q lost the non-secret fields or the mask", out)
		}
	}
}

// A very short password is still masked in the request (structurally) but
// not hunted through the answers' text, where it would mangle words.
func TestShortSecretsDoNotMangleAnswers(t *testing.T) {
	c, err := New(Config{URL: "http://spr", Password: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.scrub("top-up applied"); got != "top-up applied" {
		t.Errorf("scrub mangled the text: %q", got)
	}
	c, _ = New(Config{URL: "http://spr", Password: "s3cr3t"})
	if got := c.scrub("echo s3cr3t"); got != "echo "+mask {
		t.Errorf("scrub = %q", got)
	}
}
