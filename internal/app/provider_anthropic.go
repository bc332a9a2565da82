package app

import (
	"time"

	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/anthropic"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// newAnthropic builds the Anthropic Messages adapter for p. An empty
// base_url means https://api.anthropic.com.
func newAnthropic(p config.Provider, cat *catalog.Catalog, tokens *tokenize.Set, o Options) (provider.Chatter, error) {
	return anthropic.New(anthropic.Options{
		Name: p.Name, BaseURL: p.BaseURL, APIKey: p.APIKey, Headers: p.Headers,
		Timeout: time.Duration(p.Timeout), IdleTimeout: time.Duration(p.IdleTimeout),
		UserAgent: "modelgate/" + o.Version, HTTPClient: upstreamClient(p, o), DefaultMaxTokens: p.MaxTokens,
		Tokenizer: anthropicTokenizers(p, cat, tokens),
	})
}

// anthropicTokenizers returns, for the models p serves, the tokenizer the
// catalog names (found as lookupModel finds prices: public id, else
// upstream id), which the adapter counts delivered thinking text with.
// Claude's tokenizer is not public: the catalog names none, so thinking is
// counted with o200k, marked approximate. The names are resolved once, up
// front; the counters are the ones billing uses.
func anthropicTokenizers(p config.Provider, cat *catalog.Catalog, tokens *tokenize.Set) func(public, upstream string) *tokenize.Tokenizer {
	names := make(map[string]string, len(p.Models))
	for _, m := range p.Models {
		if cm, ok := lookupModel(cat, m.ID, m.UpstreamID()); ok {
			names[m.ID] = cm.Tokenizer
		}
	}
	return func(public, _ string) *tokenize.Tokenizer { return tokens.For(names[public]) }
}
