package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider/providertest"
)

// startGeminiGatewayWith is startGeminiGateway with the config changed
// by mutate as well.
func startGeminiGatewayWith(t *testing.T, mutate func(*config.Config)) (*gateway, *providertest.Gemini) {
	t.Helper()
	fake := providertest.NewGemini(t)
	g := startGateway(t, func(c *config.Config) {
		c.Providers = append(c.Providers, config.Provider{Name: "fake-gemini", Type: "gemini", BaseURL: fake.URL,
			APIKey: "x", Models: geminiModels, Weight: 1,
			Timeout: config.Duration(3 * time.Second), IdleTimeout: config.Duration(time.Second)})
		in, out := config.Amount(money.Unit), config.Amount(2*money.Unit)
		for _, m := range geminiModels {
			c.Models = append(c.Models, config.ModelConfig{ID: m.ID, Input: &in, Output: &out})
		}
	}, mutate)
	return g, fake
}

// imageURLs is a user message naming n images by URL.
func imageURLs(base string, n int) []oai.ChatCompletionMessageParamUnion {
	parts := []oai.ChatCompletionContentPartUnionParam{oai.TextContentPart("Compare these.")}
	for i := range n {
		parts = append(parts, oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: fmt.Sprintf("%s/img/%d.png", base, i)}))
	}
	return []oai.ChatCompletionMessageParamUnion{oai.UserMessage(parts)}
}

// A request naming more image URLs than fetch.max_images (default 16) is
// refused with a 400 naming the first one past the limit, before anything
// is downloaded or sent to Gemini; max_images: 0 refuses image URLs
// altogether (data: URLs still work).
func TestGeminiImageURLLimits(t *testing.T) {
	ctx := context.Background()
	t.Run("default", func(t *testing.T) {
		g, fake := startGeminiGateway(t)
		cl := g.client(g.keys["default"])
		_, err := cl.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "gemini-test", Messages: imageURLs(g.URL, 17)})
		e := apiError(t, err, 400, "invalid_request_error")
		if e.Param != "messages[0].content[17].image_url.url" || !strings.Contains(e.Message, "at most 16 per request") {
			t.Errorf("param %q: %s", e.Param, e.Message)
		}
		if n := len(fake.Received()); n != 0 {
			t.Errorf("Gemini received %d requests", n)
		}
	})
	t.Run("configured", func(t *testing.T) {
		g, fake := startGeminiGatewayWith(t, func(c *config.Config) { c.Fetch.MaxImages = 2 })
		cl := g.client(g.keys["default"])
		_, err := cl.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "gemini-test", Messages: imageURLs(g.URL, 3)})
		if e := apiError(t, err, 400, "invalid_request_error"); e.Param != "messages[0].content[3].image_url.url" {
			t.Errorf("param %q: %s", e.Param, e.Message)
		}
		if n := len(fake.Received()); n != 0 {
			t.Errorf("Gemini received %d requests", n)
		}
	})
	t.Run("off", func(t *testing.T) {
		g, _ := startGeminiGatewayWith(t, func(c *config.Config) { c.Fetch.MaxImages = 0 })
		cl := g.client(g.keys["default"])
		_, err := cl.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "gemini-test", Messages: imageURLs(g.URL, 1)})
		if e := apiError(t, err, 400, "invalid_request_error"); e.Param != "messages[0].content[1].image_url.url" ||
			!strings.Contains(e.Message, "does not download images from URLs") {
			t.Errorf("param %q: %s", e.Param, e.Message)
		}
		_, err = cl.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "gemini-test", Messages: []oai.ChatCompletionMessageParamUnion{
			oai.UserMessage([]oai.ChatCompletionContentPartUnionParam{
				oai.ImageContentPart(oai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64,iVBORw0KGgo="})})}})
		if err != nil {
			t.Errorf("a data: URL: %v", err)
		}
	})
}
