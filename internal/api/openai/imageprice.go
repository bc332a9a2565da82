package openai

import (
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
)

// Image prices depend on size and quality. What the client leaves open
// ("" or "auto") is reserved at the most it can cost and settled at what
// the vendor reports it produced (GPT image models report size and
// quality); without a report, at the vendor's documented default:
// 1024x1024, and "standard" quality where the model is priced for it
// (DALL·E).

// defaultImageSize is OpenAI's default size for every image model that
// has one.
const defaultImageSize = "1024x1024"

// concrete is v unless it leaves the choice to the vendor.
func concrete(v string) string {
	if v == "auto" {
		return ""
	}
	return v
}

// imagePrice is the price of one image of size and quality; "" stands for
// any, and then the highest matching price counts.
func imagePrice(mp billing.ModelPrice, size, quality string) (money.Micros, bool) {
	if size != "" && quality != "" {
		return mp.ImagePrice(size, quality)
	}
	var best money.Micros
	found := false
	for _, ip := range mp.Images {
		if size != "" && ip.Size != "" && ip.Size != size {
			continue
		}
		if quality != "" && ip.Quality != "" && ip.Quality != quality {
			continue
		}
		if !found || ip.Price > best {
			best, found = ip.Price, true
		}
	}
	return best, found
}

// defaultQuality is "standard" when the model has a standard price at
// size ("" any), else "" (the vendor picks; the highest price counts).
func defaultQuality(mp billing.ModelPrice, size string) string {
	for _, ip := range mp.Images {
		if ip.Quality == "standard" && (size == "" || ip.Size == "" || ip.Size == size) {
			return "standard"
		}
	}
	return ""
}

// reserveUnit is the most one image of the request can cost.
func reserveUnit(mp billing.ModelPrice, p *imageParams) (money.Micros, bool) {
	size, quality := concrete(p.Size), concrete(p.Quality)
	if quality == "" {
		quality = defaultQuality(mp, size)
	}
	return imagePrice(mp, size, quality)
}

// settleUnit is what one image of the answer costs: the request's size
// and quality where it named them, else what the vendor reports, else the
// vendor's defaults; the reservation's unit when none of those is priced.
func settleUnit(mp billing.ModelPrice, p *imageParams, res *provider.ImageResponse, reserved money.Micros) money.Micros {
	size, quality := concrete(p.Size), concrete(p.Quality)
	if size == "" {
		size = concrete(res.Size)
	}
	if size == "" {
		if _, ok := imagePrice(mp, defaultImageSize, ""); ok {
			size = defaultImageSize
		}
	}
	if quality == "" {
		quality = concrete(res.Quality)
	}
	if quality == "" {
		quality = defaultQuality(mp, size)
	}
	if u, ok := imagePrice(mp, size, quality); ok && u <= reserved {
		return u
	}
	return reserved
}
