package openai

import (
	"encoding/json"
	"testing"

	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
)

// Prices as in the built-in catalog.
var (
	dalle2 = billing.ModelPrice{Modality: "image", ImageSizes: []string{"256x256", "512x512", "1024x1024"}, Images: []billing.ImagePrice{
		{Size: "256x256", Quality: "standard", Price: 16_000}, {Size: "512x512", Quality: "standard", Price: 18_000},
		{Size: "1024x1024", Quality: "standard", Price: 20_000}}}
	dalle3 = billing.ModelPrice{Modality: "image", ImageSizes: []string{"1024x1024", "1792x1024", "1024x1792"}, Images: []billing.ImagePrice{
		{Size: "1024x1024", Quality: "standard", Price: 40_000}, {Size: "1792x1024", Quality: "standard", Price: 80_000},
		{Size: "1024x1792", Quality: "standard", Price: 80_000}, {Size: "1024x1024", Quality: "hd", Price: 80_000},
		{Size: "1792x1024", Quality: "hd", Price: 120_000}, {Size: "1024x1792", Quality: "hd", Price: 120_000}}}
	gptImage = billing.ModelPrice{Modality: "image", ImageSizes: []string{"1024x1024", "1536x1024", "1024x1536"}, Images: []billing.ImagePrice{
		{Size: "1024x1024", Quality: "low", Price: 11_000}, {Size: "1024x1024", Quality: "medium", Price: 42_000},
		{Size: "1024x1024", Quality: "high", Price: 167_000}, {Size: "1536x1024", Quality: "low", Price: 16_000},
		{Size: "1536x1024", Quality: "medium", Price: 63_000}, {Size: "1536x1024", Quality: "high", Price: 250_000}}}
	imagen = billing.ModelPrice{Modality: "image", ImageSizes: []string{"1024x1024"}, Images: []billing.ImagePrice{{Size: "1024x1024", Price: 30_000}}}
)

func TestImageUnits(t *testing.T) {
	tests := []struct {
		name           string
		mp             billing.ModelPrice
		size, quality  string
		reported       provider.ImageResponse
		reserve, final money.Micros
		priced         bool
	}{
		{"dall-e-2 sized", dalle2, "512x512", "", provider.ImageResponse{}, 18_000, 18_000, true},
		{"dall-e-2 default size", dalle2, "", "", provider.ImageResponse{}, 20_000, 20_000, true},
		{"dall-e-3 default: standard 1024", dalle3, "", "", provider.ImageResponse{}, 80_000, 40_000, true},
		{"dall-e-3 hd, size left open", dalle3, "", "hd", provider.ImageResponse{}, 120_000, 80_000, true},
		{"dall-e-3 hd wide", dalle3, "1792x1024", "hd", provider.ImageResponse{}, 120_000, 120_000, true},
		{"gpt-image auto, reported", gptImage, "auto", "auto", provider.ImageResponse{Size: "1536x1024", Quality: "low"}, 250_000, 16_000, true},
		{"gpt-image quality set, size reported", gptImage, "", "medium", provider.ImageResponse{Size: "1536x1024"}, 63_000, 63_000, true},
		{"gpt-image nothing reported", gptImage, "1024x1024", "", provider.ImageResponse{}, 167_000, 167_000, true},
		{"report ignored where the client chose", gptImage, "1024x1024", "low", provider.ImageResponse{Size: "1536x1024", Quality: "high"}, 11_000, 11_000, true},
		{"imagen any quality", imagen, "", "hd", provider.ImageResponse{}, 30_000, 30_000, true},
		{"no price for the size", imagen, "512x512", "", provider.ImageResponse{}, 0, 0, false},
		{"no image prices", billing.ModelPrice{Modality: "image"}, "", "", provider.ImageResponse{}, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &imageParams{Size: tt.size, Quality: tt.quality, N: 1}
			unit, ok := reserveUnit(tt.mp, p)
			if ok != tt.priced || unit != tt.reserve {
				t.Fatalf("reserve %s %v, want %s %v", unit, ok, tt.reserve, tt.priced)
			}
			if !ok {
				return
			}
			if got := settleUnit(tt.mp, p, &tt.reported, unit); got != tt.final {
				t.Fatalf("settle %s, want %s", got, tt.final)
			}
		})
	}
}

func TestImageModelChecks(t *testing.T) {
	tests := []struct {
		name, model string
		mp          billing.ModelPrice
		p           imageParams
		param       string
	}{
		{"fine", "dall-e-2", dalle2, imageParams{N: 3, Size: "256x256", Quality: "standard"}, ""},
		{"dall-e-3 n", "dall-e-3", dalle3, imageParams{N: 2}, "n"},
		{"dall-e-3 snapshot n", "dall-e-3-2024", dalle3, imageParams{N: 2}, "n"},
		{"size", "dall-e-2", dalle2, imageParams{N: 1, Size: "1024x1023"}, "size"},
		{"auto for dall-e", "dall-e-3", dalle3, imageParams{N: 1, Size: "auto"}, "size"},
		{"auto elsewhere", "gpt-image-1", gptImage, imageParams{N: 1, Size: "auto", Quality: "auto"}, ""},
		{"quality", "gpt-image-1", gptImage, imageParams{N: 1, Quality: "hd"}, "quality"},
		{"any quality when prices leave it open", "imagen", imagen, imageParams{N: 1, Quality: "hd"}, ""},
		{"no catalog sizes: any size", "custom", billing.ModelPrice{}, imageParams{N: 1, Size: "640x480"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.p.checkForModel(tt.model, tt.model, tt.mp)
			switch {
			case tt.param == "" && e != nil:
				t.Fatalf("refused: %v", e)
			case tt.param != "" && (e == nil || e.Param != tt.param || e.Status != 400):
				t.Fatalf("got %v, want a 400 on %s", e, tt.param)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	for s, ok := range map[string]bool{"1024x1024": true, "1x1": true, "1024x": false, "x1024": false, "0x5": false,
		"-5x5": false, "+5x5": false, "1024X1024": false, "1024x1024x1": false, "999999x1": false, "": false} {
		if _, _, got := parseSize(s); got != ok {
			t.Errorf("parseSize(%q) = %v", s, got)
		}
	}
}

func TestImagesJSON(t *testing.T) {
	res := &provider.ImageResponse{Created: 7, Extra: map[string]json.RawMessage{"usage": json.RawMessage(`{"total_tokens":3}`),
		"background": json.RawMessage(`"opaque"`), "data": json.RawMessage(`"ignored"`)}}
	b, err := imagesJSON(res, []imageItem{{URL: "https://x/a.png", RevisedPrompt: "r"}, {B64JSON: "QQ=="}})
	want := `{"created":7,"data":[{"url":"https://x/a.png","revised_prompt":"r"},{"b64_json":"QQ=="}],"background":"opaque","usage":{"total_tokens":3}}`
	if err != nil || string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
}
