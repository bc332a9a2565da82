package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestModelsCommand(t *testing.T) {
	// The zero config lists the demo models.
	var out, errb bytes.Buffer
	code := run([]string{"models"}, env{stdout: &out, stderr: &errb, getenv: func(string) (string, bool) { return "", false }})
	if code != 0 || !strings.Contains(out.String(), "demo-chat") || !strings.Contains(out.String(), "demo-echo") ||
		!strings.Contains(out.String(), "tools,free") || !strings.Contains(out.String(), "IN/1M USD") {
		t.Fatalf("zero config: %d\n%s%s", code, out.String(), errb.String())
	}

	dir := t.TempDir()
	cfg := filepath.Join(dir, "modelgate.yaml")
	if err := os.WriteFile(cfg, []byte(`database: sqlite:`+filepath.Join(dir, "mg.db")+`
billing: {currency: EUR}
providers:
  - {name: demo, type: demo}
  - name: openai
    type: openai
    base_url: https://api.openai.com/v1
    api_key: ${OPENAI_API_KEY}
    models: [gpt-4o-mini, dall-e-3, gpt-image-1, sora-2, custom, not-in-catalog]
models:
  - {id: gpt-4o-mini, input: 0.2}
  - {id: custom, owned_by: acme, output: 0.000001}
groups:
  default: {models: ["*"]}
  vip: {models: ["gpt-4o*", "dall-e-3", "gpt-image-1", "sora-*", "custom"], price_ratio: 0.8}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &cli{t: t, cfg: cfg, envs: map[string]string{}}
	c.envs["OPENAI_API_KEY"] = "sk-test"
	code, table, stderr := c.run("models")
	if code != 0 {
		t.Fatalf("models: %d %s", code, stderr)
	}
	for _, want := range []string{"IN/1M EUR", "demo-echo", "0.2 ", "0.04-0.12/image (3 sizes)", "10/1M image in, 40/1M image out", "0.1/s video", "NOT-IN-CATALOG", "acme"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}

	code, js, stderr := c.run("models", "--group", "vip", "--json")
	var rows []modelJSON
	if code != 0 || json.Unmarshal([]byte(js), &rows) != nil {
		t.Fatalf("--json: %d %s %s", code, js, stderr)
	}
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	if got := strings.Join(ids, " "); got != "custom dall-e-3 gpt-4o-mini gpt-image-1 sora-2" {
		t.Errorf("vip models = %s", got)
	}
	byID := map[string]modelJSON{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	mini := byID["gpt-4o-mini"]
	if mini.Input != 200_000 || mini.Output != 600_000 || mini.OwnedBy != "openai" || mini.Currency != "EUR" || !mini.Priced || !mini.Tools {
		t.Errorf("gpt-4o-mini = %+v", mini)
	}
	if !strings.Contains(js, `"input": "0.2"`) || !strings.Contains(js, `"owned_by": "acme"`) {
		t.Errorf("JSON prices must be exact decimal strings with snake_case keys:\n%s", js)
	}
	if d := byID["dall-e-3"]; len(d.Images) != 6 || d.Modality != "image" || len(d.ImageSizes) != 3 {
		t.Errorf("dall-e-3 = %+v", d)
	}
	if g := byID["gpt-image-1"]; g.Input != 5_000_000 || g.ImageInput != 10_000_000 || g.CachedImageInput != 2_500_000 ||
		g.ImageOutput != 40_000_000 || !g.Priced || len(g.Images) != 9 {
		t.Errorf("gpt-image-1 = %+v", g)
	}
	if s := byID["custom"]; !s.Priced || s.Output != 1 || !s.InCatalog {
		t.Errorf("custom = %+v", s)
	}

	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"models", "--group", "nope"}, 1, `unknown group "nope"`},
		{[]string{"models", "extra"}, 2, "unexpected argument"},
		{[]string{"models", "--bogus"}, 2, "flag provided but not defined"},
	} {
		code, _, stderr := c.run(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.err) {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tc.args, code, stderr, tc.code, tc.err)
		}
	}
}
