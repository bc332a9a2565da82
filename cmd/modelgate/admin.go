package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/console"
	"github.com/modelgate/modelgate/internal/store"
)

func adminCmd(args []string, e env) int {
	if len(args) == 0 || args[0] != "login-link" {
		fmt.Fprint(e.stderr, "usage: modelgate admin login-link [--account NAME] [--url BASE]\n")
		return 2
	}
	return adminLoginLink(args[1:], e)
}

// adminLoginLink prints a one-time console sign-in link with the admin
// role, valid for 15 minutes: how the first operator gets in.
func adminLoginLink(args []string, e env) int {
	fs, path := newFlags("admin login-link", e)
	account := fs.String("account", console.DefaultAdminAccount, "the account to sign in as (created on first use if missing)")
	base := fs.String("url", "", "the gateway's external base URL (default: public_url or console.public_url, else http://<listen>)")
	if _, err := parseFlags(fs, args); err != nil {
		return 2
	}
	if strings.TrimSpace(*account) == "" {
		fmt.Fprintln(e.stderr, "modelgate admin login-link: --account must not be empty")
		return 2
	}
	return withStore(*path, e, func(ctx context.Context, cfg *config.Config, st store.Store) error {
		if cfg.Console == nil {
			return errors.New("the console is off: add a console: section to the config first")
		}
		secret, link := console.NewLoginLink(*account, time.Now().UTC())
		if err := st.CreateLoginLink(ctx, link); err != nil {
			return fmt.Errorf("create login link: %w", err)
		}
		fmt.Fprintf(e.stdout, "%s/console/admin-link?token=%s\n", linkBase(cfg, *base), secret)
		fmt.Fprintf(e.stderr, "signs in as %q with the admin role; works once, until %s\n",
			*account, link.ExpiresAt.Format(time.RFC3339))
		return nil
	})
}

// linkBase is the origin to print links with.
func linkBase(cfg *config.Config, flagURL string) string {
	switch {
	case flagURL != "":
		return strings.TrimRight(flagURL, "/")
	case cfg.Console.PublicURL != "":
		return strings.TrimRight(cfg.Console.PublicURL, "/")
	}
	host := cfg.Listen
	if strings.HasPrefix(host, ":") || strings.HasPrefix(host, "0.0.0.0:") {
		host = "localhost:" + host[strings.LastIndexByte(host, ':')+1:]
	}
	return "http://" + host
}
