// Command devtoken prints a user token, or with -action an action token, for local use against
// services running in development mode.
//
//	go run ./services/devtoken -sub u-1 -permissions create_recargas,view_recargas
//	go run ./services/devtoken -action -sub u-1
//
// User tokens are HS256 JWTs signed with JWT_SECRET (default: the development default of the
// services, "dev-secret-change-me") with claims sub, username, email, permissions, iat and exp
// (-ttl, default 1h). Action tokens are HS256 JWTs signed with ACTION_TOKEN_SECRET (default
// "dev-action-secret-change-me") with claims sub, act "recharge", a random jti, iat and exp (-ttl,
// default 5m); send them as X-Action-Token together with a user token for the same -sub.
// The token alone goes to standard output, so it composes with the shell:
//
//	curl -H "Authorization: Bearer $(go run ./services/devtoken)" ...
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/platform/integrations/internal/auth"
	"github.com/platform/integrations/internal/config"
)

const defaultUserTTL = time.Hour

func main() {
	if err := run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr, time.Now); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "devtoken:", err)
		}
		os.Exit(2)
	}
}

// run is the command without the process: flags in args, secrets from getenv, token to out.
func run(args []string, getenv func(string) string, out, errOut io.Writer, now func() time.Time) error {
	fs := flag.NewFlagSet("devtoken", flag.ContinueOnError)
	fs.SetOutput(errOut)
	sub := fs.String("sub", "dev-user", "subject (sub claim): the user id")
	username := fs.String("username", "dev", "username claim")
	email := fs.String("email", "dev@example.com", "email claim")
	perms := fs.String("permissions", "create_recargas,view_recargas", "comma-separated permissions claim")
	ttl := fs.Duration("ttl", 0, "lifetime (default 1h for a user token, 5m for an action token)")
	action := fs.Bool("action", false, "print an action token (act=recharge) for -sub instead of a user token")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if *ttl < 0 {
		return errors.New("-ttl must be positive")
	}
	if strings.TrimSpace(*sub) == "" {
		return errors.New("-sub must not be empty")
	}

	if *action {
		secret := secretFrom(getenv, "ACTION_TOKEN_SECRET", config.DevActionTokenSecret)
		opts := []auth.ActionOption{auth.WithActionClock(now)}
		if *ttl > 0 {
			opts = append(opts, auth.WithActionTTL(*ttl))
		}
		at, err := auth.NewActionTokens(secret, opts...)
		if err != nil {
			return err
		}
		tok, _, err := at.Mint(*sub)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(out, tok)
		return err
	}

	lifetime := defaultUserTTL
	if *ttl > 0 {
		lifetime = *ttl
	}
	issued := now()
	tok, err := auth.SignUserToken(secretFrom(getenv, "JWT_SECRET", config.DevJWTSecret), auth.Claims{
		Subject:     *sub,
		Username:    *username,
		Email:       *email,
		Permissions: splitPermissions(*perms),
		IssuedAt:    issued,
		ExpiresAt:   issued.Add(lifetime),
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, tok)
	return err
}

func secretFrom(getenv func(string) string, name, devDefault string) []byte {
	if v := getenv(name); v != "" {
		return []byte(v)
	}
	return []byte(devDefault)
}

func splitPermissions(s string) []string {
	perms := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			perms = append(perms, p)
		}
	}
	return perms
}
