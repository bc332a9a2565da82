// Package anthropic is the adapter for providers of type anthropic: it
// translates OpenAI chat completion requests into Anthropic Messages API
// requests (POST {base}/v1/messages), and Anthropic's answers and SSE
// streams back into chat.completion and chat.completion.chunk objects,
// event by event, without buffering a stream.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/anthropicwire"
	"github.com/modelgate/modelgate/internal/provider/openaicompat"
	"github.com/modelgate/modelgate/internal/redact"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// Defaults used when Options leave a field empty.
const (
	DefaultBaseURL   = "https://api.anthropic.com"
	DefaultVersion   = "2023-06-01"
	DefaultMaxTokens = 4096
)

// Options configure one Anthropic upstream.
type Options struct {
	Name        string // provider name from the config, for errors and logs
	BaseURL     string // default DefaultBaseURL; /v1/messages is appended
	APIKey      string // sent as x-api-key
	Version     string // anthropic-version header, default DefaultVersion
	Headers     map[string]string
	Timeout     time.Duration // whole request, streams included
	IdleTimeout time.Duration // waiting for headers, or between body bytes
	UserAgent   string
	HTTPClient  *http.Client // nil builds a pooled client for this upstream
	// DefaultMaxTokens is sent when neither the client nor the catalog
	// (ChatRequest.MaxOutput) gives a limit; Anthropic requires one.
	DefaultMaxTokens int64
	// Tokenizer returns the tokenizer the catalog names for a model (by
	// public id, else upstream id). Anthropic does not say how many of its
	// output_tokens were thinking, so the adapter counts the thinking text
	// it delivers with it and reports that as reasoning_tokens. Nil
	// leaves reasoning_tokens 0.
	Tokenizer func(public, upstream string) *tokenize.Tokenizer
}

// Client talks to one Anthropic Messages API upstream.
type Client struct {
	name      string
	url       string
	header    http.Header
	timeout   time.Duration
	idle      time.Duration
	hc        *http.Client
	maxTokens int64
	tokens    func(public, upstream string) *tokenize.Tokenizer
	maxBody   int64
	maxError  int64
	now       func() time.Time
	secrets   *redact.Redactor // the key and header values, kept out of vendor messages
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
		return nil, fmt.Errorf("anthropic %s: base_url %q must be an http(s) URL", o.Name, o.BaseURL)
	}
	base = strings.TrimSuffix(base, "/v1")
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if o.APIKey != "" {
		h.Set("X-Api-Key", o.APIKey)
	}
	v := o.Version
	if v == "" {
		v = DefaultVersion
	}
	h.Set("Anthropic-Version", v)
	if o.UserAgent != "" {
		h.Set("User-Agent", o.UserAgent)
	}
	for k, v := range o.Headers {
		h.Set(k, v)
	}
	c := &Client{
		name: o.Name, url: base + "/v1/messages", header: h,
		timeout: o.Timeout, idle: o.IdleTimeout, hc: o.HTTPClient, maxTokens: o.DefaultMaxTokens,
		tokens: o.Tokenizer, maxBody: 64 << 20, maxError: 1 << 20, now: time.Now,
		secrets: provider.Secrets(o.APIKey, base, o.Headers),
	}
	if c.timeout <= 0 {
		c.timeout = 10 * time.Minute
	}
	if c.idle <= 0 {
		c.idle = 2 * time.Minute
	}
	if c.maxTokens < 0 {
		c.maxTokens = 0
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

// send posts body and returns the response once headers arrived, or the
// client-facing error.
func (c *Client) send(k *provider.Call, body []byte, stream bool) (*http.Response, error) {
	return c.sendHeader(k, body, stream, c.header.Clone())
}

// sendHeader is send with the request headers h (which it keeps).
func (c *Client) sendHeader(k *provider.Call, body []byte, stream bool, h http.Header) (*http.Response, error) {
	return c.sendTo(k, c.url, body, stream, h)
}

// sendTo is sendHeader to another endpoint of the Messages API (url).
func (c *Client) sendTo(k *provider.Call, url string, body []byte, stream bool, h http.Header) (*http.Response, error) {
	hr, err := http.NewRequestWithContext(k.Ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("anthropic %s: new request: %w", c.name, err)
	}
	hr.Header = h
	if stream {
		hr.Header.Set("Accept", "text/event-stream")
	} else {
		hr.Header.Set("Accept", "application/json")
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		if e := provider.FromTransport(k.Ctx, c.name, err); e != nil {
			return nil, e
		}
		return nil, fmt.Errorf("anthropic %s: %w", c.name, err)
	}
	k.Touch()
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(k.Reader(resp.Body), c.maxError))
		return nil, statusError(c.name, c.secrets, resp.StatusCode, resp.Header, b)
	}
	return resp, nil
}

// Chat sends a non-streamed request and translates the answer.
func (c *Client) Chat(ctx context.Context, req *provider.ChatRequest) (*provider.ChatResponse, error) {
	tr, err := c.translate(req, false)
	if err != nil {
		return nil, err
	}
	k := c.start(ctx)
	defer k.Release()
	resp, err := c.send(k, tr.body, false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := provider.ReadBody(k.Reader(resp.Body), resp.ContentLength, c.maxBody)
	if err != nil {
		return nil, provider.FromTransport(k.Ctx, c.name, err)
	}
	return c.response(body, req.PublicModel, tr.jsonTool, c.tokenizer(req))
}

// errorTypeStatus maps Anthropic's error types to the HTTP status they
// come with, for errors that arrive inside a 200 stream.
var errorTypeStatus = map[string]int{
	"invalid_request_error": http.StatusBadRequest,
	"authentication_error":  http.StatusUnauthorized,
	"billing_error":         http.StatusServiceUnavailable, // our vendor account, not the client's
	"permission_error":      http.StatusForbidden,
	"not_found_error":       http.StatusNotFound,
	"request_too_large":     http.StatusRequestEntityTooLarge,
	"rate_limit_error":      http.StatusTooManyRequests,
	"api_error":             http.StatusInternalServerError,
	"timeout_error":         http.StatusGatewayTimeout,
	"overloaded_error":      http.StatusServiceUnavailable,
}

// errorIn decodes b as Anthropic's error envelope; ok reports whether b
// is one: valid JSON with an error member that is not null.
func errorIn(b []byte) (e anthropicwire.ErrorBody, ok bool) {
	if json.Unmarshal(b, &e) != nil {
		return e, false
	}
	v, found := jsonx.Field(b, "error")
	return e, found && !jsonx.IsNull(v)
}

// vendorError is an error body's detail as a provider.VendorError.
func vendorError(d anthropicwire.ErrorDetail) provider.VendorError {
	v := provider.VendorError{Message: d.Message, Type: d.Type, Code: d.Type}
	if v.Code == "invalid_request_error" || v.Code == "request_too_large" {
		v.Code = "" // FromStatus then uses the gateway's invalid_request_error code
	}
	return v
}

// statusError maps a non-2xx answer; 529 (overloaded) is a 503. The
// vendor's message is redacted of secrets.
func statusError(name string, secrets *redact.Redactor, status int, h http.Header, b []byte) error {
	v := provider.VendorError{Message: strings.TrimSpace(string(b))}
	if e, ok := errorIn(b); ok {
		v = vendorError(e.Error)
	}
	if status == 529 {
		status = http.StatusServiceUnavailable
	}
	return provider.FromStatus(name, status, h, v.Redact(secrets))
}

// eventError maps an error event inside a stream (or a 200 error body),
// its message redacted of secrets.
func eventError(name string, secrets *redact.Redactor, e anthropicwire.ErrorBody) error {
	status := http.StatusBadGateway
	if s, ok := errorTypeStatus[e.Error.Type]; ok {
		status = s
	}
	return provider.FromStatus(name, status, nil, vendorError(e.Error).Redact(secrets))
}
