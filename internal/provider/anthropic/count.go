package anthropic

import (
	"context"
	"fmt"

	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/anthropicwire"
)

var _ provider.TokenCounter = (*Client)(nil)

// CountTokens passes a count_tokens request through (model patched, the
// adapter's key, the client's version and betas) and returns Anthropic's
// answer as it is: {"input_tokens": N}.
func (c *Client) CountTokens(ctx context.Context, req *provider.MessagesRequest) ([]byte, error) {
	body, err := jsonx.Set(req.Body, "model", anthropicwire.AppendString(nil, req.UpstreamModel))
	if err != nil {
		return nil, fmt.Errorf("anthropic %s: count_tokens body: %w", c.name, err)
	}
	k := c.start(ctx)
	defer k.Release()
	resp, err := c.sendTo(k, c.url+"/count_tokens", body, false, c.messagesHeader(req.Header))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := provider.ReadBody(k.Reader(resp.Body), resp.ContentLength, c.maxBody)
	if err != nil {
		return nil, c.transportError(k, err)
	}
	if v, ok := jsonx.Field(b, "input_tokens"); !ok || jsonx.Kind(v) != "number" {
		return nil, provider.BadResponse(c.name, fmt.Errorf("count_tokens answer has no input_tokens: %.200s", b))
	}
	return b, nil
}
