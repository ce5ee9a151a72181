package httpx

import (
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/cors"
)

// CORS headers: what a browser may send and read. Credentials (cookies) are never allowed: the
// API authenticates with headers.
const (
	corsAllowMethods  = "GET,HEAD,POST,PUT,OPTIONS"
	corsAllowHeaders  = "Authorization,Content-Type,Idempotency-Key,X-Request-Id,X-Action-Token,x-service-key"
	corsExposeHeaders = "X-Request-Id,Idempotent-Replayed"
	corsMaxAge        = 600
)

// corsHandler answers preflights and sets Access-Control-Allow-Origin for the given origins
// ("*" allows any).
func corsHandler(origins []string) fiber.Handler {
	return cors.New(cors.Config{
		AllowOrigins:  strings.Join(origins, ","),
		AllowMethods:  corsAllowMethods,
		AllowHeaders:  corsAllowHeaders,
		ExposeHeaders: corsExposeHeaders,
		MaxAge:        corsMaxAge,
	})
}
