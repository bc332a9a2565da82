package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cli runs modelgate in-process against a config in a temp dir.
type cli struct {
	t    *testing.T
	cfg  string
	envs map[string]string
}

func newCLI(t *testing.T, extra string) *cli {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "modelgate.yaml")
	body := "database: sqlite:" + filepath.Join(dir, "mg.db") + `
providers:
  - name: demo
    type: demo
groups:
  default: {models: ["*"]}
  basic: {models: ["demo-echo"]}
` + extra
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return &cli{t: t, cfg: cfg, envs: map[string]string{}}
}

func (c *cli) run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, env{stdout: &out, stderr: &errb, getenv: func(k string) (string, bool) {
		if k == "MODELGATE_CONFIG" {
			return c.cfg, true
		}
		v, ok := c.envs[k]
		return v, ok
	}})
	return code, out.String(), errb.String()
}

func TestKeys(t *testing.T) {
	c := newCLI(t, "")
	code, secret, stderr := c.run("keys", "create", "--group", "basic", "--account", "acme", "--name", "ci")
	secret = strings.TrimSpace(secret)
	if code != 0 || !strings.HasPrefix(secret, "sk-mg-") || strings.Contains(secret, "\n") {
		t.Fatalf("create: %d %q %s", code, secret, stderr)
	}
	if strings.Contains(stderr, secret) {
		t.Error("the secret was printed to stderr too")
	}
	code, second, _ := c.run("keys", "create", "--group", "default")
	if code != 0 || strings.TrimSpace(second) == secret {
		t.Fatal("second key")
	}
	code, list, _ := c.run("keys", "list", "--json")
	var keys []keyJSON
	if code != 0 || json.Unmarshal([]byte(list), &keys) != nil || len(keys) != 2 {
		t.Fatalf("list: %d %s", code, list)
	}
	if keys[0].Account != "acme" || keys[0].Group != "basic" || keys[0].Name != "ci" || !strings.HasPrefix(secret, keys[0].Prefix) {
		t.Errorf("first key %+v", keys[0])
	}
	if keys[1].Account != keys[1].ID {
		t.Errorf("a key without --account should get an account of its own: %+v", keys[1])
	}
	if strings.Contains(list, secret) {
		t.Error("list shows the secret")
	}
	code, out, _ := c.run("keys", "revoke", keys[0].Prefix)
	if code != 0 || !strings.Contains(out, keys[0].ID) {
		t.Fatalf("revoke by prefix: %d %s", code, out)
	}
	code, out, _ = c.run("keys", "list")
	if code != 0 || !strings.Contains(out, "revoked") || !strings.Contains(out, "active") {
		t.Errorf("table list:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"keys", "create", "--group", "nope"}, 1, `unknown group "nope"`},
		{[]string{"keys", "create"}, 2, "--group is required"},
		{[]string{"keys", "revoke", "key_doesnotexist"}, 1, "no key matches"},
		{[]string{"keys", "revoke", "sk-mg-"}, 1, "more than one"},
		{[]string{"keys", "revoke"}, 2, "usage"},
		{[]string{"keys", "frobnicate"}, 2, "unknown subcommand"},
		{[]string{"bogus"}, 2, "unknown command"},
	} {
		code, _, stderr := c.run(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.err) {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tc.args, code, stderr, tc.code, tc.err)
		}
	}
}

func TestConfigCheck(t *testing.T) {
	c := newCLI(t, "")
	code, out, _ := c.run("config", "check")
	if code != 0 || !strings.Contains(out, "ok (1 provider(s)") {
		t.Fatalf("good config: %d %s", code, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	_ = os.WriteFile(bad, []byte(`listen: 127.0.0.1:8080
providers:
  - name: openai-main
    type: openai
    base_ur: https://api.openai.com/v1
    api_key: ${MISSING_KEY}
    models: [gpt-4o-mini]
    priority: high
groups:
  default: {models: ["["]}
`), 0o600)
	code, out, _ = c.run("config", "check", "--config", bad)
	if code != 1 {
		t.Fatalf("bad config exit %d:\n%s", code, out)
	}
	for _, want := range []string{bad + ":5:", "base_url", bad + ":6:", "MISSING_KEY", bad + ":8:", bad + ":10:", "error(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	demo := filepath.Join(t.TempDir(), "demo.yaml")
	_ = os.WriteFile(demo, []byte("providers:\n  - {name: d, type: demo, models: [gpt-99]}\n"), 0o600)
	if code, out, _ = c.run("config", "check", "--config", demo); code != 1 || !strings.Contains(out, `no model "gpt-99"`) {
		t.Errorf("unknown demo model: %d %s", code, out)
	}
	// serve refuses a config with errors.
	if code, _, stderr := c.run("serve", "--config", bad); code != 1 || !strings.Contains(stderr, "has errors") {
		t.Errorf("serve with a bad config: %d %s", code, stderr)
	}
	// --listen cannot move the console off loopback without public_url.
	withConsole := newCLI(t, "console: {}\n")
	if code, _, stderr := withConsole.run("serve", "--listen", "0.0.0.0:0"); code != 1 || !strings.Contains(stderr, "--listen 0.0.0.0:0: console: listen 0.0.0.0:0 is not a loopback address, so set public_url") {
		t.Errorf("serve --listen 0.0.0.0:0 with the console on: %d %s", code, stderr)
	}
}

func TestUsageCommand(t *testing.T) {
	c := newCLI(t, "")
	if code, out, stderr := c.run("usage", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("empty usage: %d %q %s", code, out, stderr)
	}
	if code, _, stderr := c.run("usage", "--account", "ghost"); code != 1 || !strings.Contains(stderr, "ghost") {
		t.Errorf("unknown account: %d %s", code, stderr)
	}
	if code, _, stderr := c.run("usage", "--since", "yesterday"); code != 2 || !strings.Contains(stderr, "--since") {
		t.Errorf("bad --since: %d %s", code, stderr)
	}
}
