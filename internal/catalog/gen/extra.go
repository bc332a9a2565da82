package main

import (
	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/money"
)

// usd turns a price in thousandths of a dollar into micro-units, so the
// list prices below read like the vendors' pages ($0.040 is usd(40)).
func usd(milli int64) money.Micros { return money.Micros(milli) * 1000 }

// demoCreated is the creation time the demo models have always shown (2026-01-01).
const demoCreated = 1767225600

// extraModels are the gateway's own entries, not in genai-prices: models
// billed per image, per second of audio or video, and the offline demo
// provider's models. An entry replaces a generated model with the same id.
// Prices are the vendors' list prices in USD.
func extraModels() []catalog.Model {
	sq := []string{"1024x1024", "1536x1024", "1024x1536"}
	gptImage := []catalog.ImagePrice{}
	for i, size := range sq {
		low, medium, high := usd(16), usd(63), usd(250)
		if i == 0 {
			low, medium, high = usd(11), usd(42), usd(167)
		}
		gptImage = append(gptImage,
			catalog.ImagePrice{Size: size, Quality: "low", Price: low},
			catalog.ImagePrice{Size: size, Quality: "medium", Price: medium},
			catalog.ImagePrice{Size: size, Quality: "high", Price: high})
	}
	videoDurations := []int{5, 10, 15, 20}
	demo := func(id string) catalog.Model {
		return catalog.Model{ID: id, OwnedBy: "demo", Created: demoCreated, Modality: catalog.Chat,
			ContextWindow: 128000, MaxOutput: 4096, OutputLimited: true, Tools: true, Free: true}
	}
	return []catalog.Model{
		{ID: "dall-e-3", OwnedBy: "openai", Created: date("2023-11-06"), Modality: catalog.Image,
			ImageSizes: []string{"1024x1024", "1792x1024", "1024x1792"},
			Images: []catalog.ImagePrice{
				{Size: "1024x1024", Quality: "standard", Price: usd(40)},
				{Size: "1792x1024", Quality: "standard", Price: usd(80)},
				{Size: "1024x1792", Quality: "standard", Price: usd(80)},
				{Size: "1024x1024", Quality: "hd", Price: usd(80)},
				{Size: "1792x1024", Quality: "hd", Price: usd(120)},
				{Size: "1024x1792", Quality: "hd", Price: usd(120)},
			}},
		// dall-e-2 also serves /v1/images/edits and /variations.
		{ID: "dall-e-2", OwnedBy: "openai", Created: date("2022-11-03"), Modality: catalog.Image,
			ImageSizes: []string{"256x256", "512x512", "1024x1024"},
			Images: []catalog.ImagePrice{
				{Size: "256x256", Quality: "standard", Price: usd(16)},
				{Size: "512x512", Quality: "standard", Price: usd(18)},
				{Size: "1024x1024", Quality: "standard", Price: usd(20)},
			}},
		// gpt-image-1 is billed by OpenAI per token; these are its published
		// per-image equivalents. "standard"/"hd" resolve to medium/high.
		{ID: "gpt-image-1", OwnedBy: "openai", Created: date("2025-04-23"), Modality: catalog.Image,
			ImageSizes: sq, Images: gptImage},
		{ID: "imagen-3.0-generate-002", OwnedBy: "google", Created: date(snapshotDate), Modality: catalog.Image,
			ImageSizes: []string{"1024x1024"},
			Images:     []catalog.ImagePrice{{Size: "1024x1024", Price: usd(30)}}},
		// Audio: $0.006 a minute is 100 micro-dollars a second.
		{ID: "whisper-1", OwnedBy: "openai", Created: date("2023-03-01"), Modality: catalog.Audio, AudioPerSecond: 100},
		{ID: "gpt-4o-transcribe", OwnedBy: "openai", Created: date("2025-03-20"), Modality: catalog.Audio,
			ContextWindow: 16000, Tokenizer: "o200k", AudioPerSecond: 100},
		{ID: "gpt-4o-mini-transcribe", OwnedBy: "openai", Created: date("2025-03-20"), Modality: catalog.Audio,
			ContextWindow: 16000, Tokenizer: "o200k", AudioPerSecond: 50},
		// Video: $0.10 a second; one fixed size per orientation.
		{ID: "sora-2-portrait", OwnedBy: "openai", Created: date("2025-10-06"), Modality: catalog.Video,
			VideoPerSecond: usd(100), ImageSizes: []string{"720x1280"}, VideoDurations: videoDurations},
		{ID: "sora-2-landscape", OwnedBy: "openai", Created: date("2025-10-06"), Modality: catalog.Video,
			VideoPerSecond: usd(100), ImageSizes: []string{"1280x720"}, VideoDurations: videoDurations},
		demo("demo-chat"),
		demo("demo-echo"),
		// The demo models of the other endpoints, free and offline too.
		{ID: "demo-embed", OwnedBy: "demo", Created: demoCreated, Modality: catalog.Embedding,
			ContextWindow: 8192, Tokenizer: "cl100k", Free: true},
		{ID: "demo-instruct", OwnedBy: "demo", Created: demoCreated, Modality: catalog.Completion,
			ContextWindow: 16384, MaxOutput: 4096, OutputLimited: true, Tokenizer: "cl100k", Free: true},
		{ID: "demo-image", OwnedBy: "demo", Created: demoCreated, Modality: catalog.Image, Free: true,
			ImageSizes: []string{"256x256", "512x512", "1024x1024"}},
		{ID: "demo-transcribe", OwnedBy: "demo", Created: demoCreated, Modality: catalog.Audio, Free: true},
	}
}
