package openaicompat

import (
	"context"
	"strings"

	"github.com/modelgate/modelgate/internal/provider"
)

var _ provider.Completer = (*Client)(nil)

// Complete passes a legacy completion request through to the vendor's
// /completions: the body goes byte for byte with only model patched, and
// the answer comes back with model set to the public id. It is Chat's
// exchange (timeouts, error mapping, usage) against another path.
func (c *Client) Complete(ctx context.Context, req *provider.CompletionRequest) (*provider.CompletionResponse, error) {
	return c.completions().Chat(ctx, req)
}

// CompleteStream is Complete for streams: stream_options.include_usage is
// forced on upstream so the usage is always known, and the usage (chunk and
// member) is withheld from the client unless it asked, exactly as for chat.
func (c *Client) CompleteStream(ctx context.Context, req *provider.CompletionRequest) (provider.CompletionStream, error) {
	return c.completions().ChatStream(ctx, req)
}

// completions is a copy of c that posts to {base}/completions (on Azure,
// {base}/openai/deployments/{deployment}/completions?api-version=) instead
// of chat/completions. Legacy completion traffic is rare, so a shallow copy
// per request costs less than keeping a second client.
func (c *Client) completions() *Client {
	cc := *c
	if cc.chatURL != "" {
		cc.chatURL = cc.base + "/completions"
	} else {
		cc.azureQuery = strings.Replace(cc.azureQuery, "/chat/completions?", "/completions?", 1)
	}
	return &cc
}
