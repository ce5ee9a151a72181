package main

import "github.com/gofiber/fiber/v2"

// registerRoutes mounts every module under /api/v1/credigestion. Each module has its own
// register function in its own file (clients.go: registerClientRoutes(api, s); consumo.go:
// registerConsumoRoutes(api, s)), called from here.
func (s *server) registerRoutes(api fiber.Router) {
	registerClientRoutes(api, s)
	registerConsumoRoutes(api, s)
}
