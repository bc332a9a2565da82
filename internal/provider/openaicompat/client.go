// Package openaicompat is the adapter for every vendor that speaks OpenAI's
// chat completions wire format (OpenAI, DeepSeek, Groq, Mistral, xAI,
// OpenRouter, Together, Fireworks, Moonshot, vLLM, Ollama, ...). It forwards
// the client's body byte for byte with only model and stream_options patched,
// and patches only model on the way back.
package openaicompat

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/redact"
)

// Options configure one upstream.
type Options struct {
	Name        string // provider name from the config, for errors and logs
	BaseURL     string // e.g. https://api.openai.com/v1
	APIKey      string // sent as a Bearer token; empty sends none
	Headers     map[string]string
	Timeout     time.Duration // whole request, streams included
	IdleTimeout time.Duration // waiting for headers, or between body bytes
	UserAgent   string
	// HTTPClient carries the upstream's requests; nil builds a pooled
	// client for this upstream. Chat requests, the hot path, go to its
	// Transport directly: they follow no redirect (as a reverse proxy;
	// a chat endpoint that redirects is misconfigured, and a POST
	// following a 301 or 302 would become a GET) and use no cookie jar,
	// and Timeout and IdleTimeout bound them rather than its Timeout.
	HTTPClient *http.Client

	// Azure selects Azure OpenAI's dialect: the upstream model id is a
	// deployment name in the URL ({base}/openai/deployments/{id}/chat/
	// completions?api-version=...) and the key goes in an api-key header.
	Azure bool
	// APIVersion is Azure's api-version query value (default 2024-10-21).
	APIVersion string
}

// DefaultAzureAPIVersion is the Azure OpenAI GA API version used when the
// config names none.
const DefaultAzureAPIVersion = "2024-10-21"

// Client talks to one OpenAI-compatible upstream.
type Client struct {
	name    string
	base    string // base_url without a trailing slash
	chatURL string // "" for Azure, whose URL names the deployment
	// azureBase + deployment + azureQuery is an Azure chat URL.
	azureBase, azureQuery string
	header                http.Header
	// chatHeader is header with Accept for a chat answer, JSON ([0]) or
	// an event stream ([1]): shared by every chat request and never
	// written after New, as a RoundTripper must not modify a request.
	chatHeader [2]http.Header
	rt         http.RoundTripper // hc's transport, for chat requests
	timeout    time.Duration
	idle       time.Duration
	hc         *http.Client
	maxBody    int64
	maxError   int64
	secrets    *redact.Redactor // the key and header values, kept out of vendor messages
}

var _ provider.Chatter = (*Client)(nil)

// New checks o and builds a client.
func New(o Options) (*Client, error) {
	base := strings.TrimRight(o.BaseURL, "/")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("openaicompat %s: base_url %q must be an http(s) URL", o.Name, o.BaseURL)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	switch {
	case o.APIKey != "" && o.Azure:
		h.Set("Api-Key", o.APIKey)
	case o.APIKey != "":
		h.Set("Authorization", "Bearer "+o.APIKey)
	}
	if o.UserAgent != "" {
		h.Set("User-Agent", o.UserAgent)
	}
	for k, v := range o.Headers {
		h.Set(k, v)
	}
	c := &Client{
		name: o.Name, base: base, chatURL: base + "/chat/completions", header: h,
		timeout: o.Timeout, idle: o.IdleTimeout, hc: o.HTTPClient,
		maxBody: 64 << 20, maxError: 1 << 20, secrets: provider.Secrets(o.APIKey, o.BaseURL, o.Headers),
	}
	if o.Azure {
		v := o.APIVersion
		if v == "" {
			v = DefaultAzureAPIVersion
		}
		c.chatURL = ""
		c.azureBase, c.azureQuery = base+"/openai/deployments/", "/chat/completions?api-version="+url.QueryEscape(v)
	}
	if c.timeout <= 0 {
		c.timeout = 10 * time.Minute
	}
	if c.idle <= 0 {
		c.idle = 2 * time.Minute
	}
	if c.hc == nil {
		c.hc = &http.Client{Transport: NewTransport()}
	}
	if c.rt = c.hc.Transport; c.rt == nil {
		c.rt = http.DefaultTransport
	}
	if u, err := url.Parse(base); err == nil && u.User != nil && h.Get("Authorization") == "" {
		// Credentials in base_url, which http.Client.Do would send.
		pw, _ := u.User.Password()
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw)))
	}
	for i, accept := range [2]string{"application/json", "text/event-stream"} {
		c.chatHeader[i] = h.Clone()
		c.chatHeader[i].Set("Accept", accept)
	}
	return c, nil
}

// vendorError reads a vendor's error body (parseVendorError) with the
// client's secrets redacted: some vendors echo the key they were sent.
func (c *Client) vendorError(b []byte) provider.VendorError {
	return parseVendorError(b).Redact(c.secrets)
}

// NewTransport is a transport sized for a proxy: many idle connections per
// upstream host, so concurrent clients do not pay for new TCP/TLS handshakes.
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   512,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// start begins an upstream exchange under the client's timeouts.
func (c *Client) start(ctx context.Context) *provider.Call {
	return provider.StartCall(ctx, c.timeout, c.idle)
}

// upstreamBody is the client's body with model set to the upstream id and,
// for streams, stream_options.include_usage forced on so usage is known.
// Both members are found in one pass over the body and it is copied once
// with the edits; a body that needs neither is passed on as it is.
func upstreamBody(req *provider.ChatRequest) ([]byte, error) {
	body := req.Body
	rename, usage := req.UpstreamModel != req.PublicModel, req.Stream && !req.IncludeUsage
	if !rename && !usage {
		return body, nil
	}
	var (
		sp      [len(bodyKeys)]jsonx.Span
		closeAt int
		err     error
	)
	if req.ModelAt.Found() {
		// The handler located the members while validating the body, a
		// single JSON object: its closing brace is its last non-space byte.
		sp[keyBodyModel], sp[keyBodyStreamOptions] = req.ModelAt, req.StreamOptionsAt
		closeAt = bytes.LastIndexByte(body, '}')
	} else if closeAt, err = jsonx.Members(body, bodyKeys[:], sp[:]); err != nil {
		return nil, err
	}
	var (
		edits [3]jsonx.Edit
		n     int
		add   []byte // members added before the closing brace
	)
	set := func(k int, val []byte) {
		if sp[k].Found() {
			edits[n] = jsonx.Edit{Start: sp[k].ValStart, End: sp[k].ValEnd, With: val}
			n++
			return
		}
		if len(add) > 0 || !jsonx.NoMembers(body[:closeAt]) {
			add = append(add, ',')
		}
		add = append(append(append(append(add, '"'), bodyKeys[k]...), '"', ':'), val...)
	}
	if rename {
		q, _ := json.Marshal(req.UpstreamModel)
		set(keyBodyModel, q)
	}
	if usage {
		opts := []byte(`{"include_usage":true}`)
		if so := sp[keyBodyStreamOptions].Value(body); !jsonx.IsNull(so) {
			if opts, err = jsonx.Set(so, "include_usage", []byte("true")); err != nil {
				return nil, err
			}
		}
		set(keyBodyStreamOptions, opts)
	}
	if len(add) > 0 {
		edits[n] = jsonx.Edit{Start: closeAt, End: closeAt, With: add}
		n++
	}
	slices.SortFunc(edits[:n], func(a, b jsonx.Edit) int { return a.Start - b.Start })
	size := len(body)
	for _, e := range edits[:n] {
		size += len(e.With) - (e.End - e.Start)
	}
	return jsonx.AppendEdits(make([]byte, 0, size), body, edits[:n]...), nil
}

// bodyKeys are the members of a request body upstreamBody edits.
var bodyKeys = [...]string{keyBodyModel: "model", keyBodyStreamOptions: "stream_options"}

const (
	keyBodyModel = iota
	keyBodyStreamOptions
)

// send posts the body and returns the response once headers arrived, or the
// client-facing error.
func (c *Client) send(k *provider.Call, req *provider.ChatRequest) (*http.Response, error) {
	body, err := upstreamBody(req)
	if err != nil {
		return nil, fmt.Errorf("openaicompat %s: patch body: %w", c.name, err)
	}
	u := c.chatURL
	if u == "" {
		u = c.azureBase + url.PathEscape(req.UpstreamModel) + c.azureQuery
	}
	hr, err := http.NewRequestWithContext(k.Ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("openaicompat %s: new request: %w", c.name, err)
	}
	hr.Header = c.chatHeader[0]
	if req.Stream {
		hr.Header = c.chatHeader[1]
	}
	resp, err := c.rt.RoundTrip(hr) // see Options.HTTPClient
	if err != nil {
		if e := provider.FromTransport(k.Ctx, c.name, err); e != nil {
			return nil, e
		}
		return nil, err
	}
	k.Touch()
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(k.Reader(resp.Body), c.maxError))
		return nil, provider.FromStatus(c.name, resp.StatusCode, resp.Header, c.vendorError(b))
	}
	return resp, nil
}

// Chat sends a non-streamed request and returns the vendor's answer with
// model set to the public id.
func (c *Client) Chat(ctx context.Context, req *provider.ChatRequest) (*provider.ChatResponse, error) {
	k := c.start(ctx)
	defer k.Release()
	resp, err := c.send(k, req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := provider.ReadBody(k.Reader(resp.Body), resp.ContentLength, c.maxBody)
	if err != nil {
		return nil, provider.FromTransport(k.Ctx, c.name, err)
	}
	// One pass validates the body and locates the members looked at, as
	// for stream chunks (see stream.Next).
	var sp [keyChoices]jsonx.Span
	closeAt, err := jsonx.CheckObject(body, 256, responseKeys, sp[:])
	if err != nil {
		return nil, provider.BadResponse(c.name, fmt.Errorf("response body: %w", err))
	}
	if ev := sp[keyError].Value(body); ev != nil && !jsonx.IsNull(ev) {
		return nil, provider.FromStatus(c.name, http.StatusBadGateway, resp.Header, c.vendorError(body))
	}
	q := publicModel(req)
	edit := jsonx.Edit{Start: closeAt, End: closeAt}
	if m := sp[keyModel]; m.Found() {
		edit = jsonx.Edit{Start: m.ValStart, End: m.ValEnd, With: q}
	} else {
		edit.With = modelMember(body[:closeAt], q)
	}
	out := jsonx.AppendEdits(make([]byte, 0, len(body)+len(edit.With)), body, edit)
	res := &provider.ChatResponse{Body: out}
	if u := sp[keyUsage].Value(body); u != nil && !jsonx.IsNull(u) {
		res.Usage, res.HasUsage = parseUsage(u)
		res.Usage.ServiceTier = serviceTier(sp[keyTier].Value(body))
	}
	return res, nil
}

// responseKeys are the top-level members of a chat.completion the gateway
// looks at, indexed like chunkKeys (keyModel, keyUsage, keyError, keyTier).
var responseKeys = chunkKeys[:keyChoices]

// publicModel is the public model id as a JSON string, for the answer's
// model member: the client's own model value when the handler located it
// (a string equal to PublicModel, as the client wrote it), else PublicModel
// encoded.
func publicModel(req *provider.ChatRequest) []byte {
	if v := req.ModelAt.Value(req.Body); v != nil {
		return bytes.Clone(v)
	}
	q, _ := json.Marshal(req.PublicModel)
	return q
}
