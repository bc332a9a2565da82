package catalog

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/modelgate/modelgate/internal/money"
)

func TestBuiltin(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() < 300 {
		t.Errorf("Len() = %d, want the full vendor catalog", c.Len())
	}
	tests := []struct {
		id                    string
		owner                 string
		modality              Modality
		input, output, cached money.Micros
	}{
		{"gpt-4o-mini", "openai", Chat, 150_000, 600_000, 75_000},
		{"claude-3-5-sonnet", "anthropic", Chat, 3_000_000, 15_000_000, 300_000},
		{"text-embedding-3-small", "openai", Embedding, 20_000, 0, 0},
		{"deepseek-chat", "deepseek", Chat, 270_000, 1_100_000, 70_000},
		{"gemini-2.5-pro", "google", Chat, 1_250_000, 10_000_000, 125_000}, // base tier of a tiered price
		{"o3", "openai", Chat, 2_000_000, 8_000_000, 500_000},              // the later of two dated prices
	}
	for _, tt := range tests {
		m, ok := c.Lookup(tt.id)
		if !ok {
			t.Errorf("Lookup(%q): not found", tt.id)
			continue
		}
		if m.OwnedBy != tt.owner || m.Modality != tt.modality || m.Input != tt.input || m.Output != tt.output || m.CachedInput != tt.cached {
			t.Errorf("%s = %+v", tt.id, m)
		}
		if !m.Priced() || m.Free || m.Created == 0 {
			t.Errorf("%s: priced %v, free %v, created %d", tt.id, m.Priced(), m.Free, m.Created)
		}
	}
	for _, id := range []string{"demo-chat", "demo-echo"} {
		m, ok := c.Lookup(id)
		if !ok || !m.Free || m.OwnedBy != "demo" || m.ContextWindow != 128000 || m.MaxOutput != 4096 || m.Modality != Chat {
			t.Errorf("%s = %+v, %v", id, m, ok)
		}
	}
	all := c.All()
	seen := map[string]bool{}
	for i, m := range all {
		if i > 0 && all[i-1].ID >= m.ID {
			t.Fatalf("All() not sorted at %d: %q, %q", i, all[i-1].ID, m.ID)
		}
		if !m.Priced() {
			t.Errorf("builtin model %q is not priced", m.ID)
		}
		if strings.ContainsAny(m.ID, ": ") || m.OwnedBy == "" || !m.Modality.Valid() {
			t.Errorf("bad builtin model %+v", m)
		}
		seen[m.OwnedBy] = true
	}
	for _, owner := range []string{"openai", "anthropic", "google", "deepseek", "mistral", "xai", "groq", "together", "fireworks", "moonshot", "cohere", "perplexity", "zhipu", "cerebras", "minimax", "voyage"} {
		if !seen[owner] {
			t.Errorf("no models owned by %q", owner)
		}
	}
	if _, ok := c.Lookup("ft:gpt-4o"); ok {
		t.Error("fine-tune variant ids must be skipped")
	}
}

func TestPriced(t *testing.T) {
	tests := []struct {
		m    Model
		want bool
	}{
		{Model{Modality: Chat}, false},
		{Model{Modality: Chat, Free: true}, true},
		{Model{Modality: Chat, Output: 1}, true},
		{Model{Modality: Embedding, Input: 1}, true},
		{Model{Modality: Image, Input: 1}, false},
		{Model{Modality: Image, Images: []ImagePrice{{Size: "1x1", Price: 1}}}, true},
		{Model{Modality: Image, Input: 1, ImageInput: 1, ImageOutput: 1}, true},                                 // priced per token
		{Model{Modality: Image, ImageInput: 1, ImageOutput: 1}, false},                                          // its prompt would be free
		{Model{Modality: Image, Input: 1, ImageOutput: 1}, false},                                               // its input images would be free
		{Model{Modality: Image, Input: 1, ImageInput: 1}, false},                                                // its images would be free
		{Model{Modality: Chat, Input: 1, ImageInput: 1, ImageOutput: 1}, true},                                  // a chat model, by its token price
		{Model{Modality: Image, Images: []ImagePrice{{Size: "1x1", Price: 1}}, Input: 1, ImageOutput: 1}, true}, // per image
		{Model{Modality: Audio, AudioPerSecond: 1}, true},
		{Model{Modality: Audio, VideoPerSecond: 1}, false},
		{Model{Modality: Video, VideoPerSecond: 1}, true},
		{Model{Modality: Video, ImageSizes: []string{"a", "b"}, VideoPerSecond: 1}, true},
		{Model{Modality: Video, ImageSizes: []string{"a", "b"}, VideoPrices: []VideoPrice{{Size: "a", PerSecond: 1}, {Size: "b", PerSecond: 2}}}, true},
		{Model{Modality: Video, ImageSizes: []string{"a", "b"}, VideoPrices: []VideoPrice{{Size: "a", PerSecond: 1}}}, false}, // b unpriced
		{Model{Modality: Video, ImageSizes: []string{"a"}, VideoPerSecond: 1, VideoPrices: []VideoPrice{{Size: "a"}}}, false}, // a priced at zero
		{Model{Modality: Video}, false},
		{Model{Modality: "telepathy", Input: 1}, false},
	}
	for _, tt := range tests {
		if got := tt.m.Priced(); got != tt.want {
			t.Errorf("%+v.Priced() = %v", tt.m, got)
		}
	}
}

// The GPT image models carry OpenAI's token prices (which bill them on
// the images endpoints) and their per-image tables (which price one image).
func TestBuiltinTokenPricedImages(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id                                            string
		input, cached, imageIn, cachedImage, imageOut money.Micros
		high1536                                      money.Micros
	}{
		{"gpt-image-1", 5_000_000, 1_250_000, 10_000_000, 2_500_000, 40_000_000, 250_000},
		{"gpt-image-1-mini", 2_000_000, 200_000, 2_500_000, 250_000, 8_000_000, 52_000},
	}
	for _, tt := range tests {
		m, ok := c.Lookup(tt.id)
		if !ok || !m.TokenPricedImages() || m.Input != tt.input || m.CachedInput != tt.cached || m.ImageInput != tt.imageIn ||
			m.CachedImageInput != tt.cachedImage || m.ImageOutput != tt.imageOut || m.Output != 0 {
			t.Errorf("%s = %+v, %v", tt.id, m, ok)
		}
		if p, ok := m.ImagePriceFor("1536x1024", "high"); p != tt.high1536 || !ok {
			t.Errorf("%s ImagePriceFor(1536x1024, high) = %d, %v", tt.id, p, ok)
		}
	}
	for _, id := range []string{"dall-e-2", "dall-e-3", "imagen-3.0-generate-002", "demo-image"} {
		if m, _ := c.Lookup(id); m.TokenPricedImages() {
			t.Errorf("%s is priced per image, not per token: %+v", id, m)
		}
	}
}

func TestImagePriceFor(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		model, size, quality string
		want                 money.Micros
		ok                   bool
	}{
		{"dall-e-3", "1024x1024", "", 40_000, true},
		{"dall-e-3", "1024x1024", "standard", 40_000, true},
		{"dall-e-3", "1792x1024", "hd", 120_000, true},
		{"dall-e-3", "1024x1792", "standard", 80_000, true},
		{"dall-e-3", "512x512", "", 0, false},
		{"dall-e-3", "1024x1024", "ultra", 0, false},
		{"dall-e-2", "256x256", "", 16_000, true},
		{"gpt-image-1", "1024x1024", "low", 11_000, true},
		{"gpt-image-1", "1024x1024", "", 42_000, true}, // default is medium
		{"gpt-image-1", "1536x1024", "standard", 63_000, true},
		{"gpt-image-1", "1024x1536", "hd", 250_000, true},
		{"imagen-3.0-generate-002", "1024x1024", "", 30_000, true},
	}
	for _, tt := range tests {
		m, _ := c.Lookup(tt.model)
		got, ok := m.ImagePriceFor(tt.size, tt.quality)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s ImagePriceFor(%q, %q) = %d, %v; want %d, %v", tt.model, tt.size, tt.quality, got, ok, tt.want, tt.ok)
		}
	}
	// Without a default quality, the cheapest entry for the size.
	m := Model{Images: []ImagePrice{{Size: "s", Quality: "x", Price: 9}, {Size: "s", Quality: "y", Price: 4}}}
	if got, ok := m.ImagePriceFor("s", ""); got != 4 || !ok {
		t.Errorf("cheapest = %d, %v", got, ok)
	}
}

func TestMediaModels(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id        string
		modality  Modality
		audio     money.Micros
		video     money.Micros
		sizes     []string
		durations []int
	}{
		{"whisper-1", Audio, 100, 0, nil, nil},
		{"gpt-4o-transcribe", Audio, 100, 0, nil, nil},
		{"gpt-4o-mini-transcribe", Audio, 50, 0, nil, nil},
		{"sora-2", Video, 0, 100_000, []string{"720x1280", "1280x720"}, []int{4, 8, 12}},
		{"sora-2-pro", Video, 0, 300_000, []string{"720x1280", "1280x720", "1024x1792", "1792x1024"}, []int{4, 8, 12}},
		{"veo-3.1-generate-preview", Video, 0, 400_000, []string{"1280x720", "720x1280", "1920x1080", "1080x1920"}, []int{4, 6, 8}},
		{"veo-2.0-generate-001", Video, 0, 350_000, []string{"1280x720", "720x1280"}, []int{5, 6, 7, 8}},
		{"demo-video-portrait", Video, 0, 0, []string{"720x1280"}, []int{5, 10, 15, 20}},
		{"demo-video-landscape", Video, 0, 0, []string{"1280x720"}, []int{5, 10, 15, 20}},
		{"dall-e-3", Image, 0, 0, []string{"1024x1024", "1792x1024", "1024x1792"}, nil},
	}
	for _, tt := range tests {
		m, ok := c.Lookup(tt.id)
		if !ok || m.Modality != tt.modality || m.AudioPerSecond != tt.audio || m.VideoPerSecond != tt.video ||
			!reflect.DeepEqual(m.ImageSizes, tt.sizes) || !reflect.DeepEqual(m.VideoDurations, tt.durations) {
			t.Errorf("%s = %+v, %v", tt.id, m, ok)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	m := Model{ID: "x", OwnedBy: "o", Created: 5, Modality: Image, ContextWindow: 10, MaxOutput: 2,
		Tools: true, Vision: true, Reasoning: true, Tokenizer: "o200k", Input: 1, Output: 1_500_000, CachedInput: 3,
		Images: []ImagePrice{{Size: "1x1", Quality: "hd", Price: 7}}, AudioPerSecond: 8, VideoPerSecond: 9,
		ImageInput: 10_000_000, CachedImageInput: 2_500_000, ImageOutput: 40_000_000,
		ImageSizes: []string{"1x1"}, VideoDurations: []int{5}, Free: true,
		VideoDurationMap: map[int]int{10: 5, 7: 5}, VideoPrices: []VideoPrice{{Size: "1x1", PerSecond: 500_000}}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"owned_by":"o"`, `"output":"1.5"`, `"input":"0.000001"`, `"cached_input":"0.000003"`, `"image_sizes":["1x1"]`, `"free":true`,
		`"video_duration_map":{"10":5,"7":5}`, `"video_prices":[{"size":"1x1","per_second":"0.5"}]`,
		`"image_input":"10"`, `"cached_image_input":"2.5"`, `"image_output":"40"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	var back Model
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, m) {
		t.Errorf("round trip = %+v, %v", back, err)
	}
	for _, bad := range []string{
		`[{"id":"x","modality":"chat","input":0.5}]`,         // a float, not a decimal string
		`[{"id":"x","modality":"chat","input":"0.0000001"}]`, // more than 6 decimals
		`[{"id":"x","modality":"chat","inptu":"1"}]`,         // unknown key
		`[{"id":"x","modality":"smell"}]`,
		`[{"modality":"chat"}]`,
		`[{"id":"x","modality":"video","video_duration_map":{"five":4}}]`,                // a key that is no number
		`[{"id":"x","modality":"video","video_prices":[{"size":"1x1","per_second":1}]}]`, // a float price
		`[{"id":"x","modality":"image","image_output":40}]`,                              // a float price
	} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%s): want an error", bad)
		}
	}
}

func TestFormatPrice(t *testing.T) {
	for in, want := range map[money.Micros]string{0: "0", 1: "0.000001", 150_000: "0.15", 2_000_000: "2", 2_500_000: "2.5", -500_000: "-0.5"} {
		if got := FormatPrice(in); got != want {
			t.Errorf("FormatPrice(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestNewCopiesAndDedups(t *testing.T) {
	sizes := []string{"a"}
	durationMap := map[int]int{5: 4}
	prices := []VideoPrice{{Size: "a", PerSecond: 1}}
	c := New([]Model{{ID: "b", Modality: Chat}, {ID: "a", ImageSizes: sizes, VideoDurationMap: durationMap, VideoPrices: prices}, {ID: "b", Modality: Embedding}})
	sizes[0], durationMap[5], prices[0].PerSecond = "changed", 1, 9
	if c.Len() != 2 {
		t.Fatalf("Len = %d", c.Len())
	}
	if m, _ := c.Lookup("a"); m.ImageSizes[0] != "a" || m.VideoDurationMap[5] != 4 || m.VideoPrices[0].PerSecond != 1 {
		t.Error("New must copy the caller's slices and maps")
	}
	if m, _ := c.Lookup("b"); m.Modality != Embedding {
		t.Error("the later duplicate must win")
	}
	all := c.All()
	all[0].ID = "zzz"
	if c.All()[0].ID != "a" {
		t.Error("All must return the caller's own slice")
	}
	var wg sync.WaitGroup // concurrent reads (run with -race)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = c.Lookup("a")
			_ = c.All()
		}()
	}
	wg.Wait()
}
