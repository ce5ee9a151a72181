package auth_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/httpx"
)

func ExampleRequire() {
	secret := []byte("example-secret")
	v, err := auth.NewHS256Verifier(secret)
	if err != nil {
		panic(err)
	}
	a := auth.NewAuthenticator(v, auth.WithServiceKey("cs-key"))

	app := httpx.New(httpx.Config{Service: "example"})
	origin := func(c *fiber.Ctx) error { return c.SendString(auth.PrincipalFrom(c).Origin) }
	app.Post("/clients", auth.Require(a, auth.Bearer, auth.ServiceKey), origin)
	app.Post("/clients/from-creditsystem", auth.Require(a, auth.ServiceKey), origin)

	user, _ := auth.SignUserToken(secret, auth.Claims{Subject: "u-1", ExpiresAt: time.Now().Add(time.Hour)})
	for _, tc := range []struct{ path, authorization string }{
		{"/clients", "Bearer " + user},
		{"/clients", "ServiceKey cs-key"},
		{"/clients/from-creditsystem", "Bearer " + user},
		{"/clients/from-creditsystem", "ServiceKey wrong"},
		{"/clients/from-creditsystem", ""},
	} {
		req := httptest.NewRequest("POST", tc.path, nil)
		if tc.authorization != "" {
			req.Header.Set("Authorization", tc.authorization)
		}
		res, err := app.Test(req)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(res.Body)
		fmt.Println(res.StatusCode, string(body))
	}
	// Output:
	// 200 dashboard
	// 200 CREDITSYSTEM
	// 401 {"status":"error","statusCode":401,"message":"Authorization scheme not accepted on this endpoint"}
	// 401 {"status":"error","statusCode":401,"message":"Invalid service key"}
	// 401 {"status":"error","statusCode":401,"message":"Missing credentials"}
}
