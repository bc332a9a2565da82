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
// public URLs itself, under the per-request limits of the fetch section.
func newGemini(p config.Provider, f config.Fetch, o Options) (provider.Chatter, error) {
	c, err := gemini.New(gemini.Options{
		Name: p.Name, BaseURL: p.BaseURL, APIKey: p.APIKey, Headers: p.Headers,
		Timeout: time.Duration(p.Timeout), IdleTimeout: time.Duration(p.IdleTimeout),
		UserAgent: "modelgate/" + o.Version, HTTPClient: upstreamClient(p, o),
		Fetcher: fetch.New(fetchOptions(f, o)),
	})
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", p.Name, err)
	}
	return c, nil
}

// fetchOptions are the fetcher's options for the fetch section: zero
// values (a config built in code) take the fetcher's defaults, and
// max_images: 0 written in the file turns image URLs off.
func fetchOptions(f config.Fetch, ao Options) fetch.Options {
	o := fetch.Options{UserAgent: "modelgate/" + ao.Version, MaxImages: f.MaxImages, MaxTotalBytes: f.MaxTotalBytes,
		TotalTimeout: time.Duration(f.Timeout), AllowPrivate: ao.FetchPrivate}
	if f.MaxImages == 0 && f.MaxTotalBytes > 0 {
		o.MaxImages = -1 // defaults applied, and 0 kept: the operator's "none"
	}
	return o
}
