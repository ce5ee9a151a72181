package auth

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/golang-jwt/jwt/v5"
)

// Checks both kinds of token get beyond what golang-jwt does by itself (its parser also takes
// WithIssuedAt, so an iat in the future is refused):
//
//   - exp, nbf and iat must be JSON numbers: golang-jwt reads "1700000000", a string, as a date;
//   - a crit header is refused: it names extensions the token requires its reader to
//     understand (RFC 7515, 4.1.11), and this reader understands none.

// numericDates refuses a claims object whose exp, nbf or iat is not a JSON number.
func numericDates(claims []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(claims, &m); err != nil {
		return err
	}
	for _, name := range []string{"exp", "nbf", "iat"} {
		raw, ok := m[name]
		if !ok {
			continue
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
			return fmt.Errorf("%s must be a number", name)
		}
	}
	return nil
}

// noCrit refuses a token with a crit header.
func noCrit(t *jwt.Token) error {
	if _, ok := t.Header["crit"]; ok {
		return errors.New("crit header names extensions this service does not understand")
	}
	return nil
}

// UnmarshalJSON reads the claims after checking that their dates are numbers.
func (c *userClaims) UnmarshalJSON(b []byte) error {
	if err := numericDates(b); err != nil {
		return err
	}
	type plain userClaims
	return json.Unmarshal(b, (*plain)(c))
}

// UnmarshalJSON reads the claims after checking that their dates are numbers.
func (c *actionClaims) UnmarshalJSON(b []byte) error {
	if err := numericDates(b); err != nil {
		return err
	}
	type plain actionClaims
	return json.Unmarshal(b, (*plain)(c))
}
