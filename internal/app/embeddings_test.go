package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/oapitest"
	"github.com/modelgate/modelgate/internal/provider/providertest"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// embedPrice is $1000 per million input tokens: exactly 1000 micro-units
// per token, so a charge is visibly tokens × price.
const embedPrice = 1000

// startEmbedGateway serves text-embedding-3-small (and failure scenarios)
// from the fake OpenAI upstream, gemini-embedding-001 from a fake Gemini,
// claude-plain from an Anthropic provider (which has no embeddings), and
// demo-embed from the demo provider.
func startEmbedGateway(t *testing.T) (*gateway, *providertest.Gemini) {
	t.Helper()
	gem, anth := providertest.NewGemini(t), providertest.NewAnthropic(t)
	g := startGateway(t, func(c *config.Config) {
		c.Providers[0].Models = append(c.Providers[0].Models,
			config.ModelRef{ID: "text-embedding-3-small"}, config.ModelRef{ID: "embed-429", Upstream: "err-429"},
			config.ModelRef{ID: "embed-malformed", Upstream: "malformed"}, config.ModelRef{ID: "embed-no-usage", Upstream: "no-usage"})
		c.Providers = append(c.Providers,
			config.Provider{Name: "fake-gemini", Type: "gemini", BaseURL: gem.URL, APIKey: "x", Weight: 1,
				Models:  []config.ModelRef{{ID: "gemini-embedding-001"}, {ID: "gemini-embed-429", Upstream: "err-429"}},
				Timeout: config.Duration(3 * time.Second), IdleTimeout: config.Duration(time.Second)},
			config.Provider{Name: "fake-anthropic", Type: "anthropic", BaseURL: anth.URL, APIKey: "x", Weight: 1,
				Models: []config.ModelRef{{ID: "claude-plain"}}})
		in := config.Amount(embedPrice * money.Unit)
		for _, id := range []string{"text-embedding-3-small", "embed-429", "embed-malformed", "embed-no-usage",
			"gemini-embedding-001", "gemini-embed-429", "claude-plain"} {
			c.Models = append(c.Models, config.ModelConfig{ID: id, Input: &in, Output: &in})
		}
	})
	return g, gem
}

// exchange is what one SDK call sent and received, byte for byte.
type exchange struct {
	sent, got []byte
	header    http.Header
}

// recording captures the SDK's request and the gateway's raw answer while
// the SDK still parses it.
func recording(x *exchange) option.RequestOption {
	return option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		if r.Body != nil {
			x.sent, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(x.sent))
		}
		resp, err := next(r)
		if err == nil {
			x.got, _ = io.ReadAll(resp.Body)
			resp.Body, x.header = io.NopCloser(bytes.NewReader(x.got)), resp.Header
		}
		return resp, err
	})
}

func strs(s ...string) oai.EmbeddingNewParamsInputUnion {
	return oai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: s}
}

func unitLength(v []float64) bool {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Abs(s-1) < 1e-5
}

// sameFloat32 reports whether a and b hold the same float32 values: the
// SDK reads a float answer's decimals and a base64 answer's float32 bits
// into float64, which agree once rounded back to float32.
func sameFloat32(a, b []float64) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if float32(a[i]) != float32(b[i]) {
			return false
		}
	}
	return true
}

// embedCase is one SDK request and what must come back.
type embedCase struct {
	name   string
	params oai.EmbeddingNewParams
	items  int
	dims   int
	tokens int64 // prompt tokens the vendor (or, estimated, the gateway) counts
}

// runEmbedCases sends each case with its own payer and checks the answer,
// the spec, the cost header, the usage record and the balance.
func runEmbedCases(t *testing.T, g *gateway, cases []embedCase, price int64, estimated bool, check func(embedCase, exchange)) {
	t.Helper()
	ctx := context.Background()
	payers := map[string]payer{}
	for _, tc := range cases {
		p := g.newPayer("default", money.Unit, 0, time.Time{})
		payers[p.accountID] = p
		var x exchange
		c := g.client(p.secret)
		r, err := c.Embeddings.New(ctx, tc.params, recording(&x))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.Model != tc.params.Model || r.Object != "list" || len(r.Data) != tc.items || r.Usage.PromptTokens != tc.tokens || r.Usage.TotalTokens != tc.tokens {
			t.Errorf("%s: model %q, %d items, usage %+v; want %d items, %d tokens", tc.name, r.Model, len(r.Data), r.Usage, tc.items, tc.tokens)
		}
		for i, d := range r.Data {
			if d.Index != int64(i) || d.Object != "embedding" || len(d.Embedding) != tc.dims {
				t.Errorf("%s: data[%d] index %d, %d dims, want %d", tc.name, i, d.Index, len(d.Embedding), tc.dims)
			}
		}
		if want := money.Micros(tc.tokens * price).String(); x.header.Get("X-Modelgate-Cost") != want {
			t.Errorf("%s: X-Modelgate-Cost %q, want %q", tc.name, x.header.Get("X-Modelgate-Cost"), want)
		}
		if tc.params.EncodingFormat != oai.EmbeddingNewParamsEncodingFormatBase64 {
			oapitest.CheckResponse(t, http.MethodPost, "/v1/embeddings", 200, x.header.Get("Content-Type"), x.got)
		} else if !strings.Contains(string(x.got), `"embedding":"`) {
			t.Errorf("%s: base64 asked, got %.200s", tc.name, x.got)
		}
		if check != nil {
			check(tc, x)
		}
	}
	recs := g.usage()
	seen := 0
	for _, rec := range recs {
		if _, ok := payers[rec.AccountID]; !ok {
			continue
		}
		seen++
		if rec.Endpoint != "embeddings" || rec.Status != 200 || rec.Estimated != estimated || rec.Cost != money.Micros(rec.PromptTokens*price) || rec.PromptTokens == 0 {
			t.Errorf("record %+v", rec)
		}
		if b := audit(t, g.app.Store(), rec.AccountID); b != money.Unit-rec.Cost {
			t.Errorf("balance %v after a charge of %v", b, rec.Cost)
		}
	}
	if seen != len(cases) {
		t.Errorf("%d usage records for %d requests", seen, len(cases))
	}
}

func TestEmbeddingsOpenAI(t *testing.T) {
	g, _ := startEmbedGateway(t)
	m := "text-embedding-3-small"
	cases := []embedCase{
		{"string", oai.EmbeddingNewParams{Model: m, Input: oai.EmbeddingNewParamsInputUnion{OfString: oai.String("hello big world")}}, 1, 8, 3},
		{"strings", oai.EmbeddingNewParams{Model: m, Input: strs("a b", "c", "d e f")}, 3, 8, 6},
		{"token ids", oai.EmbeddingNewParams{Model: m, Input: oai.EmbeddingNewParamsInputUnion{OfArrayOfTokens: []int64{1212, 318, 257}}}, 1, 8, 3},
		{"token arrays", oai.EmbeddingNewParams{Model: m, Input: oai.EmbeddingNewParamsInputUnion{OfArrayOfTokenArrays: [][]int64{{1, 2}, {3}}}}, 2, 8, 3},
		{"base64", oai.EmbeddingNewParams{Model: m, Input: strs("a b", "c"), EncodingFormat: oai.EmbeddingNewParamsEncodingFormatBase64}, 2, 8, 3},
		{"dimensions", oai.EmbeddingNewParams{Model: m, Input: strs("a b", "c"), Dimensions: oai.Int(4), User: oai.String("u-1")}, 2, 4, 3},
	}
	var float, b64 []oai.Embedding
	runEmbedCases(t, g, cases, embedPrice, false, func(tc embedCase, x exchange) {
		// Pass-through: the vendor got the SDK's body byte for byte.
		if last := g.upstream.Last(); !bytes.Equal(last.Body, x.sent) || last.Model != m {
			t.Errorf("%s: vendor got %s, SDK sent %s", tc.name, last.Body, x.sent)
		}
		var r oai.CreateEmbeddingResponse
		_ = json.Unmarshal(x.got, &r)
		switch tc.name {
		case "strings":
			float = r.Data
		case "base64":
			b64 = r.Data
		case "dimensions":
			for _, d := range r.Data {
				if !unitLength(d.Embedding) {
					t.Errorf("dimensions: %v is not unit length", d.Embedding)
				}
			}
		}
	})
	// The SDK decodes base64 (little-endian float32) to the float answer.
	for i := range b64 {
		if !sameFloat32(b64[i].Embedding, float[i].Embedding) {
			t.Errorf("base64 data[%d] = %v, float %v", i, b64[i].Embedding, float[i].Embedding)
		}
	}
}

func TestEmbeddingsGemini(t *testing.T) {
	g, gem := startEmbedGateway(t)
	m := "gemini-embedding-001"
	tok := tokenize.NewSet().For("") // the catalog names no tokenizer for Gemini
	count := func(s ...string) int64 {
		var n int64
		for _, x := range s {
			n += int64(tok.Count([]byte(x)))
		}
		return n
	}
	cases := []embedCase{
		{"string", oai.EmbeddingNewParams{Model: m, Input: oai.EmbeddingNewParamsInputUnion{OfString: oai.String("hello big world")}}, 1, 8, count("hello big world")},
		{"strings", oai.EmbeddingNewParams{Model: m, Input: strs("first text", "second", "third one")}, 3, 8, count("first text", "second", "third one")},
		{"base64", oai.EmbeddingNewParams{Model: m, Input: strs("first text", "second"), EncodingFormat: oai.EmbeddingNewParamsEncodingFormatBase64}, 2, 8, count("first text", "second")},
		{"dimensions", oai.EmbeddingNewParams{Model: m, Input: strs("first text"), Dimensions: oai.Int(3)}, 1, 3, count("first text")},
	}
	var float, b64 []oai.Embedding
	runEmbedCases(t, g, cases, embedPrice, true, func(tc embedCase, x exchange) {
		last := gem.Last()
		var sent struct {
			Requests []struct {
				Model                string
				Content              struct{ Parts []struct{ Text string } }
				OutputDimensionality *int
			}
		}
		if err := json.Unmarshal(last.Body, &sent); err != nil || last.Model != m || len(sent.Requests) != tc.items ||
			sent.Requests[0].Model != "models/"+m || sent.Requests[0].Content.Parts[0].Text == "" {
			t.Errorf("%s: Gemini got %s at %s", tc.name, last.Body, last.Model)
		}
		if d := sent.Requests[0].OutputDimensionality; (d != nil) != tc.params.Dimensions.Valid() {
			t.Errorf("%s: outputDimensionality %v", tc.name, d)
		}
		var r oai.CreateEmbeddingResponse
		_ = json.Unmarshal(x.got, &r)
		switch tc.name {
		case "strings":
			float = r.Data
		case "base64":
			b64 = r.Data
		case "dimensions":
			if !unitLength(r.Data[0].Embedding) {
				t.Errorf("cut Gemini vector not renormalized: %v", r.Data[0].Embedding)
			}
		}
	})
	for i := range b64 {
		if !sameFloat32(b64[i].Embedding, float[i].Embedding) {
			t.Errorf("base64 data[%d] = %v, float %v", i, b64[i].Embedding, float[i].Embedding)
		}
	}
}

func TestEmbeddingsDemo(t *testing.T) {
	g, _ := startEmbedGateway(t)
	tok := tokenize.NewSet().For("cl100k") // demo-embed's tokenizer in the catalog
	n := int64(tok.Count([]byte("The quick brown fox")) + tok.Count([]byte("jumps")))
	cases := []embedCase{
		{"strings", oai.EmbeddingNewParams{Model: "demo-embed", Input: strs("The quick brown fox", "jumps")}, 2, 256, n},
		{"base64", oai.EmbeddingNewParams{Model: "demo-embed", Input: strs("The quick brown fox", "jumps"), EncodingFormat: oai.EmbeddingNewParamsEncodingFormatBase64}, 2, 256, n},
		{"dimensions", oai.EmbeddingNewParams{Model: "demo-embed", Input: strs("The quick brown fox", "jumps"), Dimensions: oai.Int(32)}, 2, 32, n},
		{"token arrays", oai.EmbeddingNewParams{Model: "demo-embed", Input: oai.EmbeddingNewParamsInputUnion{OfArrayOfTokenArrays: [][]int64{{1, 2, 3}, {4}}}}, 2, 256, 4},
	}
	var answers = map[string][]oai.Embedding{}
	runEmbedCases(t, g, cases, 0, true, func(tc embedCase, x exchange) {
		var r oai.CreateEmbeddingResponse
		_ = json.Unmarshal(x.got, &r)
		answers[tc.name] = r.Data
		for _, d := range r.Data {
			if !unitLength(d.Embedding) {
				t.Errorf("%s: not unit length", tc.name)
			}
		}
	})
	for i := range answers["strings"] {
		if !sameFloat32(answers["base64"][i].Embedding, answers["strings"][i].Embedding) {
			t.Errorf("base64 data[%d] differs from the float answer", i)
		}
	}
}

// embedRecords returns the usage records of the embeddings endpoint.
func embedRecords(recs []store.UsageRecord) []store.UsageRecord {
	var out []store.UsageRecord
	for _, r := range recs {
		if r.Endpoint == "embeddings" {
			out = append(out, r)
		}
	}
	return out
}
