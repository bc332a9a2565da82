package provider

import (
	"fmt"

	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/redact"
)

// Helpers for adapters that download results (videos) from a vendor.

// KeepHeadersHome returns a copy of hc whose redirects to another scheme
// or host than home drop the headers the gateway set from its config
// (set: API keys included; Go itself drops only Authorization and cookies,
// and keeps even those for another port of the same host). User-Agent and
// Accept are kept. At most 10 redirects are followed unless hc says
// otherwise.
func KeepHeadersHome(hc *http.Client, home *url.URL, set http.Header) *http.Client {
	cp := *hc
	next := hc.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != home.Scheme || !strings.EqualFold(req.URL.Host, home.Host) {
			for key := range set {
				if key != "User-Agent" && key != "Accept" {
					req.Header.Del(key)
				}
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return fmt.Errorf("stopped after 10 redirects")
		}
		return nil
	}
	return &cp
}

// CallBody is a download's body read under its exchange's timers (see
// Call.Reader); Close closes the body and ends the exchange, once.
func CallBody(k *Call, body io.ReadCloser) io.ReadCloser {
	return &callBody{r: k.Reader(body), c: body, k: k}
}

type callBody struct {
	r    io.Reader
	c    io.Closer
	k    *Call
	once sync.Once
	err  error
}

func (b *callBody) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *callBody) Close() error {
	b.once.Do(func() {
		b.err = b.c.Close()
		b.k.Release()
	})
	return b.err
}

// Clip cuts a vendor's message to n bytes on a rune boundary, marking the
// cut with "…".
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// VideoGone is the error of a vendor's 404 for its own video job: it wraps
// ErrVideoGone for the poller and reads as a 502 to a client.
func VideoGone(provider, id, vendorMsg string) error {
	var shapes *redact.Redactor // key-shaped tokens only; the adapter redacted its secrets
	vendorMsg = shapes.String(vendorMsg)
	return &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeServer, Code: apierr.CodeUpstreamError,
		Message: "The upstream provider no longer has this video.",
		Err:     fmt.Errorf("provider %s: video %s: HTTP 404: %s: %w", provider, id, vendorMsg, ErrVideoGone)}
}

// VideoGetter sends an adapter's GETs of a video job or its file: with the
// adapter's configured headers (not carried to another host on a
// redirect), a 404 read as the job gone (VideoGone), other failures mapped
// as for chat.
type VideoGetter struct {
	Provider string
	Client   *http.Client
	Header   http.Header // the headers set from the config, keys included
	MaxError int64       // the most of an error body read
	// Parse reads an error body: the adapter's own parser, which redacts
	// the adapter's secrets (VendorError.Redact).
	Parse func([]byte) VendorError
}

// Get sends GET u (for the job id, named in errors) accepting accept.
func (g VideoGetter) Get(k *Call, u, accept, id string) (*http.Response, error) {
	hr, err := http.NewRequestWithContext(k.Ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, BadResponse(g.Provider, err)
	}
	hr.Header = g.Header.Clone()
	hr.Header.Del("Content-Type")
	hr.Header.Set("Accept", accept)
	resp, err := KeepHeadersHome(g.Client, hr.URL, g.Header).Do(hr)
	if err != nil {
		return nil, FromTransport(k.Ctx, g.Provider, err)
	}
	k.Touch()
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(k.Reader(resp.Body), g.MaxError))
	v := g.Parse(b)
	if resp.StatusCode == http.StatusNotFound {
		return nil, VideoGone(g.Provider, id, v.Message)
	}
	return nil, FromStatus(g.Provider, resp.StatusCode, resp.Header, v)
}
