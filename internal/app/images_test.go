package app_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"io"
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
)

// imagesSecret is the configured signing secret, so tests can sign URLs
// the way the gateway does (see imagestore.LoadKey).
const imagesSecret = "test-secret-for-image-urls-0123456789"

// imageGateway is a gateway whose fake OpenAI upstream also serves the
// OpenAI image models, plus a fake Gemini upstream for Imagen.
type imageGateway struct {
	*gateway
	gemini *providertest.Gemini
}

func startImageGateway(t *testing.T, mutate ...func(*config.Config)) *imageGateway {
	t.Helper()
	gem := providertest.NewGemini(t)
	g := startGateway(t, append([]func(*config.Config){func(c *config.Config) {
		c.Images.SigningKey = imagesSecret
		c.Providers[0].Models = append(c.Providers[0].Models,
			config.ModelRef{ID: "dall-e-2", Upstream: "dall-e-2"}, config.ModelRef{ID: "dall-e-3", Upstream: "dall-e-3"},
			config.ModelRef{ID: "gpt-image-1", Upstream: "gpt-image-1"}, config.ModelRef{ID: "broken-image", Upstream: "err-500"},
			config.ModelRef{ID: "unpriced-image", Upstream: "dall-e-2"})
		c.Providers = append(c.Providers, config.Provider{Name: "fake-gemini", Type: "gemini", BaseURL: gem.URL, APIKey: "g-key",
			Weight: 1, Timeout: config.Duration(3 * time.Second), IdleTimeout: config.Duration(time.Second),
			Models: []config.ModelRef{{ID: "imagen-3.0-generate-002", Upstream: "imagen-3.0-generate-002"},
				{ID: "imagen-filtered", Upstream: "imagen-filtered"}, {ID: "gemini-test", Upstream: "gemini-2.5-flash"}}})
		image := "image"
		price := config.Amount(20_000) // 0.02 per image
		c.Models = append(c.Models,
			config.ModelConfig{ID: "broken-image", Modality: &image, Images: []config.ImagePriceConfig{{Size: "1024x1024", Price: price}}},
			config.ModelConfig{ID: "imagen-filtered", Modality: &image, Images: []config.ImagePriceConfig{{Size: "1024x1024", Price: price}}},
			config.ModelConfig{ID: "unpriced-image", Modality: &image})
	}}, mutate...)...)
	return &imageGateway{gateway: g, gemini: gem}
}

// fetch GETs a URL the gateway answered with.
func fetch(t *testing.T, u string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// pngSize decodes a PNG's dimensions.
func pngSize(t *testing.T, b []byte) (int, int) {
	t.Helper()
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	return cfg.Width, cfg.Height
}

// The official SDK gets images as URLs and as base64 from every kind of
// vendor; base64-only vendors' images are stored and served by the gateway.
func TestImageGenerate(t *testing.T) {
	g := startImageGateway(t)
	c := g.client(g.keys["default"])
	tests := []struct {
		name     string
		params   oai.ImageGenerateParams
		wantURL  string // "gateway", "vendor", or "" for base64
		wantW    int    // of the image served or decoded
		wantN    int
		cost     string
		upstream func(t *testing.T, body []byte)
	}{
		{name: "dall-e-2 url passed through", params: oai.ImageGenerateParams{Model: "dall-e-2", Prompt: "a red square",
			Size: "512x512", ResponseFormat: "url"}, wantURL: "vendor", wantN: 1, cost: "0.018000"},
		{name: "dall-e-2 b64_json", params: oai.ImageGenerateParams{Model: "dall-e-2", Prompt: "a red square",
			N: oai.Int(3), ResponseFormat: "b64_json"}, wantW: 2, wantN: 3, cost: "0.060000"},
		{name: "dall-e-3 hd default size", params: oai.ImageGenerateParams{Model: "dall-e-3", Prompt: "a red square",
			Quality: "hd"}, wantURL: "vendor", wantN: 1, cost: "0.080000"},
		{name: "gpt-image-1 url stored by the gateway", params: oai.ImageGenerateParams{Model: "gpt-image-1", Prompt: "a red square",
			ResponseFormat: "url"}, wantURL: "gateway", wantW: 2, wantN: 1, cost: "0.042690", // the reported usage (see TestImageBilling)
			upstream: func(t *testing.T, body []byte) {
				if bytes.Contains(body, []byte("response_format")) {
					t.Errorf("response_format reached a GPT image model: %s", body)
				}
			}},
		{name: "gpt-image-1 priced as reported", params: oai.ImageGenerateParams{Model: "gpt-image-1", Prompt: "a red square",
			N: oai.Int(2), Size: "auto", Quality: "auto"}, wantW: 2, wantN: 2, cost: "0.042690"}, // the recorded answer's usage, whatever n
		{name: "demo url", params: oai.ImageGenerateParams{Model: "demo-image", Prompt: "a red square", Size: "256x256",
			ResponseFormat: "url"}, wantURL: "gateway", wantW: 256, wantN: 1},
		{name: "demo b64_json", params: oai.ImageGenerateParams{Model: "demo-image", Prompt: "a red square", Size: "512x512",
			N: oai.Int(2), ResponseFormat: "b64_json"}, wantW: 512, wantN: 2},
		{name: "imagen url", params: oai.ImageGenerateParams{Model: "imagen-3.0-generate-002", Prompt: "a red square",
			ResponseFormat: "url", N: oai.Int(2)}, wantURL: "gateway", wantW: 2, wantN: 2, cost: "0.060000"},
		{name: "imagen b64_json", params: oai.ImageGenerateParams{Model: "imagen-3.0-generate-002", Prompt: "a red square",
			Size: "1024x1024", ResponseFormat: "b64_json"}, wantW: 2, wantN: 1, cost: "0.030000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var resp *http.Response
			before := len(g.upstream.Received())
			res, err := c.Images.Generate(context.Background(), tt.params, option.WithResponseInto(&resp))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Data) != tt.wantN {
				t.Fatalf("%d images, want %d", len(res.Data), tt.wantN)
			}
			if got := resp.Header.Get("X-Modelgate-Cost"); tt.cost != "" && got != tt.cost {
				t.Errorf("cost %q, want %q", got, tt.cost)
			}
			for _, img := range res.Data {
				var data []byte
				switch tt.wantURL {
				case "vendor":
					if !strings.HasPrefix(img.URL, "https://oaidalleapiprodscus.blob.core.windows.net/") || img.B64JSON != "" {
						t.Fatalf("want the vendor's URL only, got %+v", img)
					}
					continue
				case "gateway":
					if !strings.HasPrefix(img.URL, g.URL+"/v1/images/files/") || img.B64JSON != "" {
						t.Fatalf("want a gateway URL only, got %+v", img)
					}
					r, b := fetch(t, img.URL)
					if r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "image/png" {
						t.Fatalf("fetch: %d %s %s", r.StatusCode, r.Header.Get("Content-Type"), b)
					}
					data = b
				default:
					if img.URL != "" {
						t.Fatalf("want base64 only, got a URL %s", img.URL)
					}
					b, err := base64.StdEncoding.DecodeString(img.B64JSON)
					if err != nil {
						t.Fatal(err)
					}
					data = b
				}
				if w, _ := pngSize(t, data); w != tt.wantW {
					t.Errorf("image width %d, want %d", w, tt.wantW)
				}
			}
			if tt.upstream != nil {
				rec := g.upstream.Received()
				if len(rec) != before+1 {
					t.Fatalf("upstream got %d requests, want 1", len(rec)-before)
				}
				tt.upstream(t, rec[len(rec)-1].Body)
			}
		})
	}
}

// The gateway's image answers match the official spec as sent.
func TestImageAnswersMatchSpec(t *testing.T) {
	g := startImageGateway(t)
	for _, body := range []string{
		`{"model":"dall-e-3","prompt":"a red square"}`,
		`{"model":"gpt-image-1","prompt":"a red square","response_format":"url"}`,
		`{"model":"gpt-image-1","prompt":"a red square"}`,
		`{"model":"demo-image","prompt":"a red square","size":"256x256","response_format":"url"}`,
		`{"model":"imagen-3.0-generate-002","prompt":"a red square","response_format":"b64_json"}`,
	} {
		resp, b := g.post("/v1/images/generations", "application/json", g.keys["default"], strings.NewReader(body))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, b)
		}
		oapitest.CheckResponse(t, http.MethodPost, "/v1/images/generations", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
}

// The demo draws the same picture for the same prompt, another for
// another prompt or another index.
func TestImageDemoDeterministic(t *testing.T) {
	g := startImageGateway(t)
	c := g.client(g.keys["default"])
	gen := func(prompt string) []string {
		res, err := c.Images.Generate(context.Background(), oai.ImageGenerateParams{Model: "demo-image", Prompt: prompt,
			Size: "256x256", N: oai.Int(2), ResponseFormat: "b64_json"})
		if err != nil {
			t.Fatal(err)
		}
		return []string{res.Data[0].B64JSON, res.Data[1].B64JSON}
	}
	a, b, other := gen("a lighthouse"), gen("a lighthouse"), gen("a meadow")
	if a[0] != b[0] || a[1] != b[1] {
		t.Error("the same prompt must draw the same images")
	}
	if a[0] == a[1] || a[0] == other[0] {
		t.Error("images of one request, and of other prompts, must differ")
	}
}

// What Imagen receives is its predict call, translated.
func TestImageImagenRequest(t *testing.T) {
	g := startImageGateway(t)
	resp, b := g.post("/v1/images/generations", "application/json", g.keys["default"],
		strings.NewReader(`{"model":"imagen-3.0-generate-002","prompt":"a red square","n":3,"size":"1024x1024","quality":"hd","style":"vivid","user":"u1"}`))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	last := g.gemini.Last()
	var sent map[string]any
	if err := json.Unmarshal(last.Body, &sent); err != nil {
		t.Fatal(err)
	}
	want := `{"instances":[{"prompt":"a red square"}],"parameters":{"aspectRatio":"1:1","includeRaiReason":true,"sampleCount":3}}`
	if got, _ := json.Marshal(sent); string(got) != want || last.Model != "imagen-3.0-generate-002" || last.Header.Get("X-Goog-Api-Key") != "g-key" {
		t.Fatalf("imagen got %s (model %s)\nwant %s", got, last.Model, want)
	}
	var out struct {
		Data []struct {
			B64JSON string `json:"b64_json"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &out); err != nil || len(out.Data) != 3 || out.Data[0].B64JSON == "" {
		t.Fatalf("answer %s", b)
	}
	if got := resp.Header.Get("X-Modelgate-Cost"); got != money.Micros(90_000).String() {
		t.Fatalf("cost %s", got)
	}
}
