package openai

import (
	"encoding/json"

	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/provider"
)

// Image models billed by token (the GPT image models: the catalog gives
// them image_output, image_input and text input prices) are charged from
// the usage the vendor reports in ImagesResponse.usage. Before the call
// the gateway reserves an upper bound of that usage, from the request:
//
//   - text: the prompt's bytes (a token is at least one byte), plus what
//     OpenAI adds to every prompt and to every input image (measured at 6
//     tokens on generations and under 50 per input image on edits);
//   - input images: imageInputTokens for every file of an edit (the mask
//     included);
//   - output: n images of outputTokens at the request's size and quality,
//     or at the largest the model makes where it leaves them to the vendor.

// imageInputTokens bounds what OpenAI counts for one input image of a GPT
// image model, at any size and at high input fidelity. The image is fit
// into 2048x2048 and its shorter side scaled down to 512 px, so it covers
// at most 4 tiles of 512 px: 65 + 4 × 129 = 581 tokens (OpenAI's vision
// guide, "GPT Image 1": 65 base tokens, 129 per tile); input_fidelity
// "high" adds 4,160 tokens for a square image and 6,240 for others (same
// guide; OpenAI's forum measures the high-fidelity surcharge at $0.062 an
// image, 6,200 tokens at $10 per million).
const imageInputTokens = 581 + 6240

// Text tokens OpenAI bills beyond the prompt's own: per request, and per
// input image on edits.
const (
	promptTextOverhead = 64
	inputImageText     = 64
)

// squareOutputTokens are the output image tokens OpenAI publishes for a
// 1024x1024 image of each quality ("Cost and latency" in its image
// generation guide): 272, 1,056 and 4,160. Other sizes scale with their
// area (1024x1536: 408, 1,584, 6,240, as published).
var squareOutputTokens = map[string]int64{"low": 272, "medium": 1056, "high": 4160}

// qualityTiers maps the DALL·E quality names a client may send to a GPT
// image model onto its tiers, as OpenAI does.
var qualityTiers = map[string]string{"standard": "medium", "hd": "high"}

// fallbackImageSize is the largest size of the GPT image models, for a
// request that leaves the size to a model whose catalog lists none.
const fallbackImageSize = "1536x1024"

// outputTokens bounds the output image tokens of one image: at the
// request's size and quality, the largest of the model's sizes and the
// high tier where it leaves them open ("" or "auto") or names a tier
// OpenAI publishes no figure for.
func outputTokens(mp billing.ModelPrice, p *imageParams) int64 {
	perSquare, ok := squareOutputTokens[p.Quality]
	if q, alias := qualityTiers[p.Quality]; alias {
		perSquare, ok = squareOutputTokens[q]
	}
	if !ok {
		perSquare = squareOutputTokens["high"]
	}
	w, h, ok := parseSize(p.Size)
	if !ok { // "" or "auto"
		w, h = largestSize(mp.ImageSizes)
	}
	const square = 1024 * 1024
	return (int64(w)*int64(h)*perSquare + square - 1) / square
}

// largestSize is the largest (by area) of sizes, else fallbackImageSize.
func largestSize(sizes []string) (int, int) {
	bw, bh, _ := parseSize(fallbackImageSize)
	if len(sizes) > 0 {
		bw, bh = 0, 0
	}
	for _, s := range sizes {
		if w, h, ok := parseSize(s); ok && int64(w)*int64(h) > int64(bw)*int64(bh) {
			bw, bh = w, h
		}
	}
	return bw, bh
}

// imageTokenBound is the most the request's usage can be (see above), for
// n images.
func imageTokenBound(mp billing.ModelPrice, p *imageParams, n int) billing.ImageTokens {
	return billing.ImageTokens{
		Text:   int64(len(p.Prompt)) + promptTextOverhead + inputImageText*int64(p.InputImages),
		Image:  imageInputTokens * int64(p.InputImages),
		Output: outputTokens(mp, p) * int64(n),
	}
}

// imagesUsage is ImagesResponse.usage, as OpenAI reports it for GPT image
// models; output_tokens_details only comes from models that also write
// text (their reasoning).
type imagesUsage struct {
	InputTokens        *int64 `json:"input_tokens"`
	OutputTokens       *int64 `json:"output_tokens"`
	TotalTokens        int64  `json:"total_tokens"`
	InputTokensDetails struct {
		TextTokens  int64 `json:"text_tokens"`
		ImageTokens int64 `json:"image_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails struct {
		TextTokens  int64 `json:"text_tokens"`
		ImageTokens int64 `json:"image_tokens"`
	} `json:"output_tokens_details"`
}

// reportedUsage reads the vendor's usage from the answer; ok is false when
// there is none (or it is not the documented object with input and output
// counts).
func reportedUsage(res *provider.ImageResponse) (imagesUsage, bool) {
	var u imagesUsage
	raw, ok := res.Extra["usage"]
	if !ok || json.Unmarshal(raw, &u) != nil || u.InputTokens == nil || u.OutputTokens == nil ||
		*u.InputTokens < 0 || *u.OutputTokens < 0 || u.InputTokensDetails.TextTokens < 0 || u.InputTokensDetails.ImageTokens < 0 ||
		u.OutputTokensDetails.TextTokens < 0 || u.OutputTokensDetails.ImageTokens < 0 {
		return imagesUsage{}, false
	}
	return u, true
}

// tokens splits the usage into what is priced apart. Input tokens the
// details do not name as text are image tokens (the dearer input); output
// tokens are image tokens except those the details name as text. Details
// that add up to more than the totals count as given, so an inconsistent
// report is never charged less than either reading. The wire format
// reports no cached tokens, so none are charged at a cached price.
func (u imagesUsage) tokens() billing.ImageTokens {
	in, out := *u.InputTokens, *u.OutputTokens
	text, textOut := u.InputTokensDetails.TextTokens, u.OutputTokensDetails.TextTokens
	return billing.ImageTokens{
		Text:       text,
		Image:      max(in-text, u.InputTokensDetails.ImageTokens),
		Output:     max(out-textOut, u.OutputTokensDetails.ImageTokens),
		TextOutput: textOut,
	}
}

// record is the usage for the usage record: prompt and completion tokens.
func (u imagesUsage) record() provider.Usage {
	total := u.TotalTokens
	if total == 0 {
		total = *u.InputTokens + *u.OutputTokens
	}
	return provider.Usage{PromptTokens: *u.InputTokens, CompletionTokens: *u.OutputTokens, TotalTokens: total}
}
