package openaicompat

import (
	"context"
	"net/http"

	"github.com/modelgate/modelgate/internal/provider"
)

var _ provider.ResponseCanceller = (*Client)(nil)

// CancelResponse cancels a background response (POST
// /responses/{id}/cancel, no body) and returns the Response object the
// vendor answers with. The vendor's 404 stays a 404; a response it cannot
// cancel (not a background one, or already finished) is its error, mapped
// as for chat.
func (c *Client) CancelResponse(ctx context.Context, g *provider.ResponseGet) (*provider.ResponsesResult, error) {
	req := *g
	req.Query = nil
	return c.stored(ctx, http.MethodPost, "/cancel", &req)
}
