package app

import (
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/provider/openaicompat"
	"github.com/modelgate/modelgate/internal/reqinfo"
)

// upstreamClient is the HTTP client of provider p's adapter: o.HTTPClient
// when set, else a pooled client of its own, with a transport that logs
// vendor 404s (see notFoundLog).
//
// The log lives here rather than in provider.FromStatus because this is the
// one place that knows the exact URL sent, the provider's name and the
// process logger, for every adapter alike; the adapters and their
// client-facing error mapping stay as they are.
func upstreamClient(p config.Provider, o Options) *http.Client {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var c http.Client
	if o.HTTPClient != nil {
		c = *o.HTTPClient
	}
	next := c.Transport
	switch {
	case next != nil:
	case o.HTTPClient != nil:
		next = http.DefaultTransport
	default:
		t := openaicompat.NewTransport()
		if p.ConnectTimeout > 0 {
			t.DialContext = (&net.Dialer{Timeout: time.Duration(p.ConnectTimeout), KeepAlive: 30 * time.Second}).DialContext
		}
		next = t
	}
	c.Transport = &notFoundLog{next: next, provider: p.Name, log: log}
	return &c
}

// notFoundLog passes every exchange through untouched, and logs a vendor's
// 404 to a POST (every model call is one) at ERROR as a configuration error:
// the vendor has no such endpoint under the configured base_url, or does not
// know the configured upstream model id. Either way only the operator can
// fix it, while the client is told only that the upstream does not know the
// model. GETs (a stored response that is not there) are the client's own
// 404s and are not logged. The URL is logged through RedactURL, so a key
// in it (Gemini accepts ?key=) never reaches the log.
type notFoundLog struct {
	next     http.RoundTripper
	provider string
	log      *slog.Logger
}

// RoundTrip implements http.RoundTripper.
func (t *notFoundLog) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusNotFound || r.Method != http.MethodPost {
		return resp, err
	}
	attrs := []slog.Attr{slog.String("provider", t.provider), slog.String("url", RedactURL(r.URL)), slog.Int("status", resp.StatusCode)}
	// The adapter calls from the request's own goroutine, the only writer of its Info.
	if info := reqinfo.From(r.Context()); info.ID != "" {
		attrs = append(attrs, slog.String("request_id", info.ID), slog.String("upstream_model", info.Upstream))
	}
	t.log.LogAttrs(r.Context(), slog.LevelError,
		"configuration error: the upstream answered 404 Not Found; check the provider's base_url and the model's upstream id", attrs...)
	return resp, err
}
