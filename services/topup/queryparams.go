package main

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/internal/httpx"
)

// Query parameters of the routes that read one. Every top-up GET route checks its query against
// its list: a parameter it does not take, a misspelt one (statuss, Status, perpage) included, is a
// 400 naming it rather than a filter silently not applied.
var (
	listParams = []string{"page", "per_page", "subscriber_id", "status", "source", "from", "to"}
	// The detail and the inventory take none.
	noParams []string
)

// Bounds of the unknown-parameter problem: a name is shown up to maxParamName characters, and at
// most maxUnknownParams names, so a crafted query cannot make the answer large.
const (
	maxParamName     = 64
	maxUnknownParams = 10
)

// unknownQuery is the problem "unknown query parameter(s): a, b" naming, in the order sent and
// once each, the request's query parameters that are not in known; "" when there is none. A name
// that is empty or holds a blank, comma, quote or control character is written quoted; a long
// one is cut; beyond maxUnknownParams names the rest is counted.
func unknownQuery(c *fiber.Ctx, known []string) string {
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

// showParam writes a parameter name for the problem: as it is when it is plain text, quoted
// (Go syntax, ASCII) when it is empty or holds something that would blur the list.
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

// onlyQuery is the middleware of a route that takes the query parameters known (none when
// empty): any other parameter is a 400 in the validation envelope. It runs after the
// authentication, so a caller without credentials learns nothing about the parameters.
func onlyQuery(known []string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if p := unknownQuery(c, known); p != "" {
			return httpx.ValidationError(p)
		}
		return c.Next()
	}
}
