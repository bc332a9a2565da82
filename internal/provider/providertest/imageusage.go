package providertest

import (
	"encoding/json"
	"net/http"
)

// The GPT image scenarios whose usage follows from the request, as at
// OpenAI, which bills these models by token:
//
//	gpt-image-counted    the usage counted by imageUsage, with the size and quality made
//	gpt-image-unmetered  the same answer without a usage member (a vendor that reports none)

// imageOutputTokens are the output image tokens OpenAI publishes per
// image for each size and quality of its GPT image models.
var imageOutputTokens = map[string]map[string]int64{
	"1024x1024": {"low": 272, "medium": 1056, "high": 4160},
	"1024x1536": {"low": 408, "medium": 1584, "high": 6240},
	"1536x1024": {"low": 400, "medium": 1568, "high": 6208},
}

// imagesUsage is ImagesResponse.usage.
type imagesUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	OutputTokens       int64 `json:"output_tokens"`
	TotalTokens        int64 `json:"total_tokens"`
	InputTokensDetails struct {
		TextTokens  int64 `json:"text_tokens"`
		ImageTokens int64 `json:"image_tokens"`
	} `json:"input_tokens_details"`
}

// imageUsage is what OpenAI reports for req, by its published rules and
// what it is seen to bill: text tokens about a quarter of the prompt's
// bytes, plus 6 per request and 32 per input image; 194 tokens for each
// input image (65 + one 512 px tile of 129), plus 4,160 each at
// input_fidelity high; n images of the size and quality's output tokens.
// Left to the vendor ("" or auto), the size is 1024x1024 and the quality
// medium, which the answer reports.
func imageUsage(req imageRequest, size, quality string, n int) imagesUsage {
	var u imagesUsage
	u.InputTokensDetails.TextTokens = int64(len(req.Prompt)+3)/4 + 6 + 32*int64(req.inputs)
	perImage := int64(194)
	if req.InputFidelity == "high" {
		perImage += 4160
	}
	u.InputTokensDetails.ImageTokens = perImage * int64(req.inputs)
	u.InputTokens = u.InputTokensDetails.TextTokens + u.InputTokensDetails.ImageTokens
	u.OutputTokens = imageOutputTokens[size][quality] * int64(n)
	u.TotalTokens = u.InputTokens + u.OutputTokens
	return u
}

// meteredImages answers the gpt-image-counted and gpt-image-unmetered
// scenarios: the recorded image n times, the size and quality made, and
// the usage (or none).
func (f *OpenAI) meteredImages(w http.ResponseWriter, req imageRequest) {
	n := 1
	if req.N != nil {
		n = *req.N
	}
	size, quality := req.Size, req.Quality
	if size == "" || size == "auto" {
		size = "1024x1024"
	}
	if quality == "" || quality == "auto" {
		quality = "medium"
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(repeatImages(Fixture(f.t, "openai/image_gpt.json"), "data", n), &top); err != nil {
		f.t.Errorf("fixture openai/image_gpt.json: %v", err)
	}
	top["size"], _ = json.Marshal(size)
	top["quality"], _ = json.Marshal(quality)
	delete(top, "usage")
	if req.Model == "gpt-image-counted" {
		top["usage"], _ = json.Marshal(imageUsage(req, size, quality, n))
	}
	b, _ := json.Marshal(top)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
