package openaicompat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
)

var _ provider.Embedder = (*Client)(nil)

// Embed passes an embeddings request through: the client's body with only
// model set to the upstream id (encoding_format, dimensions, user and
// unknown fields reach the vendor untouched), and the vendor's answer with
// only model set back to the public id.
func (c *Client) Embed(ctx context.Context, req *provider.EmbedRequest) (*provider.EmbedResponse, error) {
	body, err := patchModel(req.Body, req.PublicModel, req.UpstreamModel)
	if err != nil {
		return nil, fmt.Errorf("openaicompat %s: patch embeddings body: %w", c.name, err)
	}
	k := c.start(ctx)
	defer k.Release()
	resp, err := c.Do(k, http.MethodPost, c.URL("embeddings", req.UpstreamModel), "application/json", "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := provider.ReadBody(k.Reader(resp.Body), resp.ContentLength, c.maxBody)
	if err != nil {
		return nil, provider.FromTransport(k.Ctx, c.name, err)
	}
	return c.embedAnswer(b, resp.Header, req.PublicModel)
}

// patchModel sets body's model to upstream when it differs from public.
func patchModel(body []byte, public, upstream string) ([]byte, error) {
	if upstream == public {
		return body, nil
	}
	q, err := json.Marshal(upstream)
	if err != nil {
		return nil, err
	}
	return jsonx.Set(body, "model", q)
}

// embedAnswer checks a 200 answer (an error object inside one is the
// vendor's failure), sets the public model id and reads the usage.
func (c *Client) embedAnswer(b []byte, h http.Header, public string) (*provider.EmbedResponse, error) {
	if err := jsonx.Check(b, 64); err != nil {
		return nil, provider.BadResponse(c.name, fmt.Errorf("embeddings response body: %w", err))
	}
	if ev, ok := jsonx.Field(b, "error"); ok && !jsonx.IsNull(ev) {
		return nil, provider.FromStatus(c.name, http.StatusBadGateway, h, c.vendorError(b))
	}
	if data, ok := jsonx.Field(b, "data"); !ok || len(data) == 0 || data[0] != '[' {
		return nil, provider.BadResponse(c.name, errors.New("embeddings response has no data array"))
	}
	q, _ := json.Marshal(public)
	out, err := jsonx.Set(b, "model", q)
	if err != nil {
		return nil, provider.BadResponse(c.name, fmt.Errorf("embeddings response is not an object: %w", err))
	}
	res := &provider.EmbedResponse{Body: out}
	// No input has zero tokens: a vendor that reports 0 (or nothing) did
	// not count, and the gateway counts instead.
	if u, ok := jsonx.Field(b, "usage"); ok && !jsonx.IsNull(u) {
		var w struct {
			PromptTokens *int64 `json:"prompt_tokens"`
			TotalTokens  int64  `json:"total_tokens"`
		}
		if json.Unmarshal(u, &w) == nil && w.PromptTokens != nil && *w.PromptTokens > 0 {
			res.Usage = provider.Usage{PromptTokens: *w.PromptTokens, TotalTokens: max(w.TotalTokens, *w.PromptTokens)}
			res.HasUsage = true
		}
	}
	return res, nil
}
