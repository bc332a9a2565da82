package web

import "github.com/modelgate/modelgate/internal/money"

// Sample view models of the Models page.

func price(units float64) Price { return Price{Amount: usd(units), Set: true} }

func sampleModelRows() []ModelRow {
	return []ModelRow{
		{ID: "claude-sonnet-4", OwnedBy: "anthropic", Modality: "chat", ContextWindow: 200_000, MaxOutput: 64_000,
			Capabilities: []string{"tools", "vision", "reasoning"}, Input: price(3.6), CachedInput: price(0.36), Output: price(18)},
		{ID: "gpt-4o-mini", OwnedBy: "openai", Modality: "chat", ContextWindow: 128_000, MaxOutput: 16_384,
			Capabilities: []string{"tools", "vision", "web_search"}, Input: price(0.18), CachedInput: price(0.09), Output: price(0.72)},
		{ID: "gpt-4o-audio-preview", OwnedBy: "openai", Modality: "chat", ContextWindow: 128_000, MaxOutput: 16_384,
			Capabilities: []string{"tools", "audio_in", "audio_out"}, Input: price(3), Output: price(12)},
		{ID: "text-embedding-3-small", OwnedBy: "openai", Modality: "embedding", ContextWindow: 8191, Input: price(0.024)},
		{ID: "gpt-image-1", OwnedBy: "openai", Modality: "image", Input: price(6), CachedInput: price(1.5), Output: price(48), Image: price(0.0504)},
		{ID: "dall-e-3", OwnedBy: "openai", Modality: "image", Image: price(0.048)},
		{ID: "whisper-1", OwnedBy: "openai", Modality: "audio", PerSecond: price(0.00012)},
		{ID: "sora-2", OwnedBy: "openai", Modality: "video", PerSecond: price(0.12)},
		{ID: "gpt-3.5-turbo-instruct", OwnedBy: "openai", Modality: "completion", ContextWindow: 4096, MaxOutput: 4096, Input: price(1.8), Output: price(2.4)},
		{ID: "demo-" + xssName, OwnedBy: "demo", Modality: "chat", Free: true, Input: Price{Set: true}, Output: Price{Set: true}},
		{ID: "meta-llama/llama-3.3-70b-instruct-turbo-with-a-very-long-name", OwnedBy: "together", Modality: "chat", ContextWindow: 1_048_576, MaxOutput: 8192,
			Capabilities: []string{"tools"}, Input: Price{Amount: money.Micros(880_000), Set: true}, Output: price(0.88)},
	}
}

func sampleModels(kind string) Models {
	m := Models{Layout: sampleLayout("Models and prices", "models"), Groups: []string{"default", "premium"},
		Vendors: []string{"anthropic", "demo", "openai", "together"}, Modalities: []string{"audio", "chat", "completion", "embedding", "image", "video"},
		Filter: ModelFilter{Group: "premium", Sort: "id"}}
	switch kind {
	case "public":
		m.Layout = Layout{Title: "Models and prices", Active: "models", Currency: "USD", Path: "/console/models"}
		m.Public, m.Groups, m.Filter.Group = true, []string{"default"}, "default"
		m.Rows = sampleModelRows()[:4]
		m.Total = 4
	case "empty":
		m.Filter = ModelFilter{Group: "premium", Vendor: "anthropic", Modality: "video", Q: "zzz", Sort: "output"}
		m.Total = 11
	case "none":
		m.Groups, m.Vendors, m.Modalities, m.Filter = nil, nil, nil, ModelFilter{Sort: "id"}
	default:
		m.Rows = sampleModelRows()
		m.Total = len(m.Rows)
	}
	return m
}
