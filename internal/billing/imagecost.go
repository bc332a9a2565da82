package billing

import "github.com/modelgate/modelgate/internal/money"

// ImageTokenPrice is the price per million tokens of an image model its
// vendor bills by token (OpenAI's GPT image models): the prompt's text and
// input images, each with a cheaper cached part, the images made and, for
// models that report it, text the model wrote (reasoning).
type ImageTokenPrice struct {
	Text, CachedText   money.Micros // input text; CachedText 0: cached text costs Text
	Image, CachedImage money.Micros // input images; CachedImage 0: cached image tokens cost Image
	Output             money.Micros // output image tokens
	TextOutput         money.Micros // output text tokens; 0: they cost Output
}

// Priced reports whether p bills images by token: it has an output image
// price (the catalog sets one only with text and image input prices).
func (p ImageTokenPrice) Priced() bool { return p.Output > 0 }

// ImageTokens is an image request's token usage, as the vendor reports it
// (ImagesResponse.usage) or as bounded before the call.
type ImageTokens struct {
	Text, CachedText   int64 // input text tokens, and the part of them read from the cache
	Image, CachedImage int64 // input image tokens, and the cached part
	Output             int64 // output image tokens
	TextOutput         int64 // output text tokens
}

// ImageCost is what t costs at p with the price ratio ratioPPM (money.PPM
// is 1), rounded half up to the micro-unit once, like Cost.
func ImageCost(p ImageTokenPrice, t ImageTokens, ratioPPM int64) (money.Micros, error) {
	if ratioPPM < 0 {
		return 0, ErrOverflow
	}
	for _, v := range [...]int64{t.Text, t.CachedText, t.Image, t.CachedImage, t.Output, t.TextOutput,
		int64(p.Text), int64(p.CachedText), int64(p.Image), int64(p.CachedImage), int64(p.Output), int64(p.TextOutput)} {
		if v < 0 {
			return 0, ErrOverflow
		}
	}
	cachedText, cachedImage := min(t.CachedText, t.Text), min(t.CachedImage, t.Image)
	terms := [6][2]int64{
		{t.Text - cachedText, int64(p.Text)}, {cachedText, int64(orPrice(p.CachedText, p.Text))},
		{t.Image - cachedImage, int64(p.Image)}, {cachedImage, int64(orPrice(p.CachedImage, p.Image))},
		{t.Output, int64(p.Output)}, {t.TextOutput, int64(orPrice(p.TextOutput, p.Output))},
	}
	return weighted(terms[:], ratioPPM)
}

// orPrice is p, or fallback when p is not set.
func orPrice(p, fallback money.Micros) money.Micros {
	if p == 0 {
		return fallback
	}
	return p
}
