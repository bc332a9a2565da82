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
	gptImage := perImage(sq, [3]int64{11, 42, 167}, [3]int64{16, 63, 250})
	gptImageMini := perImage(sq, [3]int64{5, 11, 36}, [3]int64{6, 15, 52})
	demo := func(id string) catalog.Model {
		return catalog.Model{ID: id, OwnedBy: "demo", Created: demoCreated, Modality: catalog.Chat,
			ContextWindow: 128000, MaxOutput: 4096, OutputLimited: true, Tools: true, Free: true}
	}
	return append([]catalog.Model{
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
		// The GPT image models are billed by OpenAI per token, and so by
		// the gateway on the images endpoints (see perImage for the
		// sources). Their per-image tables are OpenAI's published per-image
		// equivalents, kept for what prices one image (the Responses API's
		// image_generation tool); "standard"/"hd" resolve to medium/high.
		{ID: "gpt-image-1", OwnedBy: "openai", Created: date("2025-04-23"), Modality: catalog.Image,
			ImageSizes: sq, Images: gptImage,
			Input: usd(5000), CachedInput: usd(1250), ImageInput: usd(10000), CachedImageInput: usd(2500), ImageOutput: usd(40000)},
		{ID: "gpt-image-1-mini", OwnedBy: "openai", Created: date("2025-10-06"), Modality: catalog.Image,
			ImageSizes: sq, Images: gptImageMini,
			Input: usd(2000), CachedInput: usd(200), ImageInput: usd(2500), CachedImageInput: usd(250), ImageOutput: usd(8000)},
		{ID: "imagen-3.0-generate-002", OwnedBy: "google", Created: date(snapshotDate), Modality: catalog.Image,
			ImageSizes: []string{"1024x1024"},
			Images:     []catalog.ImagePrice{{Size: "1024x1024", Price: usd(30)}}},
		// Audio: $0.006 a minute is 100 micro-dollars a second.
		{ID: "whisper-1", OwnedBy: "openai", Created: date("2023-03-01"), Modality: catalog.Audio, AudioPerSecond: 100},
		{ID: "gpt-4o-transcribe", OwnedBy: "openai", Created: date("2025-03-20"), Modality: catalog.Audio,
			ContextWindow: 16000, Tokenizer: "o200k", AudioPerSecond: 100},
		{ID: "gpt-4o-mini-transcribe", OwnedBy: "openai", Created: date("2025-03-20"), Modality: catalog.Audio,
			ContextWindow: 16000, Tokenizer: "o200k", AudioPerSecond: 50},
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
	}, videoModels()...)
}

// perImage is a GPT image model's per-image price table at its sizes (the
// square one first), for low, medium and high quality, in thousandths of
// a dollar: square[i] for the first size, other[i] for the rest.
//
// Sources of the GPT image models' prices: OpenAI's list prices (https://platform.openai.com/docs/pricing,
// "Image generation" and "Image tokens"; checked for the 2026-11-01
// snapshot), per million tokens: gpt-image-1 text input $5.00 (cached
// $1.25), image input $10.00 (cached $2.50), image output $40.00;
// gpt-image-1-mini text input $2.00 (cached $0.20), image input $2.50
// (cached $0.25), image output $8.00. Per image (1024x1024 / other sizes):
// gpt-image-1 low $0.011/$0.016, medium $0.042/$0.063, high $0.167/$0.25;
// gpt-image-1-mini low $0.005/$0.006, medium $0.011/$0.015, high
// $0.036/$0.052.
func perImage(sizes []string, square, other [3]int64) []catalog.ImagePrice {
	var out []catalog.ImagePrice
	for i, size := range sizes {
		p := other
		if i == 0 {
			p = square
		}
		out = append(out,
			catalog.ImagePrice{Size: size, Quality: "low", Price: usd(p[0])},
			catalog.ImagePrice{Size: size, Quality: "medium", Price: usd(p[1])},
			catalog.ImagePrice{Size: size, Quality: "high", Price: usd(p[2])})
	}
	return out
}

// Video sizes, the vendor's default first: Sora's (OpenAI's VideoSize
// enum; 720x1280 by default) and Veo's 720p and 1080p at 16:9 and 9:16 (its
// aspectRatio and resolution parameters; 16:9 720p by default).
var (
	sizeSora    = []string{"720x1280", "1280x720"}
	sizeSoraPro = []string{"720x1280", "1280x720", "1024x1792", "1792x1024"}
	sizeVeo720  = []string{"1280x720", "720x1280"}
	sizeVeo1080 = []string{"1280x720", "720x1280", "1920x1080", "1080x1920"}
)

// videoModels are the video models, billed per second of video made. Each
// lists the seconds its upstream makes, shortest (the default) first, and maps
// the other lengths a client may ask for (our spec's 5, 10, 15, 20 s) to
// the longest the upstream makes that is not longer, which is what the
// client pays for; lengths in neither are refused.
//
// Sources (list prices in USD, checked for the 2026-11-01 snapshot):
//   - Sora: https://platform.openai.com/docs/pricing (Video) and the
//     /v1/videos reference (seconds "4", "8", "12"; sizes 720x1280 and
//     1280x720, plus 1024x1792 and 1792x1024 for sora-2-pro).
//   - Veo: https://ai.google.dev/gemini-api/docs/pricing (Veo, video with
//     audio, per second; Veo 3.1 Fast cut on 2026-04-07 to $0.10 at 720p
//     and $0.12 at 1080p) and https://ai.google.dev/gemini-api/docs/video
//     (durationSeconds 4, 6, 8 for Veo 3 and 3.1, 5 to 8 for Veo 2;
//     resolution 720p or 1080p for Veo 3 and 3.1, 720p for Veo 2;
//     aspectRatio 16:9 or 9:16). The docs allow 1080p only with 8 s; the
//     catalog cannot say that, so the Veo adapter must.
func videoModels() []catalog.Model {
	sora := map[int]int{5: 4, 10: 8, 15: 12}
	veo3 := map[int]int{5: 4, 10: 8}
	veo := func(id, created string, sizes []string, perSecond money.Micros, durations []int, durationMap map[int]int, prices ...catalog.VideoPrice) catalog.Model {
		return catalog.Model{ID: id, OwnedBy: "google", Created: date(created), Modality: catalog.Video,
			VideoPerSecond: perSecond, VideoPrices: prices, ImageSizes: sizes, VideoDurations: durations, VideoDurationMap: durationMap}
	}
	fast1080p := []catalog.VideoPrice{{Size: "1920x1080", PerSecond: usd(120)}, {Size: "1080x1920", PerSecond: usd(120)}}
	demoVideo := func(id, size string) catalog.Model {
		return catalog.Model{ID: id, OwnedBy: "demo", Created: demoCreated, Modality: catalog.Video, Free: true,
			ImageSizes: []string{size}, VideoDurations: []int{5, 10, 15, 20}}
	}
	return []catalog.Model{
		// sora-2: $0.10 a second at both sizes.
		{ID: "sora-2", OwnedBy: "openai", Created: date("2025-10-06"), Modality: catalog.Video,
			VideoPerSecond: usd(100), ImageSizes: sizeSora, VideoDurations: []int{4, 8, 12}, VideoDurationMap: sora},
		// sora-2-pro: $0.30 a second at 720p, $0.50 at 1024x1792 and 1792x1024.
		{ID: "sora-2-pro", OwnedBy: "openai", Created: date("2025-10-06"), Modality: catalog.Video,
			VideoPerSecond: usd(300), ImageSizes: sizeSoraPro, VideoDurations: []int{4, 8, 12}, VideoDurationMap: sora,
			VideoPrices: []catalog.VideoPrice{{Size: "1024x1792", PerSecond: usd(500)}, {Size: "1792x1024", PerSecond: usd(500)}}},
		// Veo 3.1: $0.40 a second at 720p and 1080p.
		veo("veo-3.1-generate-preview", "2025-10-15", sizeVeo1080, usd(400), []int{4, 6, 8}, veo3),
		// Veo 3.1 Fast: $0.10 a second at 720p, $0.12 at 1080p.
		veo("veo-3.1-fast-generate-preview", "2025-10-15", sizeVeo1080, usd(100), []int{4, 6, 8}, veo3, fast1080p...),
		// Veo 3 and Veo 3 Fast: $0.40 and $0.15 a second.
		veo("veo-3.0-generate-001", "2025-09-09", sizeVeo1080, usd(400), []int{4, 6, 8}, veo3),
		veo("veo-3.0-fast-generate-001", "2025-09-09", sizeVeo1080, usd(150), []int{4, 6, 8}, veo3),
		// Veo 2: $0.35 a second, 720p only; 15 and 20 s are refused.
		veo("veo-2.0-generate-001", "2025-04-09", sizeVeo720, usd(350), []int{5, 6, 7, 8}, map[int]int{10: 8}),
		// The demo provider's videos: free, offline, and every spec length.
		demoVideo("demo-video-portrait", "720x1280"),
		demoVideo("demo-video-landscape", "1280x720"),
	}
}
