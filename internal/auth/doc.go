// Package auth authenticates the services' requests: user tokens (Bearer JWT), service keys and
// single-use action tokens, as Fiber middleware.
//
// # User tokens
//
// A [Verifier] checks `Authorization: Bearer <jwt>`: [NewHS256Verifier] with JWT_SECRET, or
// [NewJWKSVerifier] with JWT_JWKS_URL ([NewVerifier] picks from the configuration). The allowed
// algorithms are fixed with jwt.WithValidMethods: HS256 only for the secret, asymmetric only
// (RS*, PS*, ES*, EdDSA) for a JWK Set, so alg "none" and algorithm confusion (HS256 keyed with a
// public key) fail. exp and sub are required; nbf is honoured when present; an iat in the future,
// an exp, nbf or iat that is not a JSON number, and any crit header are refused (strict.go, for
// action tokens too); issuer and audience
// are checked only when configured ([WithIssuer], [WithAudience]). Claims: sub, username, email,
// permissions (an array of strings). Verified tokens are cached by the SHA-256 of the token for
// 60 s ([WithCacheTTL]) but never past their exp, with an LRU bound of 10000 entries
// ([WithCacheSize]); [WithClock] injects time. Errors wrap [ErrTokenExpired] or [ErrInvalidToken].
//
// JWK Set: fetched at construction (a failure there is logged, not fatal; tokens are refused
// until a fetch succeeds), refreshed hourly and on an unknown kid at most every 5 minutes; each
// fetch is bounded by 10 s, and a request with an unknown kid waits at most 5 s.
//
// # Schemes per route
//
// [NewAuthenticator] holds the verifier and the keys ([WithServiceKey] for
// `Authorization: ServiceKey <key>`, CREDITSYSTEM_SERVICE_KEY; [WithHeaderKey] for
// `x-service-key`, TOPUP_SERVICE_KEY). Each route declares what it accepts:
//
//	app.Post("/consumo/cupo", auth.Require(a, auth.Bearer), h)                     // Bearer only
//	app.Post("/clients", auth.Require(a, auth.Bearer, auth.ServiceKey), h)         // either
//	app.Post("/clients/from-creditsystem", auth.Require(a, auth.ServiceKey), h)    // Bearer -> 401
//	app.Post("/webhook/invoice-recharge", auth.Require(a, auth.ServiceKeyHeader), h)
//	app.Get("/transactions", auth.Require(a, auth.Bearer), auth.RequirePermission("view_recargas"), h)
//
// The Authorization header is used when its scheme (case-insensitive) is accepted by the route;
// otherwise x-service-key when the route accepts it and it is present. The credential chosen must
// be valid: there is no fall-back to another one. Keys are compared in constant time on their
// SHA-256 (which also hides the configured key's length); an empty configured key disables its
// scheme. Failures answer 401 in the httpx envelope (messages "Missing credentials",
// "Authorization scheme not accepted on this endpoint", "Invalid token", "Token expired",
// "Invalid service key") with WWW-Authenticate: Bearer (or ServiceKey) on routes that accept
// those schemes; [RequirePermission] answers 403 "Missing permission: <perm>".
//
// [PrincipalFrom] gives handlers the [Principal]: Scheme, Claims (users only) and Origin:
// [OriginDashboard] ("dashboard") for a user token, [OriginCreditsystem] ("CREDITSYSTEM") for a
// ServiceKey (credit-service.md, Authentication rule 1: source_system), [OriginWorkflow]
// ("workflow-webhook") for x-service-key. Service keys hold no permissions.
//
// # Action tokens
//
// [ActionTokens] mints and verifies the top-up action token: HS256 with ACTION_TOKEN_SECRET,
// claims sub (the user), act "recharge", a random UUID jti, iat and exp (default lifetime 5
// minutes, [WithActionTTL]). [RequireActionToken] (after Require with Bearer) verifies
// X-Action-Token against the user's sub and stores the [ActionToken] for [ActionTokenFrom];
// failures answer 401 "Missing action token" / "Invalid or expired action token".
//
// Single use is NOT enforced here: the top-up domain records ActionToken.ID in its database (a
// unique key, kept at least until ActionToken.ExpiresAt) in the same step that accepts the
// request, and answers 401 when the ID is already recorded. That way the rule holds across
// service instances and restarts.
//
// [SignUserToken] signs user tokens for tests and services/devtoken.
package auth
