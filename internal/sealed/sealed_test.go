package sealed_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/platform/integrations/internal/sealed"
)

func TestSealOpen(t *testing.T) {
	box, err := sealed.New("a secret")
	if err != nil {
		t.Fatal(err)
	}
	s := box.Seal("482913", "AUT-1")
	if strings.Contains(s, "482913") || s == box.Seal("482913", "AUT-1") {
		t.Fatalf("sealed %q shows the value or repeats itself", s)
	}
	if got, err := box.Open(s, "AUT-1"); err != nil || got != "482913" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	other, _ := sealed.New("another secret")
	for name, open := range map[string]func() (string, error){
		"another context": func() (string, error) { return box.Open(s, "AUT-2") },
		"another key":     func() (string, error) { return other.Open(s, "AUT-1") },
		"not base64":      func() (string, error) { return box.Open("%%%", "AUT-1") },
		"too short":       func() (string, error) { return box.Open("AAAA", "AUT-1") },
	} {
		if _, err := open(); !errors.Is(err, sealed.ErrOpen) {
			t.Errorf("%s: %v, want ErrOpen", name, err)
		}
	}
	if _, err := sealed.New(""); err == nil {
		t.Error("an empty secret was accepted")
	}
}
