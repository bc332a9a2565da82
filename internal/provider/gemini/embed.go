package gemini

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
)

var _ provider.Embedder = (*Client)(nil)

// maxEmbedBatch is the most requests Gemini accepts in one
// batchEmbedContents call ("at most 100 requests can be in one batch");
// larger inputs are sent as several calls, in order.
const maxEmbedBatch = 100

// embedBatchRequest is a BatchEmbedContentsRequest body.
type embedBatchRequest struct {
	Requests []embedContentRequest `json:"requests"`
}

// embedContentRequest is one EmbedContentRequest; model repeats the URL's
// model as "models/{id}", as Google requires.
type embedContentRequest struct {
	Model                string  `json:"model"`
	Content              content `json:"content"`
	OutputDimensionality *int64  `json:"outputDimensionality,omitempty"`
}

// embedBatchResponse is a BatchEmbedContentsResponse.
type embedBatchResponse struct {
	Embeddings []struct {
		Values []float32 `json:"values"`
	} `json:"embeddings"`
	Error *wireError `json:"error"`
}

// Embed translates an embeddings request to batchEmbedContents and the
// answer back to OpenAI's list. Gemini embeds text only, so token id
// inputs are refused before anything is sent. It reports no token count:
// the answer's usage is left for the gateway to count.
func (c *Client) Embed(ctx context.Context, req *provider.EmbedRequest) (*provider.EmbedResponse, error) {
	if req.Tokens != nil {
		return nil, apierr.Invalid("input", "The model '%s' takes text only: send the input as a string or an array of strings, not token ids.", req.PublicModel)
	}
	vectors := make([][]float32, 0, len(req.Texts))
	for start := 0; start < len(req.Texts); start += maxEmbedBatch {
		batch := req.Texts[start:min(start+maxEmbedBatch, len(req.Texts))]
		vs, err := c.embedBatch(ctx, req.UpstreamModel, embedRequest(req.UpstreamModel, batch, req.Dimensions))
		if err != nil {
			return nil, err
		}
		vectors = append(vectors, vs...)
	}
	if req.Dimensions > 0 {
		// Gemini normalizes only full-length vectors; OpenAI's are always
		// unit length, and clients compare them with a dot product.
		for _, v := range vectors {
			provider.Normalize(v)
		}
	}
	body, err := provider.EmbeddingList(req.PublicModel, vectors, req.Base64, 0)
	if err != nil {
		return nil, provider.BadResponse(c.name, err)
	}
	return &provider.EmbedResponse{Body: body}, nil
}

// embedRequest is the batchEmbedContents body for texts: one request per
// text, each with the model and, when asked, the output dimensionality.
func embedRequest(model string, texts []string, dims int64) *embedBatchRequest {
	r := &embedBatchRequest{Requests: make([]embedContentRequest, len(texts))}
	var d *int64
	if dims > 0 {
		d = &dims
	}
	for i, t := range texts {
		r.Requests[i] = embedContentRequest{Model: "models/" + model, Content: content{Parts: []part{{Text: t}}},
			OutputDimensionality: d}
	}
	return r
}

// embedBatch sends one batchEmbedContents call and returns its vectors in
// order.
func (c *Client) embedBatch(ctx context.Context, model string, r *embedBatchRequest) ([][]float32, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("gemini %s: encode embed request: %w", c.name, err)
	}
	b, err := c.unary(ctx, model, ":batchEmbedContents", body)
	if err != nil {
		return nil, err
	}
	return c.embedVectors(b, len(r.Requests))
}

// embedVectors reads a BatchEmbedContentsResponse that must hold want
// non-empty vectors.
func (c *Client) embedVectors(b []byte, want int) ([][]float32, error) {
	var res embedBatchResponse
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, provider.BadResponse(c.name, fmt.Errorf("embed response body: %w", err))
	}
	if res.Error != nil {
		return nil, c.vendorFailure(res.Error)
	}
	if len(res.Embeddings) != want {
		return nil, provider.BadResponse(c.name, fmt.Errorf("embed response has %d embeddings for %d inputs", len(res.Embeddings), want))
	}
	out := make([][]float32, want)
	for i, e := range res.Embeddings {
		if len(e.Values) == 0 {
			return nil, provider.BadResponse(c.name, fmt.Errorf("embedding %d has no values", i))
		}
		out[i] = e.Values
	}
	return out, nil
}
