package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/money"
)

// testCatalog is a small catalog with every case the expansion must tell apart.
func testCatalog() *catalog.Catalog {
	chat := func(id, owner string, in money.Micros) catalog.Model {
		return catalog.Model{ID: id, OwnedBy: owner, Modality: catalog.Chat, Input: in, Output: in}
	}
	return catalog.New([]catalog.Model{
		chat("claude-haiku-4-5", "anthropic", 1),
		chat("claude-opus-4-1", "anthropic", 15),
		chat("claude-2", "anthropic", 8),
		chat("claude-unpriced", "anthropic", 0),
		{ID: "claude-free", OwnedBy: "anthropic", Modality: catalog.Chat, Free: true},
		chat("gpt-4o", "openai", 2),
		chat("gpt-4o-mini", "openai", 1),
		{ID: "dall-e-3", OwnedBy: "openai", Modality: catalog.Image, Images: []catalog.ImagePrice{{Size: "1024x1024", Price: 40000}}},
		{ID: "sora-2", OwnedBy: "openai", Modality: catalog.Video, VideoPerSecond: 100000},
		chat("phi-4", "azure", 1),
		chat("llama-v3p1-8b-instruct", "fireworks", 1),
		chat("gemini-2.5-flash", "google", 1),
		chat("meta-llama/llama-4-scout", "groq", 1),
		chat("llama-3.3-70b-versatile", "groq", 1),
	})
}

func refIDs(refs []ModelRef) []string {
	var ids []string
	for _, r := range refs {
		if r.Upstream != r.ID {
			ids = append(ids, r.ID+"="+r.Upstream)
		} else {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

func TestExpandModels(t *testing.T) {
	tests := []struct {
		name     string
		p        Provider
		want     []string // id, or id=upstream when they differ
		problems []string // "error: ..." or "warning: ..." substrings, in order
	}{
		{name: "glob", p: Provider{Type: "anthropic", Models: ModelList{{ID: "claude-*"}}},
			want: []string{"claude-2", "claude-free", "claude-haiku-4-5", "claude-opus-4-1"}},
		{name: "all", p: Provider{Type: "anthropic", Models: ModelList{{ID: AllModels}}},
			want: []string{"claude-2", "claude-free", "claude-haiku-4-5", "claude-opus-4-1"}},
		{name: "all as a list entry", p: Provider{Type: "gemini", Models: ModelList{{ID: "all"}}},
			want: []string{"gemini-2.5-flash"}},
		{name: "explicit entry wins and comes first",
			p:    Provider{Type: "anthropic", Models: ModelList{{ID: "claude-*"}, {ID: "claude-2", Upstream: "claude-2.1"}}},
			want: []string{"claude-2=claude-2.1", "claude-free", "claude-haiku-4-5", "claude-opus-4-1"}},
		{name: "overlapping patterns list a model once",
			p:    Provider{Type: "anthropic", Models: ModelList{{ID: "claude-opus-*"}, {ID: "claude-*-4-*"}}},
			want: []string{"claude-opus-4-1", "claude-haiku-4-5"}},
		{name: "only the vendor's models", p: Provider{Type: "openai", BaseURL: "https://api.openai.com/v1", Models: ModelList{{ID: "*"}}},
			want: []string{"dall-e-3", "gpt-4o", "gpt-4o-mini", "sora-2"}}, // not phi-4 (azure)
		{name: "no match is a warning", p: Provider{Type: "anthropic", Models: ModelList{{ID: "gpt-*"}, {ID: "claude-2"}}},
			want:     []string{"claude-2"},
			problems: []string{`warning: line 7: provider "p": pattern "gpt-*" matches no priced anthropic model in the catalog`}},
		{name: "video models expand too", p: Provider{Type: "openai", BaseURL: "https://api.openai.com/v1", Models: ModelList{{ID: "sora-*"}}},
			want: []string{"sora-2"}},
		{name: "unknown vendor is an error", p: Provider{Type: "openai", BaseURL: "http://localhost:8000/v1", Models: ModelList{{ID: "qwen3-8b"}, {ID: "llama-*"}}},
			want:     []string{"qwen3-8b"},
			problems: []string{`error: line 7: provider "p": cannot tell whose catalog models "llama-*" means`}},
		{name: "owned_by names the vendor", p: Provider{Type: "openai", BaseURL: "http://localhost:8000/v1", OwnedBy: "google", Models: ModelList{{ID: "gemini-*"}}},
			want: []string{"gemini-2.5-flash"}},
		{name: "azure serves openai models", p: Provider{Type: "azure", BaseURL: "https://x.openai.azure.com", Models: ModelList{{ID: "gpt-4o*"}}},
			want: []string{"gpt-4o", "gpt-4o-mini"}},
		{name: "azure with owned_by azure", p: Provider{Type: "azure", BaseURL: "https://x.openai.azure.com", OwnedBy: "azure", Models: ModelList{{ID: "all"}}},
			want: []string{"phi-4"}},
		{name: "fireworks ids get the account prefix", p: Provider{Type: "openai", BaseURL: "https://api.fireworks.ai/inference/v1", Models: ModelList{{ID: "llama-*"}}},
			want: []string{"llama-v3p1-8b-instruct=accounts/fireworks/models/llama-v3p1-8b-instruct"}},
		{name: "all crosses slashes, a glob's * does not", p: Provider{Type: "openai", BaseURL: "https://api.groq.com/openai/v1",
			Models: ModelList{{ID: "all"}, {ID: "llama*"}, {ID: "meta-llama/*"}}},
			want: []string{"llama-3.3-70b-versatile", "meta-llama/llama-4-scout"}},
		{name: "pattern with an upstream", p: Provider{Type: "anthropic", Models: ModelList{{ID: "claude-*", Upstream: "claude-2.1"}}},
			problems: []string{`error: line 7: provider "p": pattern "claude-*" cannot have an upstream`}},
		{name: "bad pattern", p: Provider{Type: "anthropic", Models: ModelList{{ID: "claude-[x"}}},
			problems: []string{`error: line 7: provider "p": invalid model pattern "claude-[x"`}},
		{name: "no patterns: unchanged", p: Provider{Type: "demo"}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.p
			p.Name, p.Line = "p", 7
			c := &Config{Providers: []Provider{p}}
			served, ps := c.ExpandModels(testCatalog())
			if got := refIDs(served[0]); !slices.Equal(got, tt.want) {
				t.Errorf("served %q, want %q", got, tt.want)
			}
			var got []string
			for _, pr := range ps {
				kind := "error: "
				if pr.Warning {
					kind = ""
				}
				got = append(got, kind+pr.String())
			}
			ok := len(got) == len(tt.problems)
			for i := 0; ok && i < len(got); i++ {
				ok = strings.Contains(got[i], tt.problems[i])
			}
			if !ok {
				t.Errorf("problems %q, want %q", got, tt.problems)
			}
		})
	}
}

// TestExpandModelsConfigCatalog loads a file whose patterns expand over the
// built-in catalog plus the models section: a model added there with the
// vendor's owned_by and a price, or free, joins the vendor's range; one
// without a price does not.
func TestExpandModelsConfigCatalog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(`providers:
  - name: anthropic
    type: anthropic
    api_key: ${KEY}
    models: all
  - name: claude-opus
    type: anthropic
    api_key: ${KEY}
    models: ["claude-opus-*", {id: claude-opus-4-1, upstream: claude-opus-4-1-20250805}]
models:
  - {id: claude-private, owned_by: anthropic, input: 1, output: 2}
  - {id: claude-gift, owned_by: anthropic, free: true}
  - {id: claude-unpriced, owned_by: anthropic, context_window: 1000}
groups:
  default: {models: ["*"]}
  private: {models: ["claude-private"]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, ps, err := Load(path, envOf(testEnv))
	if err != nil || len(ps) != 0 {
		t.Fatalf("Load: %v %q", err, ps) // the private group matches an expanded model: no warning
	}
	cat, err := c.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	served, ps := c.ExpandModels(cat)
	if len(ps) != 0 {
		t.Fatalf("problems %q", ps)
	}
	ids := refIDs(served[0])
	for _, want := range []string{"claude-private", "claude-gift", "claude-haiku-4-5", "claude-opus-4-1"} {
		if !slices.Contains(ids, want) {
			t.Errorf("models: all lacks %s: %q", want, ids)
		}
	}
	if slices.Contains(ids, "claude-unpriced") {
		t.Errorf("an unpriced model was expanded: %q", ids)
	}
	for _, r := range served[0] {
		if r.Line != 5 {
			t.Errorf("%s: line %d, want 5 (the models: all line)", r.ID, r.Line)
		}
	}
	opus := refIDs(served[1])
	if opus[0] != "claude-opus-4-1=claude-opus-4-1-20250805" || slices.Contains(opus[1:], "claude-opus-4-1") || len(opus) < 3 {
		t.Errorf("claude-opus-*: %q", opus)
	}
	for _, id := range opus[1:] {
		if !strings.HasPrefix(id, "claude-opus-") {
			t.Errorf("claude-opus-* expanded to %s", id)
		}
	}
}
