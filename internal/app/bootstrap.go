package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/apikey"
	"github.com/modelgate/modelgate/internal/console"
	"github.com/modelgate/modelgate/internal/store"
)

// NewID returns prefix + 16 random hex digits, unique across replicas
// without coordination.
func NewID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Bootstrap creates the first account and API key on the very first start
// of a database and prints the key once; later starts do nothing. Without
// a config file (config.ZeroConfig), when the console is on, the account
// is also made an operator (the admin role) and the block carries a
// one-time console sign-in link for it (console.NewLoginLink, as
// `modelgate admin login-link` makes): the way in to a console that has no
// sign-in provider.
func (a *App) Bootstrap(ctx context.Context, listen string) error {
	group := "default"
	if _, ok := a.cfg.Groups[group]; !ok {
		names := make([]string, 0, len(a.cfg.Groups))
		for n := range a.cfg.Groups {
			names = append(names, n)
		}
		sort.Strings(names)
		if len(names) == 0 {
			return fmt.Errorf("bootstrap: no groups configured")
		}
		group = names[0]
	}
	now := a.nowUTC()
	acct := store.Account{ID: NewID("acct_"), Name: "default", CreatedAt: now}
	secret, display, hash := apikey.Generate()
	key := store.Key{ID: NewID("key_"), AccountID: acct.ID, Group: group, Name: "first key",
		Prefix: display, Hash: hash, CreatedAt: now}
	created, err := a.store.Bootstrap(ctx, acct, key, a.cfg.Billing.DemoCredit.Micros())
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if !created {
		return nil
	}
	a.log.Info("first start: created account and API key; the key is printed once on stdout, never in the log",
		"account", acct.Name, "key", key.ID, "group", group)
	model := "demo-chat"
	if ms := a.router.Models(); len(ms) > 0 {
		model = ms[0].ID
		if _, ok := a.router.Model("demo-chat"); ok {
			model = "demo-chat"
		}
	}
	link := ""
	if a.cfg.Zero && a.con != nil {
		if link, err = a.operatorLink(ctx, acct, listen); err != nil {
			return fmt.Errorf("bootstrap: %w", err)
		}
		a.log.Info("first start: the account is the console's operator; its one-time sign-in link is printed on stdout, never in the log",
			"account", acct.Name)
	}
	_, err = io.WriteString(a.out, firstKeyBlock(acct.Name, group, secret, listen, model, link))
	return err
}

// operatorLink gives acct the admin role and returns a one-time console
// sign-in link for it on listen.
func (a *App) operatorLink(ctx context.Context, acct store.Account, listen string) (string, error) {
	if err := a.store.SetAccountAdmin(ctx, acct.ID, true); err != nil {
		return "", fmt.Errorf("make the first account an operator: %w", err)
	}
	token, l := console.NewLoginLink(acct.Name, a.nowUTC())
	if err := a.store.CreateLoginLink(ctx, l); err != nil {
		return "", fmt.Errorf("create the operator's sign-in link: %w", err)
	}
	return "http://" + listen + "/console/admin-link?token=" + token, nil
}

// firstKeyBlock is the first-start message: one block, framed by rule
// lines and written in one piece to Options.Out (stdout), never through
// the logger, so it cannot end up inside a log record and, on a terminal
// or a stream shared with JSON log lines, stands apart from them: every
// line between the rules is the block's, every line outside them a log
// line.
//
// link, when not "", is the operator's console sign-in link, shown with
// how to get another once it is used or expired.
func firstKeyBlock(account, group, secret, listen, model, link string) string {
	signIn := ""
	if link != "" {
		signIn = fmt.Sprintf(`
Open the web console as %[1]q, its operator (this link works once, for %[2]s;
for another, run: modelgate admin login-link --account %[1]s):

    %[3]s
`, account, consoleLinkTTL(), link)
	}
	return fmt.Sprintf(`%[6]s modelgate: first start %[6]s
Created account %[1]q and an API key for group %[2]q.
The key is shown only this once and is never logged; keep it somewhere safe:

    %[3]s

Try it:

    curl http://%[4]s/v1/chat/completions \
      -H "Authorization: Bearer %[3]s" \
      -H "Content-Type: application/json" \
      -d '{"model": "%[5]s", "messages": [{"role": "user", "content": "Hello!"}]}'
%[8]s%[7]s
`, account, group, secret, listen, model, strings.Repeat("=", 24), strings.Repeat("=", 72), signIn)
}

// consoleLinkTTL is how long a sign-in link works, in words ("15 minutes").
func consoleLinkTTL() string {
	return strconv.Itoa(int(console.AdminLinkTTL.Minutes())) + " minutes"
}
