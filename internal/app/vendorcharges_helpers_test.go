package app_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider/providertest"
	"github.com/modelgate/modelgate/internal/store"
)

// The tests of what a vendor bills beyond a request's body run a gateway
// in front of providertest.Billed, a fake OpenAI that bills the way OpenAI
// does, and compare each charge with the vendor's own counts at the
// catalog's list prices.

// billedModels are the catalog models the fake serves under their own ids.
var billedModels = []string{"gpt-4.1", "gpt-5", "gpt-4o-mini", "gpt-4o-audio-preview", "gpt-4o-search-preview", "gpt-image-1"}

// startBilled serves a gateway in front of a fresh Billed fake. Groups:
// default (every model), mini (gpt-4o-mini only) and unsized (every model,
// context the gateway cannot size allowed with a $2 reservation).
func startBilled(t *testing.T, mutate ...func(*config.Config)) (*gateway, *providertest.Billed) {
	t.Helper()
	up := providertest.NewBilled(t)
	refs := make([]config.ModelRef, len(billedModels))
	for i, id := range billedModels {
		refs[i] = config.ModelRef{ID: id}
	}
	cfg := &config.Config{
		Database: "sqlite:" + filepath.Join(t.TempDir(), "modelgate.db"),
		Providers: []config.Provider{{Name: "openai", Type: "openai", BaseURL: up.URL + "/v1", APIKey: "sk-upstream",
			Models: refs, Timeout: config.Duration(5 * time.Second)}},
		Groups: map[string]config.Group{
			"default": {Models: []string{"*"}},
			"mini":    {Models: []string{"gpt-4o-mini"}},
			"unsized": {Models: []string{"*"}, Responses: config.GroupResponses{AllowUnsized: true, Reserve: config.Amount(2 * money.Unit)}},
		},
		ShutdownTimeout: config.Duration(5 * time.Second),
		AuthCacheTTL:    config.Duration(time.Nanosecond),
		Usage:           config.Usage{BatchSize: 64, FlushInterval: config.Duration(20 * time.Millisecond)},
	}
	for _, m := range mutate {
		m(cfg)
	}
	cfg.ApplyDefaults()
	if ps := cfg.Validate(); config.HasErrors(ps) {
		t.Fatalf("test config: %v", ps)
	}
	return serveApp(t, cfg, app.Options{Logger: testLogger(t), Version: "test"}), up
}

// listPrice is the catalog's price of a model, as the gateway bills it.
func listPrice(t *testing.T, model string) billing.ModelPrice {
	t.Helper()
	cat, err := app.Catalog(&config.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m, ok := cat.Lookup(model)
	if !ok {
		t.Fatalf("catalog has no %s", model)
	}
	mp := billing.ModelPrice{Price: billing.TokenPrice{Input: m.Input, Output: m.Output, CachedInput: m.CachedInput,
		AudioInput: m.AudioInput, AudioOutput: m.AudioOutput}, ToolCalls: m.ToolCalls}
	for name, tp := range m.Tiers {
		if mp.Tiers == nil {
			mp.Tiers = map[string]billing.TokenPrice{}
		}
		mp.Tiers[name] = billing.TokenPrice{Input: tp.Input, Output: tp.Output, CachedInput: tp.CachedInput}
	}
	for _, ip := range m.Images {
		mp.Images = append(mp.Images, billing.ImagePrice{Size: ip.Size, Quality: ip.Quality, Price: ip.Price})
	}
	return mp
}

// costOf is what a usage record's tokens cost at p, with fees.
func costOf(t *testing.T, p billing.TokenPrice, r store.UsageRecord, audioIn, audioOut int64, fees money.Micros) money.Micros {
	t.Helper()
	c, err := billing.Cost(p, billing.Tokens{Prompt: r.PromptTokens, Cached: r.CachedTokens, Completion: r.CompletionTokens,
		AudioPrompt: audioIn, AudioCompletion: audioOut, Fees: fees}, money.PPM)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// recordsOf are the usage records of an account's answered requests
// (status 200), oldest first, after the gateway stopped (every record
// flushed).
func recordsOf(g *gateway, accountID string) []store.UsageRecord {
	g.t.Helper()
	var out []store.UsageRecord
	for _, r := range g.usage() {
		if r.AccountID == accountID && r.Status == 200 {
			out = append([]store.UsageRecord{r}, out...)
		}
	}
	return out
}

// storeResponse records a stored response of accountID as the gateway
// would have, and tells the fake vendor it holds tokens of context.
func storeResponse(t *testing.T, g *gateway, up *providertest.Billed, accountID, id string, r store.StoredResponse, tokens int64) {
	t.Helper()
	r.ID, r.AccountID, r.CreatedAt = id, accountID, time.Now().UTC()
	if err := g.app.Store().SaveResponse(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	up.Keep(id, tokens)
}
