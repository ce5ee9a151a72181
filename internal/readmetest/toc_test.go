package readmetest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestREADMETableOfContents checks that the table of contents heading the README (between
// <!-- toc --> and <!-- /toc -->) links every ## and ### section, in order, with GitHub's
// anchors, and nothing else.
func TestREADMETableOfContents(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(moduleRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(text)
	begin, end := strings.Index(s, "<!-- toc -->"), strings.Index(s, "<!-- /toc -->")
	if begin < 0 || end < begin {
		t.Fatal("README.md has no table of contents between <!-- toc --> and <!-- /toc -->")
	}
	if first := strings.Index(s, "\n## "); first >= 0 && first < begin {
		t.Error("the table of contents must come before the first section")
	}

	var want []string
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		m := headingRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		anchor := slug(m[2])
		if n := seen[anchor]; n > 0 {
			seen[anchor] = n + 1
			anchor = fmt.Sprintf("%s-%d", anchor, n)
		} else {
			seen[anchor] = 1
		}
		if level := len(m[1]); level == 2 || level == 3 {
			want = append(want, fmt.Sprintf("%s- [%s](#%s)", strings.Repeat("  ", level-2), m[2], anchor))
		}
	}
	var got []string
	for _, line := range strings.Split(s[begin:end], "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "- [") {
			got = append(got, strings.TrimRight(line, " "))
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the table of contents does not match the sections; it should read:\n%s\n\nit reads:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
}

var headingRe = regexp.MustCompile(`^(#{1,6}) (.+?)\s*$`)

// slug is GitHub's anchor of a heading: lower case, punctuation dropped (letters, digits, "_"
// and "-" stay), spaces turned into "-".
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
