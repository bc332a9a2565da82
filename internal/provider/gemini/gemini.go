// Package gemini is the adapter for Google's Gemini API (generateContent and
// streamGenerateContent?alt=sse). It translates OpenAI chat completions
// requests into Gemini's wire format and Gemini's answers and SSE events back
// into chat.completion objects and chunks, event by event.
package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
	"github.com/modelgate/modelgate/internal/provider/openaicompat"
	"github.com/modelgate/modelgate/internal/redact"
)

// DefaultBaseURL is the Gemini Developer API, version v1beta.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/v1beta"

// defaultVersion is the API version added to a base URL that names none.
const defaultVersion = "v1beta"

// apiVersion matches an API version path segment: v1, v1beta, v1alpha, ...
var apiVersion = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]*)?$`)

// versionedBase returns base with an API version as its last path segment:
// as given when it ends with one (…/v1beta, …/v1, …/v1alpha), else with
// /v1beta added, so a bare host keeps working. Requests go to
// {base}/models/{model}:{method}.
func versionedBase(base string) string {
	last := base[strings.LastIndexByte(base, '/')+1:]
	if strings.Count(base, "/") > 2 && apiVersion.MatchString(last) {
		return base
	}
	return base + "/" + defaultVersion
}

// ImageFetcher downloads an image the client named by http(s) URL, since
// Gemini cannot fetch public URLs itself. fetch.Fetcher implements it.
type ImageFetcher interface {
	Fetch(ctx context.Context, url string) (mime string, data []byte, err error)
}

// Options configure one Gemini upstream.
type Options struct {
	Name        string // provider name from the config, for errors and logs
	BaseURL     string // default DefaultBaseURL; without a version segment, /v1beta is added
	APIKey      string // sent as x-goog-api-key
	Headers     map[string]string
	Timeout     time.Duration // whole request, streams included
	IdleTimeout time.Duration // waiting for headers, or between body bytes
	UserAgent   string
	HTTPClient  *http.Client // nil builds a pooled client
	// Fetcher downloads http(s) image URLs; nil rejects them with a 400.
	Fetcher ImageFetcher
}

// Client talks to one Gemini upstream.
type Client struct {
	name     string
	base     string // ends with the API version: {base}/models/{model}:{method}
	header   http.Header
	timeout  time.Duration
	idle     time.Duration
	hc       *http.Client
	fetcher  ImageFetcher
	maxBody  int64
	maxError int64
	secrets  *redact.Redactor // the key and header values, kept out of vendor messages

	now   func() time.Time           // creation times; tests fix it
	newID func(prefix string) string // ids Gemini does not give; tests fix it
}

var (
	_ provider.Chatter       = (*Client)(nil)
	_ provider.OutputBounder = (*Client)(nil)
)

// New checks o and builds a client.
func New(o Options) (*Client, error) {
	base := strings.TrimRight(o.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("gemini %s: base_url %q must be an http(s) URL", o.Name, o.BaseURL)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if o.APIKey != "" {
		h.Set("X-Goog-Api-Key", o.APIKey)
	}
	if o.UserAgent != "" {
		h.Set("User-Agent", o.UserAgent)
	}
	for k, v := range o.Headers {
		h.Set(k, v)
	}
	c := &Client{name: o.Name, base: versionedBase(base), header: h, timeout: o.Timeout, idle: o.IdleTimeout,
		hc: o.HTTPClient, fetcher: o.Fetcher, maxBody: 64 << 20, maxError: 1 << 20,
		now: time.Now, newID: oaiwire.NewID, secrets: provider.Secrets(o.APIKey, base, o.Headers)}
	if c.timeout <= 0 {
		c.timeout = 10 * time.Minute
	}
	if c.idle <= 0 {
		c.idle = 2 * time.Minute
	}
	if c.hc == nil {
		c.hc = &http.Client{Transport: openaicompat.NewTransport()}
	}
	return c, nil
}

// start begins an upstream exchange under the client's timeouts.
func (c *Client) start(ctx context.Context) *provider.Call {
	return provider.StartCall(ctx, c.timeout, c.idle)
}

// send translates and posts req and returns the response once headers
// arrived, or the client-facing error.
func (c *Client) send(ctx context.Context, req *provider.ChatRequest) (*provider.Call, *http.Response, error) {
	in, err := oaiwire.ParseRequest(req.Body)
	if err != nil {
		return nil, nil, provider.BadResponse(c.name, err) // the gateway validated it; unreachable
	}
	gr, err := c.translate(ctx, in, req.MaxOutput)
	if err != nil {
		return nil, nil, err
	}
	body, err := json.Marshal(gr)
	if err != nil {
		return nil, nil, fmt.Errorf("gemini %s: encode request: %w", c.name, err)
	}
	u := c.base + "/models/" + url.PathEscape(req.UpstreamModel)
	if req.Stream {
		u += ":streamGenerateContent?alt=sse"
	} else {
		u += ":generateContent"
	}
	k := c.start(ctx)
	hr, err := http.NewRequestWithContext(k.Ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		k.Release()
		return nil, nil, fmt.Errorf("gemini %s: new request: %w", c.name, err)
	}
	hr.Header = c.header.Clone()
	if req.Stream {
		hr.Header.Set("Accept", "text/event-stream")
	} else {
		hr.Header.Set("Accept", "application/json")
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		defer k.Release()
		if e := provider.FromTransport(k.Ctx, c.name, err); e != nil {
			return nil, nil, e
		}
		return nil, nil, err
	}
	k.Touch()
	if resp.StatusCode/100 != 2 {
		defer k.Release()
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(k.Reader(resp.Body), c.maxError))
		return nil, nil, provider.FromStatus(c.name, resp.StatusCode, resp.Header, c.vendorError(b))
	}
	return k, resp, nil
}

// Chat sends a non-streamed request and translates the answer.
func (c *Client) Chat(ctx context.Context, req *provider.ChatRequest) (*provider.ChatResponse, error) {
	k, resp, err := c.send(ctx, req)
	if err != nil {
		return nil, err
	}
	defer k.Release()
	defer resp.Body.Close()
	body, err := provider.ReadBody(k.Reader(resp.Body), resp.ContentLength, c.maxBody)
	if err != nil {
		return nil, provider.FromTransport(k.Ctx, c.name, err)
	}
	var gr genResponse
	if err := json.Unmarshal(body, &gr); err != nil {
		return nil, provider.BadResponse(c.name, fmt.Errorf("response body: %w", err))
	}
	if gr.Error != nil {
		return nil, c.vendorFailure(gr.Error)
	}
	out, u := c.toOpenAI(&gr, req.PublicModel)
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("gemini %s: encode response: %w", c.name, err)
	}
	res := &provider.ChatResponse{Body: b}
	if gr.UsageMetadata != nil {
		res.Usage, res.HasUsage = u, true
	}
	return res, nil
}

// parseVendorError reads Google's error body, which streams sometimes wrap
// in a one-element array.
func parseVendorError(b []byte) provider.VendorError {
	if w := parseWireError(b); w != nil {
		return vendorError(w)
	}
	return provider.VendorError{}
}

// parseWireError returns the error object of b, nil if b holds none.
func parseWireError(b []byte) *wireError {
	b = bytes.TrimSpace(b)
	var e struct {
		Error *wireError `json:"error"`
	}
	if len(b) > 0 && b[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(b, &list) == nil && len(list) > 0 {
			b = list[0]
		}
	}
	if json.Unmarshal(b, &e) != nil {
		return nil
	}
	return e.Error
}

// vendorError reads Google's error body (parseVendorError) with the
// client's secrets redacted: some vendors echo the key they were sent.
func (c *Client) vendorError(b []byte) provider.VendorError {
	return parseVendorError(b).Redact(c.secrets)
}

// vendorError keeps Google's status (e.g. INVALID_ARGUMENT) as the type and,
// lower-cased, as the code the client sees on a 4xx.
func vendorError(w *wireError) provider.VendorError {
	return provider.VendorError{Message: w.Message, Type: w.Status, Code: strings.ToLower(w.Status)}
}

// vendorFailure maps an error object found inside a 200 answer or a stream:
// its own code when that is an HTTP status, else a 502. Its message is
// redacted of the client's secrets.
func (c *Client) vendorFailure(w *wireError) error {
	status := w.Code
	if status < 400 || status > 599 {
		status = http.StatusBadGateway
	}
	return provider.FromStatus(c.name, status, nil, vendorError(w).Redact(c.secrets))
}

// unary posts body to {base}/models/{model}{method} (method such as
// ":batchEmbedContents") and returns the whole 2xx answer, or the client's
// error for any other status or a failed exchange.
func (c *Client) unary(ctx context.Context, model, method string, body []byte) ([]byte, error) {
	k := c.start(ctx)
	defer k.Release()
	u := c.base + "/models/" + url.PathEscape(model) + method
	hr, err := http.NewRequestWithContext(k.Ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("gemini %s: new request: %w", c.name, err)
	}
	hr.Header = c.header.Clone()
	hr.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(hr)
	if err != nil {
		return nil, provider.FromTransport(k.Ctx, c.name, err)
	}
	defer resp.Body.Close()
	k.Touch()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(k.Reader(resp.Body), c.maxError))
		return nil, provider.FromStatus(c.name, resp.StatusCode, resp.Header, c.vendorError(b))
	}
	b, err := provider.ReadBody(k.Reader(resp.Body), resp.ContentLength, c.maxBody)
	if err != nil {
		return nil, provider.FromTransport(k.Ctx, c.name, err)
	}
	return b, nil
}
