package app

import (
	"time"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/anthropic"
)

// newAnthropic builds the Anthropic Messages adapter for p. An empty
// base_url means https://api.anthropic.com.
func newAnthropic(p config.Provider, o Options) (provider.Chatter, error) {
	return anthropic.New(anthropic.Options{
		Name: p.Name, BaseURL: p.BaseURL, APIKey: p.APIKey, Headers: p.Headers,
		Timeout: time.Duration(p.Timeout), IdleTimeout: time.Duration(p.IdleTimeout),
		UserAgent: "modelgate/" + o.Version, HTTPClient: o.HTTPClient, DefaultMaxTokens: p.MaxTokens,
	})
}
