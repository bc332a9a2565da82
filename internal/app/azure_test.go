package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// An Azure OpenAI deployment serves a public model id through the official
// SDK unchanged: the deployment is in the URL, the key in api-key.
func TestAzureEndToEnd(t *testing.T) {
	f := providertest.NewOpenAI(t)
	var (
		mu   sync.Mutex
		seen []string
	)
	az := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.RequestURI()+" "+r.Header.Get("Api-Key"))
		mu.Unlock()
		r.URL.Path, r.URL.RawQuery = "/v1/chat/completions", ""
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(az.Close)
	g := startGateway(t, func(c *config.Config) {
		c.Providers = append(c.Providers, config.Provider{Name: "azure-eu", Type: "azure", BaseURL: az.URL, APIKey: "az-secret",
			APIVersion: "2024-10-21", Models: []config.ModelRef{{ID: "gpt-4o", Upstream: "gpt4o-prod"}},
			Timeout: c.Providers[0].Timeout, IdleTimeout: c.Providers[0].IdleTimeout, Weight: 1})
	})
	c := g.client(g.keys["default"])
	ctx := context.Background()
	resp, err := c.Chat.Completions.New(ctx, streamParams("gpt-4o", false))
	if err != nil || resp.Model != "gpt-4o" || resp.Choices[0].Message.Content == "" {
		t.Fatalf("chat: %+v, %v", resp, err)
	}
	s := c.Chat.Completions.NewStreaming(ctx, streamParams("gpt-4o", true))
	acc := oai.ChatCompletionAccumulator{}
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil || acc.Choices[0].Message.Content == "" || acc.Usage.TotalTokens == 0 {
		t.Fatalf("stream: %v %+v", err, acc.Usage)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21 az-secret"
	if len(seen) != 2 || seen[0] != want || seen[1] != want {
		t.Errorf("azure saw %q, want %q", seen, want)
	}
}
