package httpx

import "strings"

// routeLabel is the route template as metrics and the request log name it: Fiber's template
// without a trailing slash, which a route mounted at a group's root ("/" in group /clients)
// carries, so that /clients is one series however it was mounted. The root stays "/".
func routeLabel(template string) string {
	if t := strings.TrimRight(template, "/"); t != "" {
		return t
	}
	return template
}
