package provider

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
)

// EmbedRequest is a validated embeddings request on its way upstream.
// Exactly one of Texts and Tokens is set. Body is the client's JSON as
// received: OpenAI-compatible adapters forward it with only model patched
// (so encoding_format, dimensions, user and fields the gateway does not
// know reach the vendor untouched); translating adapters read the parsed
// fields instead.
type EmbedRequest struct {
	PublicModel   string // the id the client asked for; the response carries it
	UpstreamModel string // the id the vendor knows the model by
	Body          []byte
	Texts         []string  // the inputs as text, in order
	Tokens        [][]int64 // the inputs as token ids, in order
	Base64        bool      // encoding_format "base64": little-endian float32 vectors, base64-encoded
	Dimensions    int64     // requested vector length; 0 leaves it to the model
}

// Inputs is the number of inputs (one vector each in the answer).
func (r *EmbedRequest) Inputs() int {
	if r.Tokens != nil {
		return len(r.Tokens)
	}
	return len(r.Texts)
}

// EmbedResponse is a CreateEmbeddingResponse in OpenAI's wire format whose
// model is already the public id. When HasUsage is false the vendor counted
// nothing (Gemini, the demo): the gateway counts the input tokens itself
// and replaces the body's usage with its count.
type EmbedResponse struct {
	Body     []byte
	Usage    Usage
	HasUsage bool
}

// Embedder is the optional capability of adapters that serve
// POST /v1/embeddings.
type Embedder interface {
	Embed(ctx context.Context, req *EmbedRequest) (*EmbedResponse, error)
}

// embeddingList is CreateEmbeddingResponse; Embedding is []float32 or, for
// encoding_format base64, a string.
type embeddingList struct {
	Object string          `json:"object"`
	Data   []embeddingItem `json:"data"`
	Model  string          `json:"model"`
	Usage  embeddingUsage  `json:"usage"`
}

type embeddingItem struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

type embeddingUsage struct {
	PromptTokens int64 `json:"prompt_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
}

// EmbeddingList encodes vectors that the gateway computed or translated as
// OpenAI's answer: floats, or with b64 the base64 of each vector's
// little-endian float32 bytes (what the official SDKs decode). Adapters
// whose vendor counts no tokens pass promptTokens 0 and leave HasUsage
// false.
func EmbeddingList(model string, vectors [][]float32, b64 bool, promptTokens int64) ([]byte, error) {
	out := embeddingList{Object: "list", Data: make([]embeddingItem, len(vectors)), Model: model,
		Usage: embeddingUsage{PromptTokens: promptTokens, TotalTokens: promptTokens}}
	for i, v := range vectors {
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("embedding %d holds %v, which JSON cannot carry", i, x)
			}
		}
		var e any = v
		if v == nil {
			e = []float32{}
		}
		if b64 {
			e = EncodeFloat32(v)
		}
		out.Data[i] = embeddingItem{Object: "embedding", Index: i, Embedding: e}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode embeddings: %w", err)
	}
	return b, nil
}

// EncodeFloat32 is encoding_format base64: the standard base64 of the
// vector's float32 values in little-endian byte order.
func EncodeFloat32(v []float32) string {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// DecodeFloat32 reverses EncodeFloat32 (tests and clients use it).
func DecodeFloat32(s string) ([]float32, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("decode base64 embedding: %w", err)
	}
	if len(raw)%4 != 0 {
		return nil, fmt.Errorf("decode base64 embedding: %d bytes is not a whole number of float32 values", len(raw))
	}
	v := make([]float32, len(raw)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return v, nil
}

// Normalize scales v in place to unit length (OpenAI's embeddings are unit
// vectors, so clients compare them with a dot product); a zero vector is
// left as it is.
func Normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	n := math.Sqrt(sum)
	for i, x := range v {
		v[i] = float32(float64(x) / n)
	}
}
