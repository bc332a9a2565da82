package demo

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
)

// embed runs Embed and reads the answer with the official SDK's type.
func embed(t *testing.T, req *provider.EmbedRequest) oai.CreateEmbeddingResponse {
	t.Helper()
	res, err := New(nil).Embed(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.HasUsage {
		t.Errorf("the demo claims usage %+v; the gateway counts", res.Usage)
	}
	var r oai.CreateEmbeddingResponse
	if err := json.Unmarshal(res.Body, &r); err != nil {
		t.Fatal(err)
	}
	if r.Model != req.PublicModel || len(r.Data) != req.Inputs() {
		t.Fatalf("answer model %q with %d items", r.Model, len(r.Data))
	}
	return r
}

func norm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

func TestEmbedVectors(t *testing.T) {
	tests := []struct {
		name string
		req  provider.EmbedRequest
		dims int
	}{
		{"default size", provider.EmbedRequest{Texts: []string{"hello", "world", "hello"}}, DefaultDimensions},
		{"dimensions", provider.EmbedRequest{Texts: []string{"hello"}, Dimensions: 64}, 64},
		{"one dimension", provider.EmbedRequest{Texts: []string{"hello"}, Dimensions: 1}, 1},
		{"largest", provider.EmbedRequest{Texts: []string{"hello"}, Dimensions: MaxDimensions}, MaxDimensions},
		{"tokens", provider.EmbedRequest{Tokens: [][]int64{{1, 2}, {3}}}, DefaultDimensions},
		{"base64", provider.EmbedRequest{Texts: []string{"hello"}, Base64: true, Dimensions: 16}, 16},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.PublicModel, tt.req.UpstreamModel = "my-embed", EmbedModel
			r := embed(t, &tt.req)
			for i, d := range r.Data {
				if d.Index != int64(i) || len(d.Embedding) != tt.dims || math.Abs(norm(d.Embedding)-1) > 1e-5 {
					t.Errorf("data[%d]: index %d, %d dims, norm %v", i, d.Index, len(d.Embedding), norm(d.Embedding))
				}
			}
		})
	}
}

func TestEmbedDeterministic(t *testing.T) {
	req := func(dims int64, texts ...string) *provider.EmbedRequest {
		return &provider.EmbedRequest{PublicModel: "e", UpstreamModel: EmbedModel, Texts: texts, Dimensions: dims}
	}
	a := embed(t, req(0, "hello", "world", "hello"))
	b := embed(t, req(0, "hello"))
	if !equal(a.Data[0].Embedding, a.Data[2].Embedding) || !equal(a.Data[0].Embedding, b.Data[0].Embedding) {
		t.Error("the same text got different vectors")
	}
	if equal(a.Data[0].Embedding, a.Data[1].Embedding) {
		t.Error("different texts got the same vector")
	}
	// A shorter vector is the renormalized prefix of the full one.
	short := embed(t, req(8, "hello")).Data[0].Embedding
	full := a.Data[0].Embedding[:8]
	n := norm(full)
	for i := range short {
		if math.Abs(short[i]-full[i]/n) > 1e-6 {
			t.Fatalf("[%d] %v, want %v", i, short[i], full[i]/n)
		}
	}
	// Token arrays are stable too, and differ from each other.
	tok := func(ids ...int64) []float64 {
		return embed(t, &provider.EmbedRequest{PublicModel: "e", UpstreamModel: EmbedModel, Tokens: [][]int64{ids}}).Data[0].Embedding
	}
	if !equal(tok(1, 2), tok(1, 2)) || equal(tok(1, 2), tok(2, 1)) {
		t.Error("token vectors are not a function of the ids")
	}
	// A fixed vector pins the generator: a change would alter every
	// user's demo embeddings.
	if got := a.Data[0].Embedding[0]; math.Abs(got-goldenFirst) > 1e-7 {
		t.Errorf("first value of \"hello\" is %v, was %v", got, goldenFirst)
	}
}

// goldenFirst is the first value of the demo vector of "hello".
const goldenFirst = 0.011403915

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestEmbedRefusals(t *testing.T) {
	tests := []struct {
		name  string
		req   provider.EmbedRequest
		param string
	}{
		{"chat model", provider.EmbedRequest{PublicModel: "demo-chat", UpstreamModel: "demo-chat", Texts: []string{"x"}}, "model"},
		{"too many dimensions", provider.EmbedRequest{PublicModel: "e", UpstreamModel: EmbedModel, Texts: []string{"x"}, Dimensions: MaxDimensions + 1}, "dimensions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(nil).Embed(context.Background(), &tt.req)
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != 400 || e.Param != tt.param {
				t.Fatalf("got %v, want 400 on %s", err, tt.param)
			}
		})
	}
}
