package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNormalizeBaseURL(t *testing.T) {
	tests := []struct {
		typ, in, want string
		apiVersion    string // from a pasted Azure URL
		warn, err     string // substrings; "" means none
	}{
		// OpenAI-compatible: trailing slashes, pasted endpoints, bare well-known hosts.
		{typ: "openai", in: "https://api.openai.com/v1", want: "https://api.openai.com/v1"},
		{typ: "openai", in: "https://api.openai.com/v1/", want: "https://api.openai.com/v1"},
		{typ: "openai", in: "https://api.openai.com/v1//", want: "https://api.openai.com/v1"},
		{typ: "openai", in: "https://api.openai.com", want: "https://api.openai.com/v1"},
		{typ: "openai", in: "https://api.openai.com/", want: "https://api.openai.com/v1"},
		{typ: "openai", in: "https://api.openai.com/v1/chat/completions", want: "https://api.openai.com/v1"},
		{typ: "openai", in: "https://api.openai.com/v1/embeddings/", want: "https://api.openai.com/v1"},
		{typ: "openai", in: "https://api.openai.com/v1/responses", want: "https://api.openai.com/v1"},
		{typ: "openai", in: "https://api.openai.com/v1/audio/transcriptions", want: "https://api.openai.com/v1"},
		{typ: "openai", in: "https://api.openai.com/chat/completions", want: "https://api.openai.com/v1"},
		{typ: "openai", in: "https://api.groq.com", want: "https://api.groq.com/openai/v1"},
		{typ: "openai", in: "https://api.groq.com/openai/v1/", want: "https://api.groq.com/openai/v1"},
		{typ: "openai", in: "https://api.groq.com/openai/v1/chat/completions", want: "https://api.groq.com/openai/v1"},
		{typ: "openai", in: "https://api.groq.com/v1", want: "https://api.groq.com/v1", warn: "groq's documented /openai/v1"},
		{typ: "openai", in: "https://openrouter.ai", want: "https://openrouter.ai/api/v1"},
		{typ: "openai", in: "https://openrouter.ai/api/v1/", want: "https://openrouter.ai/api/v1"},
		{typ: "openai", in: "https://api.fireworks.ai", want: "https://api.fireworks.ai/inference/v1"},
		{typ: "openai", in: "https://api.x.ai", want: "https://api.x.ai/v1"},
		{typ: "openai", in: "https://api.mistral.ai/", want: "https://api.mistral.ai/v1"},
		{typ: "openai", in: "https://api.together.xyz", want: "https://api.together.xyz/v1"},
		{typ: "openai", in: "https://api.deepseek.com", want: "https://api.deepseek.com"},
		{typ: "openai", in: "https://api.deepseek.com/v1/", want: "https://api.deepseek.com/v1"},
		{typ: "openai", in: "https://api.deepseek.com/beta", want: "https://api.deepseek.com/beta"},
		{typ: "openai", in: "https://api.perplexity.ai/", want: "https://api.perplexity.ai"},
		{typ: "openai", in: "https://generativelanguage.googleapis.com", want: "https://generativelanguage.googleapis.com/v1beta/openai"},
		{typ: "openai", in: "https://generativelanguage.googleapis.com/v1beta/openai/", want: "https://generativelanguage.googleapis.com/v1beta/openai"},
		{typ: "openai", in: "http://127.0.0.1:11434/v1/", want: "http://127.0.0.1:11434/v1"},
		{typ: "openai", in: "http://localhost:8000", want: "http://localhost:8000"},
		{typ: "openai", in: "HTTPS://API.OPENAI.COM", want: "https://API.OPENAI.COM/v1"},
		{typ: "openai", in: "https://api.openai.com/v1?api_key=sk-secret", err: "must not carry the API key (?api_key=...)"},
		{typ: "openai", in: "https://api.openai.com/v1?x=1", err: "must not have a query string"},
		{typ: "openai", in: "https://api.openai.com/v1#frag", err: "#fragment"},
		{typ: "openai", in: "ftp://api.openai.com/v1", err: "must be an http:// or https:// URL"},
		{typ: "openai", in: "api.openai.com/v1", err: "must be an http:// or https:// URL"},

		// Gemini: the version written, else v1beta; pasted endpoints dropped.
		{typ: "gemini", in: "", want: "https://generativelanguage.googleapis.com/v1beta"},
		{typ: "gemini", in: "https://generativelanguage.googleapis.com", want: "https://generativelanguage.googleapis.com/v1beta"},
		{typ: "gemini", in: "https://generativelanguage.googleapis.com/", want: "https://generativelanguage.googleapis.com/v1beta"},
		{typ: "gemini", in: "https://generativelanguage.googleapis.com/v1beta", want: "https://generativelanguage.googleapis.com/v1beta"},
		{typ: "gemini", in: "https://generativelanguage.googleapis.com/v1beta/", want: "https://generativelanguage.googleapis.com/v1beta"},
		{typ: "gemini", in: "https://generativelanguage.googleapis.com/v1", want: "https://generativelanguage.googleapis.com/v1"},
		{typ: "gemini", in: "https://generativelanguage.googleapis.com/v1alpha/", want: "https://generativelanguage.googleapis.com/v1alpha"},
		{typ: "gemini", in: "https://generativelanguage.googleapis.com/v1beta/models", want: "https://generativelanguage.googleapis.com/v1beta"},
		{typ: "gemini", in: "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
			want: "https://generativelanguage.googleapis.com/v1beta"},
		{typ: "gemini", in: "https://gateway.example/v1/acct/gw/google-ai-studio", want: "https://gateway.example/v1/acct/gw/google-ai-studio/v1beta"},
		{typ: "gemini", in: "https://generativelanguage.googleapis.com/v1beta/openai/", err: "use it with type openai"},
		{typ: "gemini", in: "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions", err: "use it with type openai"},
		{typ: "gemini", in: "https://generativelanguage.googleapis.com/v1beta?key=AIza", err: "must not carry the API key (?key=...)"},

		// Anthropic: the bare host.
		{typ: "anthropic", in: "", want: "https://api.anthropic.com"},
		{typ: "anthropic", in: "https://api.anthropic.com", want: "https://api.anthropic.com"},
		{typ: "anthropic", in: "https://api.anthropic.com/", want: "https://api.anthropic.com"},
		{typ: "anthropic", in: "https://api.anthropic.com/v1", want: "https://api.anthropic.com"},
		{typ: "anthropic", in: "https://api.anthropic.com/v1/", want: "https://api.anthropic.com"},
		{typ: "anthropic", in: "https://api.anthropic.com/v1/messages", want: "https://api.anthropic.com"},
		{typ: "anthropic", in: "https://proxy.example/anthropic/v1", want: "https://proxy.example/anthropic"},

		// Azure: the resource root.
		{typ: "azure", in: "https://acme.openai.azure.com", want: "https://acme.openai.azure.com"},
		{typ: "azure", in: "https://acme.openai.azure.com/", want: "https://acme.openai.azure.com"},
		{typ: "azure", in: "https://acme.openai.azure.com/openai", want: "https://acme.openai.azure.com"},
		{typ: "azure", in: "https://acme.openai.azure.com/openai/v1/", want: "https://acme.openai.azure.com"},
		{typ: "azure", in: "https://acme.cognitiveservices.azure.com/", want: "https://acme.cognitiveservices.azure.com"},
		{typ: "azure", in: "https://acme.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2025-01-01-preview",
			want: "https://acme.openai.azure.com", apiVersion: "2025-01-01-preview"},
		{typ: "azure", in: "https://acme.openai.azure.com/openai?api-key=x", err: "must not carry the API key (?api-key=...)"},
	}
	for _, tt := range tests {
		t.Run(tt.typ+" "+tt.in, func(t *testing.T) {
			got, err := normalizeBaseURL(tt.typ, tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want %q", err, tt.err)
				}
				if (strings.HasPrefix(tt.in, "http") && strings.Contains(err.Error(), tt.in)) || strings.Contains(err.Error(), "AIza") || strings.Contains(err.Error(), "sk-secret") {
					t.Errorf("the error quotes the URL: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.url != tt.want || got.apiVersion != tt.apiVersion {
				t.Errorf("= %q (api-version %q), want %q (%q)", got.url, got.apiVersion, tt.want, tt.apiVersion)
			}
			if (tt.warn == "") != (got.warning == "") || !strings.Contains(got.warning, tt.warn) {
				t.Errorf("warning = %q, want %q", got.warning, tt.warn)
			}
			again, err := normalizeBaseURL(tt.typ, got.url)
			if err != nil || again.url != got.url {
				t.Errorf("not idempotent: %q → %q, %v", got.url, again.url, err)
			}
		})
	}
}

// TestLoadNormalizesBaseURL checks that Load hands adapters the canonical
// form, and that a pasted Azure URL's api-version fills an unset api_version.
func TestLoadNormalizesBaseURL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(`providers:
  - {name: gemini, type: gemini, api_key: "${KEY}", base_url: "https://generativelanguage.googleapis.com/v1/", models: [gemini-2.5-flash]}
  - {name: gemini-default, type: gemini, api_key: "${KEY}", models: [gemini-2.5-flash]}
  - {name: claude, type: anthropic, api_key: "${KEY}", base_url: "https://api.anthropic.com/v1/", models: [claude-haiku-4-5]}
  - {name: oai, type: openai, api_key: "${KEY}", base_url: "https://api.openai.com", models: [gpt-4o]}
  - name: az
    type: azure
    api_key: ${KEY}
    base_url: https://acme.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2025-01-01-preview
    models: [gpt-4o]
  - name: az-pinned
    type: azure
    api_key: ${KEY}
    api_version: 2024-10-21
    base_url: https://acme.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2025-01-01-preview
    models: [gpt-4o]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, ps, err := Load(path, envOf(testEnv))
	if err != nil || len(ps) != 0 {
		t.Fatalf("Load: %v %q", err, ps)
	}
	want := []struct{ base, version string }{
		{"https://generativelanguage.googleapis.com/v1", ""},
		{"https://generativelanguage.googleapis.com/v1beta", ""},
		{"https://api.anthropic.com", ""},
		{"https://api.openai.com/v1", ""},
		{"https://acme.openai.azure.com", "2025-01-01-preview"},
		{"https://acme.openai.azure.com", "2024-10-21"},
	}
	for i, w := range want {
		if p := c.Providers[i]; p.BaseURL != w.base || p.APIVersion != w.version {
			t.Errorf("%s: base_url %q api_version %q, want %q %q", p.Name, p.BaseURL, p.APIVersion, w.base, w.version)
		}
	}
}

// TestBaseURLProblemsHideTheKey checks that a key pasted into base_url is
// reported without being repeated.
func TestBaseURLProblemsHideTheKey(t *testing.T) {
	_, ps := mustLoad(t, "bad/base_url_key_in_query.yaml", testEnv)
	for _, p := range ps {
		if strings.Contains(p.Message, "AIzaSySecret") {
			t.Errorf("problem repeats the key: %s", p)
		}
	}
}

func TestVendorFromURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.openai.com/v1":                    "openai",
		"https://api.groq.com/openai/v1":               "groq",
		"https://api.mistral.ai/v1":                    "mistral",
		"https://api.x.ai/v1":                          "xai",
		"https://api.fireworks.ai/inference/v1":        "fireworks",
		"https://open.bigmodel.cn/api/paas/v4":         "zhipu",
		"https://generativelanguage.googleapis.com/v1": "google",
		"http://localhost:8000/v1":                     "",
		"https://notopenai.com/v1":                     "",
		"https://acme.openai.azure.com":                "",
		"::":                                           "",
	} {
		if got := VendorFromURL(in); got != want {
			t.Errorf("VendorFromURL(%q) = %q, want %q", in, got, want)
		}
	}
}
