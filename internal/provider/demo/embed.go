package demo

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
)

// EmbedModel is the demo model that serves embeddings.
const EmbedModel = "demo-embed"

// Embedding sizes: the default, and the most a request may ask for (so a
// request of 2048 inputs stays a few tens of megabytes).
const (
	DefaultDimensions = 256
	MaxDimensions     = 3072
)

var _ provider.Embedder = (*Provider)(nil)

// Embed answers with deterministic unit vectors: the same input always
// gets the same vector, and a shorter dimensions is the renormalized
// prefix of a longer one (as with OpenAI's text-embedding-3 models). Token
// counts are left to the gateway's tokenizer.
func (p *Provider) Embed(_ context.Context, req *provider.EmbedRequest) (*provider.EmbedResponse, error) {
	if req.UpstreamModel != EmbedModel {
		return nil, apierr.Invalid("model", "The model '%s' does not support embeddings; use %s.", req.PublicModel, EmbedModel)
	}
	if req.Dimensions > MaxDimensions {
		return nil, apierr.Invalid("dimensions", "Invalid 'dimensions': the demo model makes at most %d dimensions, but %d were asked for.", MaxDimensions, req.Dimensions)
	}
	dims := int(req.Dimensions)
	if dims <= 0 {
		dims = DefaultDimensions
	}
	vectors := make([][]float32, req.Inputs())
	for i := range vectors {
		var seed [32]byte
		if req.Tokens != nil {
			seed = tokenSeed(req.Tokens[i])
		} else {
			seed = sha256.Sum256([]byte(req.Texts[i]))
		}
		vectors[i] = Vector(seed, dims)
	}
	body, err := provider.EmbeddingList(req.PublicModel, vectors, req.Base64, 0)
	if err != nil {
		return nil, err
	}
	return &provider.EmbedResponse{Body: body}, nil
}

// Vector is the demo embedding of seed: dims normally distributed values
// from a ChaCha8 stream keyed by seed, scaled to unit length.
func Vector(seed [32]byte, dims int) []float32 {
	r := rand.New(rand.NewChaCha8(seed))
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	provider.Normalize(v)
	return v
}

// tokenSeed hashes token ids, so a token array has its own stable vector.
func tokenSeed(ids []int64) [32]byte {
	h := sha256.New()
	var b [8]byte
	for _, id := range ids {
		binary.LittleEndian.PutUint64(b[:], uint64(id))
		h.Write(b[:])
	}
	var seed [32]byte
	h.Sum(seed[:0])
	return seed
}
