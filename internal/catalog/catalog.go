// Package catalog is modelgate's model catalog: for every public model id,
// the vendor that owns it, its modality, context window and output limit,
// capabilities, tokenizer family and list prices in integer micro-units.
//
// The built-in catalog (Builtin) is generated from the genai-prices data set
// (https://github.com/pydantic/genai-prices, MIT) plus the gateway's own
// entries for image, audio, video and demo models, and embedded in the
// binary; operators change or extend it with overrides from their config
// (With). A Catalog is immutable once built and safe for concurrent reads.
package catalog

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/internal/money"
)

//go:generate go run ./gen

// Modality is the kind of work a model does, which decides the endpoint that
// serves it and the unit it is billed by.
type Modality string

// The modalities a model can have.
const (
	Chat       Modality = "chat"       // /v1/chat/completions, billed per token
	Completion Modality = "completion" // legacy /v1/completions, billed per token
	Embedding  Modality = "embedding"  // /v1/embeddings, billed per input token
	Image      Modality = "image"      // /v1/images/*, billed per image or per token
	Audio      Modality = "audio"      // /v1/audio/*, billed per second of audio
	Video      Modality = "video"      // /v1/videos, billed per second of video
)

// Valid reports whether m is one of the known modalities, so config and
// generated data cannot smuggle in a kind no endpoint serves.
func (m Modality) Valid() bool {
	switch m {
	case Chat, Completion, Embedding, Image, Audio, Video:
		return true
	}
	return false
}

// Modalities lists every known modality, for messages and help text.
var Modalities = []Modality{Chat, Completion, Embedding, Image, Audio, Video}

// ImagePrice is the price of one image of a size and quality.
type ImagePrice struct {
	Size, Quality string
	Price         money.Micros
}

// Model is everything the gateway knows about one public model id: enough to
// list it in /v1/models, check a request against its limits, and price it.
type Model struct {
	ID            string
	OwnedBy       string
	Created       int64 // unix seconds
	Modality      Modality
	ContextWindow int64 // tokens; 0 unknown
	MaxOutput     int64 // tokens; 0 unknown
	// OutputLimited says MaxOutput is the vendor's published limit (or the
	// operator's): a request asking for more is refused, as the vendor
	// would. Without it MaxOutput is only an assumption for reservations.
	OutputLimited bool

	Tools, Vision, Reasoning bool
	// Tokenizer is "o200k", "cl100k", or "" when no exact tokenizer is
	// known and callers approximate.
	Tokenizer string

	// Input, Output and CachedInput are prices per million tokens;
	// CachedInput 0 means cached tokens cost Input.
	Input, Output, CachedInput money.Micros
	// AudioInput and AudioOutput are prices per million audio tokens of a
	// chat model that hears or speaks; 0 means the gateway sends the
	// model no audio (input) or asks it for none (output), since audio
	// the catalog cannot price is refused, not billed as text.
	AudioInput, AudioOutput money.Micros
	// Tiers are the token prices of the vendor's service tiers other than
	// its default (OpenAI's "priority" and "flex"), by tier name; a tier
	// not listed is refused.
	Tiers map[string]TierPrice
	// ToolCalls is the list price of one call of each built-in tool the
	// vendor runs and charges for (OpenAI's "web_search"), by tool type;
	// a built-in tool not listed is refused.
	ToolCalls map[string]money.Micros
	// Searches marks a chat model that runs one web search on every
	// request (OpenAI's search-preview models), charged as a web_search
	// call.
	Searches bool

	Images                         []ImagePrice // per image, by size and quality
	AudioPerSecond, VideoPerSecond money.Micros
	ImageSizes                     []string // allowed sizes (WxH) for image and video models; the first is the default
	// ImageInput, CachedImageInput and ImageOutput are the prices per
	// million image tokens of an image model its vendor bills by token
	// (the GPT image models): input images, the cached part of them, and
	// the images made. Its text input is billed at Input and CachedInput,
	// its text output (when the vendor reports any) at Output. Such a
	// model is billed from the vendor's usage on the images endpoints; its
	// Images table, when it has one, still prices one image (for the
	// Responses API's image_generation tool).
	ImageInput, CachedImageInput, ImageOutput money.Micros
	// VideoDurations are the seconds the upstream makes (Sora: 4, 8, 12);
	// the first is the default.
	VideoDurations []int
	// VideoDurationMap maps a duration a client may ask for that the
	// upstream does not make (the spec's 5, 10, 15, 20) to the seconds the
	// upstream is asked for and the client is billed for ({5: 4, 10: 8,
	// 15: 12} for Sora). Durations neither in it nor in VideoDurations are
	// refused.
	VideoDurationMap map[int]int
	// VideoPrices are per-second prices of sizes that cost other than
	// VideoPerSecond (sora-2-pro at 1024x1792).
	VideoPrices []VideoPrice

	// Free marks a model explicitly free (the demo models). It is never
	// inferred from zero prices: an unpriced model is refused, not given away.
	Free bool
}

// Priced reports whether the model can be billed: Free, or it has a price
// for its modality (chat/completion/embedding: Input or Output > 0; image:
// len(Images) > 0, or TokenPricedImages; audio: AudioPerSecond > 0; video:
// a price per second above zero for every allowed size, or VideoPerSecond
// > 0 when no sizes are listed), so no size is ever billed at zero by
// accident.
func (m Model) Priced() bool {
	if m.Free {
		return true
	}
	switch m.Modality {
	case Chat, Completion, Embedding:
		return m.Input > 0 || m.Output > 0
	case Image:
		return len(m.Images) > 0 || m.TokenPricedImages()
	case Audio:
		return m.AudioPerSecond > 0
	case Video:
		if len(m.ImageSizes) == 0 {
			return m.VideoPerSecond > 0
		}
		for _, size := range m.ImageSizes {
			if m.VideoPriceFor(size) <= 0 {
				return false
			}
		}
		return true
	}
	return false
}

// TierPrice is a service tier's price per million tokens.
type TierPrice struct {
	Input, Output, CachedInput money.Micros
}

// TokenPricedImages reports whether the model is an image model its vendor
// bills by token: it has a price for output image tokens, and then a text
// input and an input image price too (an image model priced by token
// without them would bill its prompt and input images at zero).
func (m Model) TokenPricedImages() bool {
	return m.Modality == Image && m.ImageOutput > 0 && m.Input > 0 && m.ImageInput > 0
}

// VideoPrice is the price of one second of video of a size.
type VideoPrice struct {
	Size      string
	PerSecond money.Micros
}

// VideoPriceFor is the price of a second of video of size: its entry in
// VideoPrices, else VideoPerSecond.
func (m Model) VideoPriceFor(size string) money.Micros {
	for _, p := range m.VideoPrices {
		if p.Size == size {
			return p.PerSecond
		}
	}
	return m.VideoPerSecond
}

// UpstreamSeconds is the length the upstream makes (and the client is
// billed for) when a client asks for d seconds; ok is false when the model
// cannot make d.
func (m Model) UpstreamSeconds(d int) (int, bool) {
	if slices.Contains(m.VideoDurations, d) {
		return d, true
	}
	s, ok := m.VideoDurationMap[d]
	return s, ok
}

// qualityAliases maps OpenAI's DALL·E quality names to gpt-image-1 tiers, so
// a client written for dall-e-3 keeps working when pointed at gpt-image-1.
var qualityAliases = map[string]string{"standard": "medium", "hd": "high"}

// defaultQualities are the qualities an empty request quality means, most
// preferred first (OpenAI's defaults for dall-e-3 and gpt-image-1).
var defaultQualities = []string{"", "standard", "medium", "auto"}

// ImagePriceFor returns the price of one image of size and quality. An empty
// quality means the model's default: an entry without quality, else
// "standard" or "medium", else the cheapest price for the size. "standard"
// and "hd" fall back to "medium" and "high" when the model has no entry
// named so. ok is false when the size (or quality) is unknown.
func (m Model) ImagePriceFor(size, quality string) (money.Micros, bool) {
	find := func(q string) (money.Micros, bool) {
		for _, p := range m.Images {
			if p.Size == size && p.Quality == q {
				return p.Price, true
			}
		}
		return 0, false
	}
	if quality != "" {
		if p, ok := find(quality); ok {
			return p, true
		}
		if alias, ok := qualityAliases[quality]; ok {
			return find(alias)
		}
		return 0, false
	}
	for _, q := range defaultQualities {
		if p, ok := find(q); ok {
			return p, true
		}
	}
	var best money.Micros
	found := false
	for _, p := range m.Images {
		if p.Size == size && (!found || p.Price < best) {
			best, found = p.Price, true
		}
	}
	return best, found
}

// clone returns m with its slices and maps copied, so a Catalog never shares backing
// arrays with its caller.
func (m Model) clone() Model {
	m.Images = slices.Clone(m.Images)
	m.ImageSizes = slices.Clone(m.ImageSizes)
	m.VideoDurations = slices.Clone(m.VideoDurations)
	m.VideoDurationMap = maps.Clone(m.VideoDurationMap)
	m.VideoPrices = slices.Clone(m.VideoPrices)
	m.Tiers = maps.Clone(m.Tiers)
	m.ToolCalls = maps.Clone(m.ToolCalls)
	return m
}

// Catalog is an immutable set of models keyed by public id. Lookups return
// copies of the model value; the slices inside them are shared and must not
// be modified.
type Catalog struct {
	byID   map[string]Model
	sorted []Model
}

// New builds a catalog from models. When an id appears twice, the later
// model wins, so callers can append corrections to a list.
func New(models []Model) *Catalog {
	byID := make(map[string]Model, len(models))
	for _, m := range models {
		byID[m.ID] = m.clone()
	}
	sorted := make([]Model, 0, len(byID))
	for _, m := range byID {
		sorted = append(sorted, m)
	}
	slices.SortFunc(sorted, func(a, b Model) int { return strings.Compare(a.ID, b.ID) })
	return &Catalog{byID: byID, sorted: sorted}
}

// Lookup returns the model with the public id, if the catalog knows it.
func (c *Catalog) Lookup(id string) (Model, bool) {
	m, ok := c.byID[id]
	return m, ok
}

// All returns every model, sorted by ID. The slice is the caller's own.
func (c *Catalog) All() []Model {
	return slices.Clone(c.sorted)
}

// Len is the number of models in the catalog.
func (c *Catalog) Len() int {
	return len(c.sorted)
}

// builtinJSON is the generated catalog; see gen/main.go.
//
//go:embed builtin.json
var builtinJSON []byte

// Builtin decodes the catalog embedded in the binary. Each call returns a
// new Catalog, so callers decide how long to keep it.
func Builtin() (*Catalog, error) {
	models, err := Decode(builtinJSON)
	if err != nil {
		return nil, fmt.Errorf("catalog: builtin.json: %w", err)
	}
	return New(models), nil
}

// Decode reads a JSON array of models in the builtin.json format (the same
// shape Model.MarshalJSON writes), strictly: unknown fields are errors.
func Decode(data []byte) ([]Model, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var models []Model
	if err := dec.Decode(&models); err != nil {
		return nil, fmt.Errorf("decode models: %w", err)
	}
	for i, m := range models {
		if m.ID == "" {
			return nil, fmt.Errorf("model #%d has no id", i+1)
		}
		if !m.Modality.Valid() {
			return nil, fmt.Errorf("model %q: unknown modality %q", m.ID, m.Modality)
		}
	}
	return models, nil
}
