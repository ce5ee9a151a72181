package auth

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/platform/integrations/internal/httpx"
)

// ActionRecharge is the act claim of the top-up action token.
const ActionRecharge = "recharge"

// DefaultActionTokenTTL is the lifetime of a minted action token.
const DefaultActionTokenTTL = 5 * time.Minute

// HeaderActionToken carries the action token on POST /recharge.
const HeaderActionToken = "X-Action-Token"

// ErrInvalidActionToken: bad signature or alg, expired, wrong act, another user's, no jti. 401.
var ErrInvalidActionToken = errors.New("auth: invalid action token")

// ActionToken is a verified action token.
type ActionToken struct {
	// ID is the jti; the top-up store records it to accept each token once.
	ID        string
	Subject   string
	Action    string
	ExpiresAt time.Time
}

type actionClaims struct {
	Act string `json:"act"`
	jwt.RegisteredClaims
}

// ActionTokens mints and verifies single-purpose action tokens: HS256 with ACTION_TOKEN_SECRET,
// claims sub (the user), act "recharge", a unique jti and exp. Verification does not make a token
// single-use; the caller must record ActionToken.ID (see the package documentation).
type ActionTokens struct {
	secret []byte
	ttl    time.Duration
	now    func() time.Time
	parser *jwt.Parser
}

// ActionOption configures ActionTokens.
type ActionOption func(*ActionTokens) error

// WithActionTTL sets the lifetime of minted tokens (default 5 minutes).
func WithActionTTL(d time.Duration) ActionOption {
	return func(a *ActionTokens) error {
		if d <= 0 {
			return errors.New("auth: action token TTL must be positive")
		}
		a.ttl = d
		return nil
	}
}

// WithActionClock replaces time.Now, for tests.
func WithActionClock(now func() time.Time) ActionOption {
	return func(a *ActionTokens) error {
		if now == nil {
			return errors.New("auth: WithActionClock(nil)")
		}
		a.now = now
		return nil
	}
}

// NewActionTokens returns ActionTokens for secret (ACTION_TOKEN_SECRET).
func NewActionTokens(secret []byte, opts ...ActionOption) (*ActionTokens, error) {
	if len(secret) == 0 {
		return nil, errors.New("auth: empty action token secret")
	}
	a := &ActionTokens{secret: append([]byte(nil), secret...), ttl: DefaultActionTokenTTL, now: time.Now}
	for _, o := range opts {
		if err := o(a); err != nil {
			return nil, err
		}
	}
	a.parser = jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}), jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithTimeFunc(a.now))
	return a, nil
}

// Mint returns a new recharge action token for the user sub.
func (a *ActionTokens) Mint(sub string) (string, ActionToken, error) {
	if sub == "" {
		return "", ActionToken{}, errors.New("auth: action token needs a subject")
	}
	now := a.now()
	t := ActionToken{ID: uuid.NewString(), Subject: sub, Action: ActionRecharge, ExpiresAt: now.Add(a.ttl).Truncate(time.Second).UTC()}
	signed, err := jwt.NewWithClaims(jwt.SigningMethodHS256, actionClaims{
		Act: ActionRecharge,
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   sub,
			ID:        t.ID,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(t.ExpiresAt),
		},
	}).SignedString(a.secret)
	if err != nil {
		return "", ActionToken{}, err
	}
	return signed, t, nil
}

// Verify checks token (signature, HS256, exp, act "recharge", jti present) and that it belongs to
// the user sub. Errors wrap ErrInvalidActionToken.
func (a *ActionTokens) Verify(token, sub string) (ActionToken, error) {
	var c actionClaims
	tok, err := a.parser.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return a.secret, nil })
	if err != nil {
		return ActionToken{}, fmt.Errorf("%w: %w", ErrInvalidActionToken, err)
	}
	if err := noCrit(tok); err != nil {
		return ActionToken{}, fmt.Errorf("%w: %w", ErrInvalidActionToken, err)
	}
	switch {
	case c.Act != ActionRecharge:
		return ActionToken{}, fmt.Errorf("%w: act is not %s", ErrInvalidActionToken, ActionRecharge)
	case c.ID == "":
		return ActionToken{}, fmt.Errorf("%w: no jti", ErrInvalidActionToken)
	case c.Subject == "" || c.Subject != sub:
		return ActionToken{}, fmt.Errorf("%w: issued to another user", ErrInvalidActionToken)
	}
	return ActionToken{ID: c.ID, Subject: c.Subject, Action: c.Act, ExpiresAt: c.ExpiresAt.UTC()}, nil
}

const localsActionToken = "auth.action_token"

// RequireActionToken verifies X-Action-Token against the Bearer user that Require authenticated
// (it must run after Require) and stores it for ActionTokenFrom; a missing, invalid, expired or
// foreign token answers 401. It does not consume the token: the handler records its ID in the
// same step that accepts the request, and answers 401 when the ID was already used.
func RequireActionToken(a *ActionTokens) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p := PrincipalFrom(c)
		if p == nil || p.Claims == nil {
			return httpx.WrapError(http.StatusUnauthorized, "Missing credentials", ErrMissingCredentials)
		}
		raw := c.Get(HeaderActionToken)
		if raw == "" {
			return httpx.WrapError(http.StatusUnauthorized, "Missing action token", ErrInvalidActionToken)
		}
		t, err := a.Verify(raw, p.Claims.Subject)
		if err != nil {
			return httpx.WrapError(http.StatusUnauthorized, "Invalid or expired action token", err)
		}
		c.Locals(localsActionToken, t)
		return c.Next()
	}
}

// ActionTokenFrom returns the token RequireActionToken verified.
func ActionTokenFrom(c *fiber.Ctx) (ActionToken, bool) {
	t, ok := c.Locals(localsActionToken).(ActionToken)
	return t, ok
}
