package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/modelgate/modelgate/internal/apikey"
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
// of a database and prints the key once; later starts do nothing.
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
	_, err = io.WriteString(a.out, firstKeyBlock(acct.Name, group, secret, listen, model))
	return err
}

// firstKeyBlock is the first-start message: one block, framed by rule
// lines and written in one piece to Options.Out (stdout), never through
// the logger, so it cannot end up inside a log record and, on a terminal
// or a stream shared with JSON log lines, stands apart from them: every
// line between the rules is the block's, every line outside them a log
// line.
func firstKeyBlock(account, group, secret, listen, model string) string {
	return fmt.Sprintf(`%[6]s modelgate: first start %[6]s
Created account %[1]q and an API key for group %[2]q.
The key is shown only this once and is never logged; keep it somewhere safe:

    %[3]s

Try it:

    curl http://%[4]s/v1/chat/completions \
      -H "Authorization: Bearer %[3]s" \
      -H "Content-Type: application/json" \
      -d '{"model": "%[5]s", "messages": [{"role": "user", "content": "Hello!"}]}'
%[7]s
`, account, group, secret, listen, model, strings.Repeat("=", 24), strings.Repeat("=", 72))
}
