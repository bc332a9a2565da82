package openai

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelgate/modelgate/internal/billing"
	chg "github.com/modelgate/modelgate/internal/charge"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/lifecycle"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/store"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// gptImageTokens is gpt-image-1 as the catalog prices it: by token.
var gptImageTokens = func() billing.ModelPrice {
	mp := gptImage
	mp.ImageTokens = billing.ImageTokenPrice{Text: 5_000_000, CachedText: 1_250_000, Image: 10_000_000, CachedImage: 2_500_000, Output: 40_000_000}
	return mp
}()

// OpenAI's published output tokens per size and quality are the bound; a
// size or quality left to the vendor is bounded by the largest.
func TestOutputTokens(t *testing.T) {
	tests := []struct {
		mp            billing.ModelPrice
		size, quality string
		want          int64
	}{
		{gptImageTokens, "1024x1024", "low", 272},
		{gptImageTokens, "1024x1024", "medium", 1056},
		{gptImageTokens, "1024x1024", "high", 4160},
		{gptImageTokens, "1024x1536", "low", 408},
		{gptImageTokens, "1536x1024", "medium", 1584},
		{gptImageTokens, "1536x1024", "high", 6240},
		{gptImageTokens, "1024x1024", "standard", 1056}, // DALL·E names map onto the tiers
		{gptImageTokens, "1024x1024", "hd", 4160},
		{gptImageTokens, "auto", "auto", 6240}, // the largest size, the high tier
		{gptImageTokens, "", "", 6240},
		{gptImageTokens, "1024x1024", "ultra", 4160}, // a tier without a published figure: high
		{billing.ModelPrice{}, "auto", "low", 408},   // no catalog sizes: OpenAI's largest
		{billing.ModelPrice{ImageSizes: []string{"2048x2048", "1024x1024"}}, "", "low", 1088},
		{billing.ModelPrice{}, "1000x1000", "low", 260}, // 1000² × 272 / 1024², rounded up
	}
	for _, tt := range tests {
		p := &imageParams{Size: tt.size, Quality: tt.quality, N: 1}
		if got := outputTokens(tt.mp, p); got != tt.want {
			t.Errorf("outputTokens(%v, %q, %q) = %d, want %d", tt.mp.ImageSizes, tt.size, tt.quality, got, tt.want)
		}
	}
}

func TestImageTokenBound(t *testing.T) {
	prompt := string(make([]byte, 28_000))
	p := &imageParams{Prompt: prompt, Size: "1536x1024", Quality: "high", N: 4, InputImages: 17}
	got := imageTokenBound(gptImageTokens, p, p.N)
	want := billing.ImageTokens{Text: 28_000 + promptTextOverhead + 17*inputImageText, Image: 17 * imageInputTokens, Output: 4 * 6240}
	if got != want {
		t.Fatalf("bound = %+v, want %+v", got, want)
	}
	if imageInputTokens != 6821 {
		t.Errorf("imageInputTokens = %d: 65 + 4 × 129 + 6,240", imageInputTokens)
	}
	gen := imageTokenBound(gptImageTokens, &imageParams{Prompt: "a cat", Size: "1024x1024", Quality: "low", N: 2}, 2)
	if gen != (billing.ImageTokens{Text: 5 + promptTextOverhead, Output: 2 * 272}) {
		t.Errorf("generation bound = %+v", gen)
	}
}

func TestReportedUsage(t *testing.T) {
	tests := []struct {
		name  string
		usage string // "" for none
		ok    bool
		want  billing.ImageTokens
	}{
		{"the spec's example", `{"total_tokens":100,"input_tokens":50,"output_tokens":50,"input_tokens_details":{"text_tokens":10,"image_tokens":40}}`,
			true, billing.ImageTokens{Text: 10, Image: 40, Output: 50}},
		{"no details: all input at the image price", `{"input_tokens":50,"output_tokens":50}`, true, billing.ImageTokens{Image: 50, Output: 50}},
		{"text output named", `{"input_tokens":5,"output_tokens":300,"input_tokens_details":{"text_tokens":5,"image_tokens":0},` +
			`"output_tokens_details":{"text_tokens":28,"image_tokens":272}}`, true, billing.ImageTokens{Text: 5, Output: 272, TextOutput: 28}},
		{"details beyond the totals count", `{"input_tokens":10,"output_tokens":10,"input_tokens_details":{"text_tokens":4,"image_tokens":30},` +
			`"output_tokens_details":{"image_tokens":99}}`, true, billing.ImageTokens{Text: 4, Image: 30, Output: 99}},
		{"none", "", false, billing.ImageTokens{}},
		{"null", `null`, false, billing.ImageTokens{}},
		{"not an object", `"lots"`, false, billing.ImageTokens{}},
		{"no output count", `{"input_tokens":50}`, false, billing.ImageTokens{}},
		{"negative", `{"input_tokens":-5,"output_tokens":50}`, false, billing.ImageTokens{}},
		{"negative detail", `{"input_tokens":5,"output_tokens":50,"input_tokens_details":{"text_tokens":-1}}`, false, billing.ImageTokens{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &provider.ImageResponse{}
			if tt.usage != "" {
				res.Extra = map[string]json.RawMessage{"usage": json.RawMessage(tt.usage)}
			}
			u, ok := reportedUsage(res)
			if ok != tt.ok {
				t.Fatalf("ok = %v", ok)
			}
			if ok && u.tokens() != tt.want {
				t.Fatalf("tokens = %+v, want %+v", u.tokens(), tt.want)
			}
		})
	}
}

// balanceSource is a billing.Source with one funded account.
type balanceSource struct{}

func (balanceSource) AccountByID(_ context.Context, id string) (store.Account, error) {
	return store.Account{ID: id, Balance: 10 * money.Unit}, nil
}

func (balanceSource) KeyByID(_ context.Context, id string) (store.Key, error) {
	return store.Key{ID: id}, nil
}

// Settling a model billed by token: the vendor's usage when it reports
// one (also for an answer without images: the vendor billed it); else the
// reserved bound for the images returned; nothing when there is neither.
func TestSettleImageTokens(t *testing.T) {
	p := &imageParams{Prompt: "a red square", Size: "1024x1024", Quality: "low", N: 3}
	usage := map[string]json.RawMessage{"usage": json.RawMessage(`{"input_tokens":50,"output_tokens":544,"input_tokens_details":{"text_tokens":10,"image_tokens":40}}`)}
	img := provider.GeneratedImage{B64JSON: "QQ=="}
	tests := []struct {
		name string
		res  provider.ImageResponse
		want money.Micros
	}{
		{"usage", provider.ImageResponse{Images: []provider.GeneratedImage{img, img}, Extra: usage}, 10*5 + 40*10 + 544*40},
		{"usage without images", provider.ImageResponse{Extra: usage}, 10*5 + 40*10 + 544*40},
		{"no usage: the bound of the images returned", provider.ImageResponse{Images: []provider.GeneratedImage{img, img}},
			money.Micros((len(p.Prompt)+promptTextOverhead)*5 + 2*272*40)},
		{"no usage, no images", provider.ImageResponse{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := billing.NewReserver(balanceSource{}, billing.Options{})
			cb := &chg.Billing{Prices: func(string, string) (billing.ModelPrice, bool) { return gptImageTokens, true },
				Ratio: func(string) int64 { return money.PPM }, Reserver: r, Tokens: tokenize.NewSet()}
			h := &Handler{Core: &lifecycle.Core{Billing: cb}}
			d := route.Deployment{Model: "gpt-image-1", Upstream: "gpt-image-1"}
			b, err := h.startImages(context.Background(), gate.Principal{AccountID: "acct", KeyID: "key"}, d, p, "image generation")
			if err != nil {
				t.Fatal(err)
			}
			reserved := money.Micros((len(p.Prompt)+promptTextOverhead)*5 + 3*272*40)
			if b.c.Held() != reserved {
				t.Fatalf("reserved %s, want %s", b.c.Held(), reserved)
			}
			if got := b.settle(p, &tt.res); got != tt.want {
				t.Fatalf("charged %s, want %s", got, tt.want)
			}
			if left := r.Reserved()["acct"]; left != 0 {
				t.Fatalf("%s still reserved", left)
			}
		})
	}
}
