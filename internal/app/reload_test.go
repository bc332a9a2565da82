package app_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	oai "github.com/openai/openai-go/v3"
)

// TestReload: a reload changes the models, providers and groups new
// requests see, while a stream in flight finishes on the config it
// started with; a config with errors is refused and the old one kept.
func TestReload(t *testing.T) {
	g := startGateway(t)
	c := g.client(g.keys["default"])
	ctx := context.Background()

	// A paced stream (40 ms a chunk) is in flight across the reload.
	s := c.Chat.Completions.NewStreaming(ctx, streamParams("paced", true))
	if !s.Next() {
		t.Fatalf("paced stream: %v", s.Err())
	}

	next := testConfig(t, g.upstream.URL)
	next.Database = g.cfg.Database
	in, out := config.Amount(money.Unit), config.Amount(2*money.Unit)
	// fake-openai now also serves "renamed" (gpt-4o-mini upstream), the
	// "down" provider is gone, and group basic may use only demo models.
	next.Providers[0].Models = append(next.Providers[0].Models, config.ModelRef{ID: "renamed", Upstream: "gpt-4o-mini"})
	next.Providers = next.Providers[:2]
	next.Models = append(next.Models, config.ModelConfig{ID: "renamed", Input: &in, Output: &out})
	basic := next.Groups["basic"]
	basic.Models = []string{"demo-*"}
	next.Groups["basic"] = basic
	warnings, err := g.app.Reload(next)
	if err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings %v, want none", warnings)
	}

	chunks := 1
	for s.Next() {
		chunks++
	}
	if err := s.Err(); err != nil || chunks < 2 {
		t.Fatalf("the stream in flight: %d chunks, err %v", chunks, err)
	}

	msg := []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hi")}
	if _, err := c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "renamed", Messages: msg}); err != nil {
		t.Errorf("the new model: %v", err)
	}
	_, err = c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "unreachable", Messages: msg})
	apiError(t, err, http.StatusNotFound, "model_not_found")
	bc := g.client(g.keys["basic"])
	_, err = bc.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: msg})
	apiError(t, err, http.StatusNotFound, "model_not_found")
	if _, err := bc.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "demo-chat", Messages: msg}); err != nil {
		t.Errorf("basic's demo model: %v", err)
	}

	// A broken config is refused whole; the running one stays.
	bad := testConfig(t, g.upstream.URL)
	bad.Providers[0].Weight = -1
	if _, err := g.app.Reload(bad); err == nil {
		t.Fatal("a config with errors was applied")
	}
	if _, err := c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "renamed", Messages: msg}); err != nil {
		t.Errorf("after a refused reload: %v", err)
	}
	// A setting only a restart applies is named.
	moved := testConfig(t, g.upstream.URL)
	moved.Database = g.cfg.Database
	moved.Listen = "127.0.0.1:1"
	if warnings, err := g.app.Reload(moved); err != nil || len(warnings) != 1 {
		t.Errorf("listen changed: warnings %v, err %v; want one warning", warnings, err)
	}
}
