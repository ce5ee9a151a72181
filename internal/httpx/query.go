package httpx

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/gofiber/fiber/v2"
)

// Bounds of the unknown-parameter problem: a name is shown up to maxParamName characters, and at
// most maxUnknownParams names, so that a crafted query cannot make the answer large.
const (
	maxParamName     = 64
	maxUnknownParams = 10
)

// UnknownQuery is the validation problem "unknown query parameter(s): a, b" naming, in the order
// sent and once each, the request's query parameters that are not in known (compared exactly:
// perpage and Per_Page are not per_page); "" when there is none. A name that is empty or holds a
// blank, comma, quote or control character is written quoted (Go syntax, ASCII); one longer than
// 64 characters is cut; past ten names the rest is counted ("and 3 more").
//
// A route that reports other problems of its query appends this one to them, so that one answer
// lists them all; a route that reads no other parameter uses [OnlyQuery].
func UnknownQuery(c *fiber.Ctx, known ...string) string {
	var names []string
	seen := map[string]bool{}
	extra := 0
	c.Context().QueryArgs().VisitAll(func(k, _ []byte) {
		name := string(k)
		if slices.Contains(known, name) || seen[name] {
			return
		}
		seen[name] = true
		if len(names) == maxUnknownParams {
			extra++
			return
		}
		names = append(names, showParam(name))
	})
	if len(names) == 0 {
		return ""
	}
	msg := "unknown query parameter(s): " + strings.Join(names, ", ")
	if extra > 0 {
		msg += " and " + strconv.Itoa(extra) + " more"
	}
	return msg
}

// showParam writes a parameter name for the problem: as it is when it is plain text, quoted when
// it is empty or holds something that would blur the list.
func showParam(name string) string {
	if r := []rune(name); len(r) > maxParamName {
		name = string(r[:maxParamName]) + "…"
	}
	plain := name != "" && !strings.ContainsFunc(name, func(r rune) bool {
		return r == ',' || r == '"' || unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar
	})
	if plain {
		return name
	}
	return strconv.QuoteToASCII(name)
}

// OnlyQuery is the middleware of a route that takes only the query parameters known (none when
// empty): any other is a 400 [ValidationError] naming it ([UnknownQuery]), rather than a filter
// silently not applied. Mount it after the authentication, so that a caller without credentials
// learns nothing about the parameters.
func OnlyQuery(known ...string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if p := UnknownQuery(c, known...); p != "" {
			return ValidationError(p)
		}
		return c.Next()
	}
}
