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
	if len(args) > 0 {
		switch args[0] {
		case "login-link":
			return adminLoginLink(args[1:], e)
		case "revoke":
			return adminRevoke(args[1:], e)
		}
	}
	fmt.Fprint(e.stderr, "usage: modelgate admin login-link [--account NAME] [--url BASE]\n       modelgate admin revoke ACCOUNT\n")
	return 2
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

// adminRevoke takes the admin role from an account: it clears the flag a
// login link set. Open console sessions lose the admin pages at once (the
// role is read on every request). A role console.admins grants to one of
// the account's sign-ins stays until that entry is removed, and the
// command says so and fails.
func adminRevoke(args []string, e env) int {
	fs, path := newFlags("admin revoke", e)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "usage: modelgate admin revoke ACCOUNT")
		return 2
	}
	return withStore(*path, e, func(ctx context.Context, cfg *config.Config, st store.Store) error {
		a, err := findAccount(ctx, st, pos[0])
		if err != nil {
			return err
		}
		if err := st.SetAccountAdmin(ctx, a.ID, false); err != nil {
			return fmt.Errorf("revoke admin: %w", err)
		}
		if cfg.Console != nil {
			ids, err := st.ListIdentities(ctx, a.ID)
			if err != nil {
				return fmt.Errorf("revoke admin: %w", err)
			}
			if by := console.AdminEntry(cfg.Console.Admins, ids); by != "" {
				return fmt.Errorf("account %q keeps the admin role: console.admins grants it through %s; remove that entry from the config and restart", a.Name, by)
			}
		}
		if a.Admin {
			fmt.Fprintf(e.stdout, "account %q is no longer admin; its open console sessions lost the admin pages\n", a.Name)
		} else {
			fmt.Fprintf(e.stdout, "account %q was not admin; nothing changed\n", a.Name)
		}
		return nil
	})
}
