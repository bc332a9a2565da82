package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// vendorsConfig serves Anthropic by pattern, OpenAI by all, Gemini and Azure
// by id, and a local server whose vendor cannot be told; keys come from the environment.
const vendorsConfig = `providers:
  - name: openai-main
    type: openai
    base_url: https://api.openai.com
    api_key: ${OPENAI_API_KEY}
    models: all
  - name: claude
    type: anthropic
    base_url: https://api.anthropic.com/v1/
    api_key: ${ANTHROPIC_API_KEY}
    models: ["claude-*", "gpt-*", {id: claude-2, upstream: claude-2.1}]
  - name: gemini
    type: gemini
    base_url: https://generativelanguage.googleapis.com/v1beta/
    api_key: ${GEMINI_API_KEY}
    models: [gemini-2.5-flash]
  - name: azure
    type: azure
    base_url: https://x.openai.azure.com/openai/v1/
    api_key: ${AZURE_API_KEY}
    models: [{id: gpt-4o, upstream: my-gpt4o}]
  - {name: demo, type: demo}
`

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "modelgate.yaml")
	if err := os.WriteFile(path, []byte("database: sqlite:"+filepath.Join(dir, "mg.db")+"\n"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var vendorKeys = map[string]string{"OPENAI_API_KEY": "sk-openai-secret", "ANTHROPIC_API_KEY": "sk-ant-secret",
	"GEMINI_API_KEY": "AIza-gemini-secret", "AZURE_API_KEY": "azure-secret"}

// TestConfigCheckURLs checks that config check prints where each provider's
// requests go (never a key), the pattern warnings, and the expanded count.
func TestConfigCheckURLs(t *testing.T) {
	c := &cli{t: t, cfg: writeConfig(t, vendorsConfig), envs: vendorKeys}
	code, out, stderr := c.run("config", "check")
	if code != 0 {
		t.Fatalf("config check: %d\n%s%s", code, out, stderr)
	}
	for _, want := range []string{
		"openai-main (openai): https://api.openai.com/v1/chat/completions\n",
		"claude (anthropic): https://api.anthropic.com/v1/messages\n",
		"gemini (gemini): https://generativelanguage.googleapis.com/v1beta/models/{model}:generateContent\n",
		"azure (azure): https://x.openai.azure.com/openai/deployments/{deployment}/chat/completions?api-version=2024-10-21\n",
		"demo (demo): built in, no network\n",
		`:12: warning: provider "claude": pattern "gpt-*" matches no priced anthropic model in the catalog`,
		"ok (5 provider(s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, key := range vendorKeys {
		if strings.Contains(out+stderr, key) {
			t.Errorf("config check printed a key:\n%s", out)
		}
	}

	// A pattern on a provider whose vendor cannot be told is an error with its line.
	bad := writeConfig(t, `providers:
  - name: vllm
    type: openai
    base_url: http://127.0.0.1:8000/v1
    models: ["llama-*"]
`)
	code, out, _ = c.run("config", "check", "--config", bad)
	if code != 1 || !strings.Contains(out, bad+`:6: provider "vllm": cannot tell whose catalog models "llama-*" means`) {
		t.Errorf("unknown vendor: %d\n%s", code, out)
	}
	if strings.Contains(out, "(openai): http") {
		t.Errorf("URLs printed for a config with errors:\n%s", out)
	}
}

// TestModelsCommandPatterns checks that modelgate models shows what the
// patterns expand to, with the providers serving each model.
func TestModelsCommandPatterns(t *testing.T) {
	c := &cli{t: t, cfg: writeConfig(t, vendorsConfig), envs: vendorKeys}
	code, js, stderr := c.run("models", "--json")
	var rows []modelJSON
	if code != 0 || json.Unmarshal([]byte(js), &rows) != nil {
		t.Fatalf("models --json: %d %s %s", code, js, stderr)
	}
	served := map[string][]string{}
	for _, r := range rows {
		served[r.ID] = r.Providers
		if !r.Priced {
			t.Errorf("%s is unpriced", r.ID)
		}
	}
	for id, want := range map[string][]string{
		"claude-haiku-4-5": {"claude"}, "claude-2": {"claude"}, "gpt-4o-mini": {"openai-main"},
		"gpt-4o": {"openai-main", "azure"}, "dall-e-3": {"openai-main"}, "gemini-2.5-flash": {"gemini"}, "demo-chat": {"demo"},
	} {
		if !slices.Equal(served[id], want) {
			t.Errorf("%s served by %q, want %q", id, served[id], want)
		}
	}
	if !slices.Equal(served["sora-2"], []string{"openai-main"}) {
		t.Errorf("sora-2 served by %q, want the OpenAI provider (video models expand from all too)", served["sora-2"])
	}
	code, table, _ := c.run("models", "--group", "default")
	if code != 0 || !strings.Contains(table, "claude-opus-4-1") || !strings.Contains(table, "text-embedding-3-small") {
		t.Errorf("table: %d\n%s", code, table)
	}
}
