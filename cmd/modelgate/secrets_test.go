package main

import (
	"strings"
	"testing"
)

// secretsConfig is a console with GitHub sign-in and Stripe payments whose
// secrets come from the environment.
const secretsConfig = `console:
  oauth:
    - {name: github, type: github, client_id: "${GITHUB_CLIENT_ID}", client_secret: "${GITHUB_CLIENT_SECRET}"}
payments:
  stripe:
    secret_key: ${STRIPE_SECRET_KEY}
    webhook_secret: ${STRIPE_WEBHOOK_SECRET}
`

// The commands that neither take payments nor sign anyone in run without
// the Stripe and GitHub secrets in the environment; serve and config check,
// which need them, still refuse a file whose secrets are unset.
func TestCommandsRunWithoutSecrets(t *testing.T) {
	c := newCLI(t, secretsConfig)
	if code, _, stderr := c.run("keys", "create", "--group", "default", "--account", "acme"); code != 0 {
		t.Fatalf("keys create: %d %s", code, stderr)
	}
	for _, args := range [][]string{
		{"accounts", "show", "acme"},
		{"accounts", "list"},
		{"accounts", "credit", "acme", "1"},
		{"keys", "list"},
		{"usage"},
		{"models"},
		{"admin", "login-link"},
	} {
		code, _, stderr := c.run(args...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		if strings.Contains(stderr, "STRIPE") || strings.Contains(stderr, "GITHUB") {
			t.Errorf("%s: stderr names a secret: %s", strings.Join(args, " "), stderr)
		}
	}
	for _, args := range [][]string{{"config", "check"}, {"serve", "--listen", "127.0.0.1:0"}} {
		code, stdout, stderr := c.run(args...)
		if code == 0 || !strings.Contains(stdout+stderr, "environment variable STRIPE_SECRET_KEY is not set") {
			t.Errorf("%s: exit %d without the secrets: %s%s", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	// With the secrets set, config check passes.
	for _, k := range []string{"GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET", "STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET"} {
		c.envs[k] = "x-" + k
	}
	if code, stdout, stderr := c.run("config", "check"); code != 0 {
		t.Errorf("config check with the secrets: %d %s%s", code, stdout, stderr)
	}
}
