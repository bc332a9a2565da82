package openai

import (
	"slices"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/contract"
)

// imageParams are the validated parameters of an image generation or edit.
// Empty strings are parameters the client did not send.
type imageParams struct {
	Model, Prompt  string
	N              int // 1 when not sent
	Size           string
	Quality        string
	Style          string
	User           string
	ResponseFormat string
	// InputImages is the number of files an edit sends (its images and
	// mask); 0 for a generation.
	InputImages int
}

// imageGenKeys are the members of CreateImageRequest the gateway reads or
// checks; others pass through to the vendor untouched.
var imageGenKeys = []string{"model", "prompt", "n", "size", "quality", "response_format", "style", "user", "stream"}

// maxImages is the spec's bound on n.
const maxImages = 10

// parseImageGen validates a CreateImageRequest body.
func parseImageGen(body []byte) (imageParams, *apierr.Error) {
	if e := checkBody(body, contract.ImageGenerations); e != nil {
		return imageParams{}, e
	}
	p := imageParams{N: 1}
	var seen struct{ model, prompt bool }
	e := members(body, "", imageGenKeys, func(key string, val []byte) *apierr.Error {
		var e *apierr.Error
		switch key {
		case "model":
			p.Model, seen.model, e = str(val, key)
		case "prompt":
			p.Prompt, seen.prompt, e = str(val, key)
		case "n":
			var n int64
			var ok bool
			if n, ok, e = integer(val, key, 1, maxImages); ok {
				p.N = int(n)
			}
		case "size":
			p.Size, _, e = str(val, key)
		case "quality":
			p.Quality, _, e = str(val, key)
		case "response_format":
			p.ResponseFormat, _, e = str(val, key)
		case "style":
			p.Style, _, e = str(val, key)
		case "user":
			p.User, _, e = str(val, key)
		case "stream":
			var stream bool
			if stream, _, e = boolean(val, key); e == nil && stream {
				e = apierr.Invalid(key, "Streaming image generation is not supported by this gateway; send the request without 'stream'.")
			}
		}
		return e
	})
	if e != nil {
		return p, e
	}
	if !seen.model || p.Model == "" {
		return p, apierr.Invalid("model", "You must provide a model parameter.")
	}
	if !seen.prompt {
		return p, missing("prompt")
	}
	return p, p.check()
}

// check validates the values whose rules do not depend on the model.
func (p *imageParams) check() *apierr.Error {
	if strings.TrimSpace(p.Prompt) == "" {
		return apierr.Invalid("prompt", "Invalid 'prompt': the prompt must not be empty.")
	}
	if p.Size != "" && p.Size != "auto" {
		if _, _, ok := parseSize(p.Size); !ok {
			return apierr.Invalid("size", "Invalid value for 'size': '%s'. Use WIDTHxHEIGHT in pixels, like '1024x1024', or 'auto'.", p.Size)
		}
	}
	if p.Quality != "" && !token(p.Quality) {
		return apierr.Invalid("quality", "Invalid value for 'quality': '%s'.", p.Quality)
	}
	switch p.ResponseFormat {
	case "", "url", "b64_json":
	default:
		return oneOf("response_format", p.ResponseFormat, "url", "b64_json")
	}
	switch p.Style {
	case "", "vivid", "natural":
	default:
		return oneOf("style", p.Style, "vivid", "natural")
	}
	return nil
}

// parseSize reads "WxH" with positive dimensions.
func parseSize(s string) (w, h int, ok bool) {
	ws, hs, found := strings.Cut(s, "x")
	if !found {
		return 0, 0, false
	}
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if err1 != nil || err2 != nil || w <= 0 || h <= 0 || w > 100000 || h > 100000 || ws[0] == '+' || hs[0] == '+' {
		return 0, 0, false
	}
	return w, h, true
}

// token reports whether s is a plausible enum value (lowercase letters,
// digits, '-' and '_'), so vendors' own quality names pass.
func token(s string) bool {
	if len(s) > 32 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// isModel reports whether the public or the upstream id is family or one
// of its snapshots (family followed by '-'); the upstream id matters when
// an operator renames a model.
func isModel(public, upstream, family string) bool {
	for _, id := range [...]string{public, upstream} {
		if id == family || strings.HasPrefix(id, family+"-") {
			return true
		}
	}
	return false
}

// checkForModel applies the model's rules from the catalog: its sizes,
// the qualities it is priced for, and dall-e-3's single image.
func (p *imageParams) checkForModel(public, upstream string, mp billing.ModelPrice) *apierr.Error {
	if p.N > 1 && isModel(public, upstream, "dall-e-3") {
		return apierr.Invalid("n", "Invalid 'n': the model '%s' only supports n=1.", public)
	}
	if p.Size != "" && len(mp.ImageSizes) > 0 && !slices.Contains(mp.ImageSizes, p.Size) &&
		(p.Size != "auto" || isModel(public, upstream, "dall-e-2") || isModel(public, upstream, "dall-e-3")) {
		return apierr.Invalid("size", "Invalid value for 'size': '%s'. Supported values for the model '%s' are: '%s'.",
			p.Size, public, strings.Join(mp.ImageSizes, "', '"))
	}
	if q := qualities(mp); p.Quality != "" && p.Quality != "auto" && len(q) > 0 && !slices.Contains(q, p.Quality) {
		return apierr.Invalid("quality", "Invalid value for 'quality': '%s'. Supported values for the model '%s' are: '%s'.",
			p.Quality, public, strings.Join(append(q, "auto"), "', '"))
	}
	return nil
}

// qualities lists the qualities a model's image prices name, in catalog
// order; nil when a price leaves quality open (any quality is priced).
func qualities(mp billing.ModelPrice) []string {
	var q []string
	for _, ip := range mp.Images {
		if ip.Quality == "" {
			return nil
		}
		if !slices.Contains(q, ip.Quality) {
			q = append(q, ip.Quality)
		}
	}
	return q
}
