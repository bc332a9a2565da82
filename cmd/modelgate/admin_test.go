package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/store"
)

func TestAdminLoginLink(t *testing.T) {
	tests := []struct {
		name, extra string
		args        []string
		code        int
		link        string // a regexp the stdout must match
		errText     string
	}{
		{name: "public url", extra: "console:\n  public_url: https://gw.example.com/\n", args: []string{"admin", "login-link"},
			link: `^https://gw\.example\.com/console/admin-link\?token=[A-Za-z0-9_-]{43}\n$`, errText: `signs in as "admin"`},
		{name: "listen address", extra: "listen: localhost:9090\nconsole: {}\n", args: []string{"admin", "login-link", "--account", "ops"},
			link: `^http://localhost:9090/console/admin-link\?token=`, errText: `signs in as "ops"`},
		{name: "top-level public url", extra: "listen: 0.0.0.0:9090\npublic_url: https://gw.example.com\nconsole: {}\n", args: []string{"admin", "login-link"},
			link: `^https://gw\.example\.com/console/admin-link\?token=`},
		{name: "public listener without public url", extra: "listen: :9090\nconsole: {}\n", args: []string{"admin", "login-link"}, code: 1,
			errText: "console: listen :9090 is not a loopback address, so set public_url"},
		{name: "url flag", extra: "console: {}\n", args: []string{"admin", "login-link", "--url", "http://10.0.0.5:8080"},
			link: `^http://10\.0\.0\.5:8080/console/admin-link\?token=`},
		{name: "console off", args: []string{"admin", "login-link"}, code: 1, errText: "the console is off"},
		{name: "empty account", extra: "console: {}\n", args: []string{"admin", "login-link", "--account", " "}, code: 2, errText: "--account must not be empty"},
		{name: "unknown subcommand", args: []string{"admin", "promote"}, code: 2, errText: "modelgate admin revoke ACCOUNT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t, tt.extra)
			code, out, errOut := c.run(tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.errText) {
				t.Fatalf("exit %d, stderr %q; want %d with %q", code, errOut, tt.code, tt.errText)
			}
			if tt.code != 0 {
				return
			}
			if !regexp.MustCompile(tt.link).MatchString(out) {
				t.Fatalf("stdout %q does not match %s", out, tt.link)
			}
			// The stored link works once, for 15 minutes.
			token := out[strings.Index(out, "token=")+6 : len(out)-1]
			sum := sha256.Sum256([]byte(token))
			c.withDB(func(ctx context.Context, st store.Store) {
				if _, err := st.UseLoginLink(ctx, sum[:], time.Now().Add(16*time.Minute)); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("after 16 minutes: %v, want not found", err)
				}
				if _, err := st.UseLoginLink(context.Background(), sum[:], time.Now()); err != nil {
					t.Errorf("use: %v", err)
				}
			})
		})
	}
}

func TestAdminRevoke(t *testing.T) {
	c := newCLI(t, "console:\n  admins: [\"github:4242\"]\n  oauth:\n    - {name: github, type: github, client_id: id, client_secret: s3cret}\n")
	c.withDB(func(ctx context.Context, st store.Store) {
		now := time.Now().UTC()
		for _, a := range []store.Account{{ID: "acct_ops", Name: "ops"}, {ID: "acct_boss", Name: "github:boss"}, {ID: "acct_user", Name: "user"}} {
			a.CreatedAt = now
			if err := st.CreateAccount(ctx, a); err != nil {
				t.Fatal(err)
			}
			if a.ID != "acct_user" {
				if err := st.SetAccountAdmin(ctx, a.ID, true); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := st.LinkIdentity(ctx, store.Identity{Provider: "github", Subject: "4242", AccountID: "acct_boss", CreatedAt: now, LastSeenAt: now}); err != nil {
			t.Fatal(err)
		}
	})
	tests := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"no account", []string{"admin", "revoke"}, 2, "", "usage: modelgate admin revoke ACCOUNT"},
		{"unknown account", []string{"admin", "revoke", "nobody"}, 1, "", `no account named "nobody"`},
		{"flagged admin", []string{"admin", "revoke", "ops"}, 0, `account "ops" is no longer admin`, ""},
		{"again", []string{"admin", "revoke", "ops"}, 0, `account "ops" was not admin; nothing changed`, ""},
		{"granted by the config too", []string{"admin", "revoke", "github:boss"}, 1, "",
			`account "github:boss" keeps the admin role: console.admins grants it through github:4242`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := c.run(tt.args...)
			if code != tt.code || !strings.Contains(out, tt.out) || !strings.Contains(errOut, tt.err) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out, errOut, tt.code, tt.out, tt.err)
			}
		})
	}
	c.withDB(func(ctx context.Context, st store.Store) {
		for name, want := range map[string]bool{"ops": false, "github:boss": false, "user": false} {
			if a, err := st.AccountByName(ctx, name); err != nil || a.Admin != want {
				t.Errorf("%s: admin flag %v, %v; want %v", name, a.Admin, err, want)
			}
		}
	})
}
