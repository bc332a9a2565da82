package openaicompat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
)

var _ provider.Responder = (*Client)(nil)

// noResponsesHosts are OpenAI-compatible vendors known to serve chat
// completions but not the Responses API; the gateway translates Responses
// requests to chat for them. Every other upstream (OpenAI, Azure, xAI,
// Groq, OpenRouter, Fireworks, vLLM, Ollama, ...) gets them passed through.
var noResponsesHosts = []string{
	"deepseek.com", "mistral.ai", "moonshot.ai", "moonshot.cn", "perplexity.ai", "cerebras.ai",
	"together.xyz", "googleapis.com", "anthropic.com",
}

// NativeResponses reports whether the upstream serves /responses itself:
// Azure does, and so does every base URL outside noResponsesHosts.
func (c *Client) NativeResponses() bool {
	if c.chatURL == "" {
		return true
	}
	u, err := url.Parse(c.base)
	if err != nil {
		return false
	}
	host := u.Hostname()
	for _, h := range noResponsesHosts {
		if host == h || strings.HasSuffix(host, "."+h) {
			return false
		}
	}
	return true
}

// responsesURL is the Responses endpoint, plus suffix ("/{id}"). Azure's
// is the v1 API ({endpoint}/openai/v1/responses, the deployment in the
// body's model): the dated api-versions the chat URL uses predate it.
func (c *Client) responsesURL(suffix string) string {
	if c.chatURL == "" {
		return c.base + "/openai/v1/responses" + suffix
	}
	return c.base + "/responses" + suffix
}

// responsesBody sets the body's model to the upstream id.
func responsesBody(body []byte, public, upstream string) ([]byte, error) {
	if public == upstream {
		return body, nil
	}
	q, _ := json.Marshal(upstream)
	return jsonx.Set(body, "model", q)
}

// Respond passes a non-streamed Responses request through and returns the
// Response object with model set to the public id.
func (c *Client) Respond(ctx context.Context, req *provider.ResponsesRequest) (*provider.ResponsesResult, error) {
	body, err := responsesBody(req.Body, req.PublicModel, req.UpstreamModel)
	if err != nil {
		return nil, fmt.Errorf("openaicompat %s: patch responses body: %w", c.name, err)
	}
	k := c.start(ctx)
	defer k.Release()
	resp, err := c.Do(k, http.MethodPost, c.responsesURL(""), "application/json", "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return c.readResponse(k, resp, req.PublicModel, "")
}

// readResponse reads a Response object, showing public as its model (when
// only is set, only if the stored model is only).
func (c *Client) readResponse(k *provider.Call, resp *http.Response, public, only string) (*provider.ResponsesResult, error) {
	b, err := provider.ReadBody(k.Reader(resp.Body), resp.ContentLength, c.maxBody)
	if err != nil {
		return nil, provider.FromTransport(k.Ctx, c.name, err)
	}
	if err := jsonx.Check(b, 256); err != nil {
		return nil, provider.BadResponse(c.name, fmt.Errorf("responses body: %w", err))
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, provider.BadResponse(c.name, fmt.Errorf("responses body is not an object"))
	}
	if m, ok := jsonx.Field(b, "model"); public != "" && (only == "" || (ok && bytes.Equal(m, quoteString(only)))) {
		if b, err = jsonx.Set(b, "model", quoteString(public)); err != nil {
			return nil, provider.BadResponse(c.name, err)
		}
	}
	res := &provider.ResponsesResult{Body: b}
	if u, ok := jsonx.Field(b, "usage"); ok && !jsonx.IsNull(u) {
		res.Usage, res.HasUsage = parseResponsesUsage(u)
	}
	return res, nil
}

// quoteString is s as a JSON string.
func quoteString(s string) []byte { q, _ := json.Marshal(s); return q }

// parseResponsesUsage reads the Responses usage object.
func parseResponsesUsage(raw []byte) (provider.Usage, bool) {
	var w struct {
		InputTokens        int64 `json:"input_tokens"`
		OutputTokens       int64 `json:"output_tokens"`
		TotalTokens        int64 `json:"total_tokens"`
		InputTokensDetails *struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokensDetails *struct {
			ReasoningTokens int64 `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return provider.Usage{}, false
	}
	u := provider.Usage{PromptTokens: w.InputTokens, CompletionTokens: w.OutputTokens, TotalTokens: w.TotalTokens}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	if w.InputTokensDetails != nil {
		u.CachedTokens = w.InputTokensDetails.CachedTokens
	}
	if w.OutputTokensDetails != nil {
		u.ReasoningTokens = w.OutputTokensDetails.ReasoningTokens
	}
	return u, true
}

// RespondStream passes a streamed Responses request through and relays its
// events one by one, names preserved.
func (c *Client) RespondStream(ctx context.Context, req *provider.ResponsesRequest) (provider.EventStream, error) {
	body, err := responsesBody(req.Body, req.PublicModel, req.UpstreamModel)
	if err != nil {
		return nil, fmt.Errorf("openaicompat %s: patch responses body: %w", c.name, err)
	}
	k := c.start(ctx)
	resp, err := c.Do(k, http.MethodPost, c.responsesURL(""), "application/json", "text/event-stream", bytes.NewReader(body))
	if err != nil {
		k.Release()
		return nil, err
	}
	if !provider.IsEventStream(resp.Header.Get("Content-Type")) {
		defer k.Release()
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(k.Reader(resp.Body), c.maxError))
		if ev, ok := jsonx.Field(b, "error"); jsonx.Check(b, 64) == nil && ok && !jsonx.IsNull(ev) {
			return nil, provider.FromStatus(c.name, http.StatusBadGateway, resp.Header, c.vendorError(b))
		}
		return nil, provider.BadResponse(c.name, fmt.Errorf("stream answered with Content-Type %q", resp.Header.Get("Content-Type")))
	}
	return newEventStream(c.name, c.secrets, k, resp.Body, quoteString(req.PublicModel)), nil
}

// GetResponse fetches a stored response. The vendor's 404 stays a 404
// (any other failure is mapped as for chat).
func (c *Client) GetResponse(ctx context.Context, g *provider.ResponseGet) (*provider.ResponsesResult, error) {
	return c.stored(ctx, http.MethodGet, "", g)
}

// stored sends method to the stored response g.ID (plus suffix, such as
// "/cancel") without a body and reads the Response object it answers.
func (c *Client) stored(ctx context.Context, method, suffix string, g *provider.ResponseGet) (*provider.ResponsesResult, error) {
	u := c.responsesURL("/" + url.PathEscape(g.ID) + suffix)
	if len(g.Query) > 0 {
		u += "?" + g.Query.Encode()
	}
	k := c.start(ctx)
	defer k.Release()
	hr, err := http.NewRequestWithContext(k.Ctx, method, u, nil)
	if err != nil {
		return nil, provider.BadResponse(c.name, err)
	}
	hr.Header = c.header.Clone()
	hr.Header.Del("Content-Type")
	hr.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(hr)
	if err != nil {
		return nil, provider.FromTransport(k.Ctx, c.name, err)
	}
	defer resp.Body.Close()
	k.Touch()
	if resp.StatusCode == http.StatusNotFound {
		b, _ := io.ReadAll(io.LimitReader(k.Reader(resp.Body), c.maxError))
		v := c.vendorError(b)
		msg := v.Message
		if msg == "" || !strings.Contains(msg, g.ID) {
			msg = fmt.Sprintf("Response with id '%s' not found.", g.ID)
		}
		return nil, &apierr.Error{Status: http.StatusNotFound, Type: apierr.TypeInvalidRequest, Code: apierr.CodeNotFound,
			Message: msg, Err: fmt.Errorf("provider %s: HTTP 404: %s", c.name, v.Message)}
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(k.Reader(resp.Body), c.maxError))
		return nil, provider.FromStatus(c.name, resp.StatusCode, resp.Header, c.vendorError(b))
	}
	return c.readResponse(k, resp, g.Public, g.Upstream)
}
