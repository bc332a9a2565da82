package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/modelgate/modelgate/internal/apikey"
	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

func keysCmd(args []string, e env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, "usage: modelgate keys create|list|limits|revoke ...\n")
		return 2
	}
	switch args[0] {
	case "create":
		return keysCreate(args[1:], e)
	case "list":
		return keysList(args[1:], e)
	case "revoke":
		return keysRevoke(args[1:], e)
	case "limits":
		return keysLimits(args[1:], e)
	default:
		fmt.Fprintf(e.stderr, "modelgate keys: unknown subcommand %q (create, list, limits, revoke)\n", args[0])
		return 2
	}
}

// keysCreate prints only the new secret on stdout, so scripts can capture it.
func keysCreate(args []string, e env) int {
	fs, path := newFlags("keys create", e)
	group := fs.String("group", "", "model group the key is bound to (required)")
	account := fs.String("account", "", "account name; created if missing (default: a new account of its own)")
	name := fs.String("name", "", "a label for the key")
	capStr := fs.String("spend-cap", "", "the most the key may ever spend, e.g. 25 or 0.5 (default: no cap)")
	expires := fs.String("expires", "", "lifetime, e.g. 30d, 12h, or an RFC 3339 time (default: never)")
	limits := limitFlags(fs)
	if _, err := parseFlags(fs, args); err != nil {
		return 2
	}
	if err := limits.check(); err != nil {
		fmt.Fprintf(e.stderr, "modelgate keys create: %v\n", err)
		return 2
	}
	if *group == "" {
		fmt.Fprintln(e.stderr, "modelgate keys create: --group is required")
		return 2
	}
	now := time.Now().UTC()
	var spendCap money.Micros
	if *capStr != "" {
		v, err := money.Parse(*capStr)
		if err != nil || v <= 0 {
			fmt.Fprintf(e.stderr, "modelgate keys create: --spend-cap: want a positive amount with at most 6 decimals, got %q\n", *capStr)
			return 2
		}
		spendCap = v
	}
	var expiresAt time.Time
	if *expires != "" {
		t, err := parseExpiry(*expires, now)
		if err != nil {
			fmt.Fprintf(e.stderr, "modelgate keys create: --expires: %v\n", err)
			return 2
		}
		expiresAt = t
	}
	return withStore(*path, e, func(ctx context.Context, cfg *config.Config, st store.Store) error {
		if _, ok := cfg.Groups[*group]; !ok {
			return fmt.Errorf("unknown group %q (configured: %s)", *group, strings.Join(groupNames(cfg), ", "))
		}
		keyID := app.NewID("key_")
		acct, err := accountFor(ctx, st, *account, keyID, now)
		if err != nil {
			return err
		}
		secret, display, hash := apikey.Generate()
		k := store.Key{ID: keyID, AccountID: acct.ID, Group: *group, Name: *name, Prefix: display, Hash: hash, CreatedAt: now,
			SpendCap: spendCap, ExpiresAt: expiresAt, Limits: limits.KeyLimits}
		if err := st.CreateKey(ctx, k); err != nil {
			return fmt.Errorf("create key: %w", err)
		}
		fmt.Fprintln(e.stdout, secret)
		fmt.Fprintf(e.stderr, "created %s (%s…) in group %q for account %q; the secret above is shown only once\n",
			k.ID, k.Prefix, k.Group, acct.Name)
		return nil
	})
}

// parseExpiry reads a lifetime ("30d", "12h", "90m") or an RFC 3339 time
// in the future.
func parseExpiry(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		if !t.After(now) {
			return time.Time{}, fmt.Errorf("%s is not in the future", s)
		}
		return t.UTC(), nil
	}
	d, err := parseLifetime(s)
	if err != nil || d <= 0 {
		return time.Time{}, fmt.Errorf("want a lifetime like 30d or 12h, or an RFC 3339 time; got %q", s)
	}
	return now.Add(d), nil
}

// parseLifetime is time.ParseDuration plus a "d" (24h) unit.
func parseLifetime(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days <= 0 || days > 100*365 {
			return 0, fmt.Errorf("bad day count %q", n)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// accountFor finds or creates the named account; with no name, the key
// gets an account of its own named after it.
func accountFor(ctx context.Context, st store.Store, name, keyID string, now time.Time) (store.Account, error) {
	if name == "" {
		name = keyID
	}
	a, err := st.AccountByName(ctx, name)
	if err == nil {
		return a, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return a, fmt.Errorf("find account: %w", err)
	}
	a = store.Account{ID: app.NewID("acct_"), Name: name, CreatedAt: now}
	if err := st.CreateAccount(ctx, a); err != nil {
		if errors.Is(err, store.ErrConflict) { // created meanwhile by another process
			return st.AccountByName(ctx, name)
		}
		return a, fmt.Errorf("create account: %w", err)
	}
	return a, nil
}

func groupNames(cfg *config.Config) []string {
	var names []string
	for n := range cfg.Groups {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

type keyJSON struct {
	ID        string     `json:"id"`
	Prefix    string     `json:"prefix"`
	Account   string     `json:"account"`
	Group     string     `json:"group"`
	Name      string     `json:"name"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
	ExpiresAt *time.Time `json:"expires_at"`
	SpendCap  *string    `json:"spend_cap"`
	Spent     string     `json:"spent"`
	// Limits are the key's own rate limits (null: none, its group's apply).
	Limits *keyLimitsJSON `json:"limits"`
}

// keyLimitsJSON is store.KeyLimits in keys list --json (0: no limit).
type keyLimitsJSON struct {
	RPM         int64 `json:"rpm"`
	TPM         int64 `json:"tpm"`
	Concurrency int64 `json:"concurrency"`
}

func keysList(args []string, e env) int {
	fs, path := newFlags("keys list", e)
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseFlags(fs, args); err != nil {
		return 2
	}
	return withStore(*path, e, func(ctx context.Context, _ *config.Config, st store.Store) error {
		keys, err := st.ListKeys(ctx)
		if err != nil {
			return fmt.Errorf("list keys: %w", err)
		}
		if *asJSON {
			out := make([]keyJSON, 0, len(keys))
			for _, k := range keys {
				j := keyJSON{ID: k.ID, Prefix: k.Prefix, Account: k.AccountName, Group: k.Group, Name: k.Name,
					CreatedAt: k.CreatedAt, Spent: k.Spent.String()}
				if k.Revoked() {
					t := k.RevokedAt
					j.RevokedAt = &t
				}
				if !k.ExpiresAt.IsZero() {
					t := k.ExpiresAt
					j.ExpiresAt = &t
				}
				if k.SpendCap > 0 {
					c := k.SpendCap.String()
					j.SpendCap = &c
				}
				if l := k.Limits; l != (store.KeyLimits{}) {
					j.Limits = &keyLimitsJSON{RPM: l.RPM, TPM: l.TPM, Concurrency: l.Concurrency}
				}
				out = append(out, j)
			}
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tPREFIX\tACCOUNT\tGROUP\tNAME\tCREATED\tSPENT\tCAP\tSTATUS")
		now := time.Now()
		for _, k := range keys {
			status := "active"
			switch {
			case k.Revoked():
				status = "revoked " + k.RevokedAt.Format(time.DateTime)
			case k.Expired(now):
				status = "expired " + k.ExpiresAt.Format(time.DateTime)
			case !k.ExpiresAt.IsZero():
				status = "active until " + k.ExpiresAt.Format(time.DateTime)
			}
			limit := "-"
			if k.SpendCap > 0 {
				limit = k.SpendCap.String()
			}
			fmt.Fprintf(tw, "%s\t%s…\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Prefix, k.AccountName, k.Group, k.Name,
				k.CreatedAt.Format(time.DateTime), k.Spent, limit, status)
		}
		return tw.Flush()
	})
}

func keysRevoke(args []string, e env) int {
	fs, path := newFlags("keys revoke", e)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "usage: modelgate keys revoke ID|PREFIX")
		return 2
	}
	return withStore(*path, e, func(ctx context.Context, cfg *config.Config, st store.Store) error {
		k, err := st.RevokeKey(ctx, pos[0], time.Now().UTC())
		if err != nil {
			return keyError(err, pos[0], "revoke")
		}
		fmt.Fprintf(e.stdout, "revoked %s (%s…); a running gateway refuses it within %s\n",
			k.ID, k.Prefix, time.Duration(cfg.AuthCacheTTL))
		return nil
	})
}

// keyError is the message of a failed change to the key named by arg (an
// id or prefix): none or several match, or the store failed doing what.
func keyError(err error, arg, what string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("no key matches %q", arg)
	case errors.Is(err, store.ErrAmbiguous):
		return fmt.Errorf("%q matches more than one key; give more of the prefix or the key id", arg)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// keyLimitFlags are the --rpm, --tpm and --concurrency flags.
type keyLimitFlags struct{ store.KeyLimits }

func limitFlags(fs *flag.FlagSet) *keyLimitFlags {
	l := &keyLimitFlags{}
	fs.Int64Var(&l.RPM, "rpm", 0, "requests per minute the key may send (0: its group's limit, if any)")
	fs.Int64Var(&l.TPM, "tpm", 0, "tokens per minute (prompt and output) the key may use (0: its group's limit, if any)")
	fs.Int64Var(&l.Concurrency, "concurrency", 0, "requests of the key that may run at once (0: its group's limit, if any)")
	return l
}

func (l *keyLimitFlags) check() error {
	if l.RPM < 0 || l.TPM < 0 || l.Concurrency < 0 {
		return errors.New("--rpm, --tpm and --concurrency take a count, 0 for none")
	}
	return nil
}

// keysLimits replaces a key's own rate limits: a limit not given is none
// of the key's own (its group's applies), so "keys limits KEY" clears them.
func keysLimits(args []string, e env) int {
	fs, path := newFlags("keys limits", e)
	limits := limitFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.stderr, "usage: modelgate keys limits ID|PREFIX [--rpm N] [--tpm N] [--concurrency N] (a limit not given is cleared)")
		return 2
	}
	if err := limits.check(); err != nil {
		fmt.Fprintf(e.stderr, "modelgate keys limits: %v\n", err)
		return 2
	}
	return withStore(*path, e, func(ctx context.Context, cfg *config.Config, st store.Store) error {
		k, err := st.SetKeyLimits(ctx, pos[0], limits.KeyLimits)
		if err != nil {
			return keyError(err, pos[0], "set limits")
		}
		l := k.Limits
		fmt.Fprintf(e.stdout, "%s (%s…): rpm %d, tpm %d, concurrency %d (0: the group's); a running gateway applies them within %s\n",
			k.ID, k.Prefix, l.RPM, l.TPM, l.Concurrency, time.Duration(cfg.AuthCacheTTL))
		return nil
	})
}
