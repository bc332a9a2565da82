package app

import (
	"fmt"
	"time"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/fetch"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/gemini"
)

// newGemini builds the Gemini API adapter for p. Image URLs in requests
// are downloaded through an SSRF-guarded fetcher, since Gemini cannot read
// public URLs itself.
func newGemini(p config.Provider, o Options) (provider.Chatter, error) {
	c, err := gemini.New(gemini.Options{
		Name: p.Name, BaseURL: p.BaseURL, APIKey: p.APIKey, Headers: p.Headers,
		Timeout: time.Duration(p.Timeout), IdleTimeout: time.Duration(p.IdleTimeout),
		UserAgent: "modelgate/" + o.Version, HTTPClient: upstreamClient(p, o),
		Fetcher: fetch.New(fetch.Options{UserAgent: "modelgate/" + o.Version}),
	})
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", p.Name, err)
	}
	return c, nil
}
