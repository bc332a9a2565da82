package config

import (
	"fmt"
	"maps"
	"slices"

	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/money"
	"go.yaml.in/yaml/v3"
)

// Billing defaults; see ApplyDefaults.
const (
	defaultCurrency   = "USD"
	defaultDemoCredit = Amount(5 * money.Unit)
)

// Billing holds the prepaid-balance settings, so the operator's currency and
// the zero-config starting credit are set in one place.
type Billing struct {
	// Currency is the ISO 4217-like code amounts are shown in (display only:
	// modelgate never converts between currencies).
	Currency string `yaml:"currency"`
	// DemoCredit is credited once to the first account of a zero-config
	// start, so the demo can be tried without a top-up.
	DemoCredit Amount `yaml:"demo_credit"`
}

// ModelConfig overrides or adds one entry of the built-in model catalog.
// Pointer fields are nil when the file leaves them out (and slices and maps
// nil), so only the settings written change the catalog; prices are per
// million tokens (or per image, per second) in currency units.
type ModelConfig struct {
	ID string `yaml:"id"`
	// FirstByteTimeout bounds the wait for the first byte of the model's
	// answer from any provider (reasoning models start slowly).
	FirstByteTimeout *Duration          `yaml:"first_byte_timeout"`
	OwnedBy          *string            `yaml:"owned_by"`
	Modality         *string            `yaml:"modality"`
	ContextWindow    *int64             `yaml:"context_window"`
	MaxOutput        *int64             `yaml:"max_output"`
	Input            *Amount            `yaml:"input"`
	Output           *Amount            `yaml:"output"`
	CachedInput      *Amount            `yaml:"cached_input"`
	Images           []ImagePriceConfig `yaml:"images"`
	AudioPerSecond   *Amount            `yaml:"audio_per_second"`
	VideoPerSecond   *Amount            `yaml:"video_per_second"`
	// Sizes are the sizes (WxH) an image or video model accepts, the first
	// the default; for an image model, images: already implies them.
	Sizes []string `yaml:"sizes"`
	// VideoPrices are per-second prices of the video sizes that cost other
	// than video_per_second ({1792x1024: 0.5}).
	VideoPrices map[string]Amount `yaml:"video_prices"`
	// VideoDurations are the seconds the upstream makes, the first the
	// default ([4, 8, 12] for Sora).
	VideoDurations []int `yaml:"video_durations"`
	// VideoDurationMap maps a length a client may ask for that the
	// upstream does not make to the one it is asked for and billed ({5: 4}).
	VideoDurationMap map[int]int `yaml:"video_duration_map"`
	Free             *bool       `yaml:"free"`
	// ImageInput, CachedImageInput and ImageOutput price an image model its
	// vendor bills by token, per million image tokens (its text at input
	// and cached_input); with them the images endpoints bill the vendor's
	// usage rather than per image.
	ImageInput       *Amount `yaml:"image_input"`
	CachedImageInput *Amount `yaml:"cached_image_input"`
	ImageOutput      *Amount `yaml:"image_output"`
	// AudioInput and AudioOutput are prices per million audio tokens of a
	// chat model that hears or speaks; without them audio is refused.
	AudioInput  *Amount `yaml:"audio_input"`
	AudioOutput *Amount `yaml:"audio_output"`
	// Tiers price the vendor's service tiers other than its default
	// ({priority: {input: 2.5, output: 20, cached_input: 0.25}}); they
	// replace the catalog's tiers of the model whole.
	Tiers map[string]TierPriceConfig `yaml:"tiers"`
	// ToolCalls price one call of each built-in tool the vendor runs
	// ({web_search: 0.01, code_interpreter: 0.03}); they replace the
	// catalog's tool prices of the model whole. A price of 0 lets a tool
	// through free.
	ToolCalls map[string]Amount `yaml:"tool_calls"`
	// Searches marks a chat model that runs one web search on every
	// request, charged at tool_calls.web_search.
	Searches *bool `yaml:"searches"`
	// Reasoning marks a model whose usage can hold tokens its answer does
	// not show (hidden reasoning), so a client that leaves early is still
	// charged the vendor's usage (see drain_timeout).
	Reasoning *bool `yaml:"reasoning"`
	Line      int   `yaml:"-"`
}

// TierPriceConfig is one service tier's price per million tokens.
type TierPriceConfig struct {
	Input       Amount `yaml:"input"`
	Output      Amount `yaml:"output"`
	CachedInput Amount `yaml:"cached_input"`
}

// ImagePriceConfig is the price of one image of a size and quality.
type ImagePriceConfig struct {
	Size    string `yaml:"size"`
	Quality string `yaml:"quality"`
	Price   Amount `yaml:"price"`
}

// Amount is a money amount written in YAML as a plain decimal ("0.15",
// "12"). It is read from the scalar's text, never through a float, and more
// than six decimals are an error rather than a silent rounding.
type Amount money.Micros

// UnmarshalYAML parses the scalar's text exactly with money.Parse.
func (a *Amount) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return typeErrorf(n, "expected an amount like 0.15")
	}
	m, err := money.Parse(n.Value)
	if err != nil {
		return typeErrorf(n, "invalid amount %s: want a decimal number with at most 6 decimals, like 0.15", quoteValue(n.Value))
	}
	*a = Amount(m)
	return nil
}

// Micros returns the amount as money, so callers need no conversion.
func (a Amount) Micros() money.Micros { return money.Micros(a) }

// MarshalYAML writes the amount back as a short decimal string.
func (a Amount) MarshalYAML() (any, error) {
	return catalog.FormatPrice(money.Micros(a)), nil
}

// Ratio is a non-negative multiplier in parts per million (money.PPM is 1),
// written in YAML as a decimal like 0.8 and read exactly from its text.
type Ratio int64

// UnmarshalYAML parses the scalar's text exactly with money.ParseRatio.
func (r *Ratio) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return typeErrorf(n, "expected a ratio like 0.8")
	}
	v, err := money.ParseRatio(n.Value)
	if err != nil {
		return typeErrorf(n, "invalid ratio %s: want a non-negative decimal with at most 6 decimals, like 0.8", quoteValue(n.Value))
	}
	*r = Ratio(v)
	return nil
}

// PPM returns the ratio in parts per million (money.PPM is 1).
func (r Ratio) PPM() int64 { return int64(r) }

// MarshalYAML writes the ratio back as a short decimal.
func (r Ratio) MarshalYAML() (any, error) {
	return money.FormatRatio(int64(r)), nil
}

// CatalogOverrides converts the models section into catalog overrides,
// marking exactly the fields the file gave, so that catalog.With changes
// only those (and "free: false" is as explicit as "free: true").
func (c *Config) CatalogOverrides() []catalog.Override {
	out := make([]catalog.Override, 0, len(c.Models))
	for _, mc := range c.Models {
		o := catalog.Override{Model: catalog.Model{ID: mc.ID}}
		m, set := &o.Model, &o.Set
		if mc.OwnedBy != nil {
			m.OwnedBy, *set = *mc.OwnedBy, *set|catalog.SetOwnedBy
		}
		if mc.Modality != nil {
			m.Modality, *set = catalog.Modality(*mc.Modality), *set|catalog.SetModality
		}
		if mc.ContextWindow != nil {
			m.ContextWindow, *set = *mc.ContextWindow, *set|catalog.SetContextWindow
		}
		if mc.MaxOutput != nil {
			m.MaxOutput, *set = *mc.MaxOutput, *set|catalog.SetMaxOutput
		}
		price := func(a *Amount, dst *money.Micros, f catalog.OverrideFields) {
			if a != nil {
				*dst, *set = money.Micros(*a), *set|f
			}
		}
		price(mc.Input, &m.Input, catalog.SetInput)
		price(mc.Output, &m.Output, catalog.SetOutput)
		price(mc.CachedInput, &m.CachedInput, catalog.SetCachedInput)
		price(mc.AudioPerSecond, &m.AudioPerSecond, catalog.SetAudioPerSecond)
		price(mc.VideoPerSecond, &m.VideoPerSecond, catalog.SetVideoPerSecond)
		price(mc.ImageInput, &m.ImageInput, catalog.SetImageInput)
		price(mc.CachedImageInput, &m.CachedImageInput, catalog.SetCachedImageInput)
		price(mc.ImageOutput, &m.ImageOutput, catalog.SetImageOutput)
		if mc.Images != nil {
			*set |= catalog.SetImages
			for _, p := range mc.Images {
				m.Images = append(m.Images, catalog.ImagePrice{Size: p.Size, Quality: p.Quality, Price: money.Micros(p.Price)})
			}
		}
		if mc.Sizes != nil {
			m.ImageSizes, *set = slices.Clone(mc.Sizes), *set|catalog.SetImageSizes
		}
		if mc.VideoPrices != nil {
			*set |= catalog.SetVideoPrices
			for _, size := range slices.Sorted(maps.Keys(mc.VideoPrices)) {
				m.VideoPrices = append(m.VideoPrices, catalog.VideoPrice{Size: size, PerSecond: money.Micros(mc.VideoPrices[size])})
			}
		}
		if mc.VideoDurations != nil {
			m.VideoDurations, *set = slices.Clone(mc.VideoDurations), *set|catalog.SetVideoDurations
		}
		if mc.VideoDurationMap != nil {
			m.VideoDurationMap, *set = maps.Clone(mc.VideoDurationMap), *set|catalog.SetVideoDurationMap
		}
		if mc.Free != nil {
			m.Free, *set = *mc.Free, *set|catalog.SetFree
		}
		price(mc.AudioInput, &m.AudioInput, catalog.SetAudioInput)
		price(mc.AudioOutput, &m.AudioOutput, catalog.SetAudioOutput)
		if mc.Tiers != nil {
			m.Tiers, *set = make(map[string]catalog.TierPrice, len(mc.Tiers)), *set|catalog.SetTiers
			for name, t := range mc.Tiers {
				m.Tiers[name] = catalog.TierPrice{Input: t.Input.Micros(), Output: t.Output.Micros(), CachedInput: t.CachedInput.Micros()}
			}
		}
		if mc.ToolCalls != nil {
			m.ToolCalls, *set = make(map[string]money.Micros, len(mc.ToolCalls)), *set|catalog.SetToolCalls
			for tool, p := range mc.ToolCalls {
				m.ToolCalls[tool] = p.Micros()
			}
		}
		if mc.Searches != nil {
			m.Searches, *set = *mc.Searches, *set|catalog.SetSearches
		}
		if mc.Reasoning != nil {
			m.Reasoning, *set = *mc.Reasoning, *set|catalog.SetReasoning
		}
		out = append(out, o)
	}
	return out
}

// applyBillingDefaults fills the billing section and group price ratios.
// An explicit "demo_credit: 0" or "price_ratio: 0" is kept (the first is
// valid, the second is reported by Validate).
func (c *Config) applyBillingDefaults() {
	if c.Billing.Currency == "" {
		c.Billing.Currency = defaultCurrency
	}
	if c.Billing.DemoCredit == 0 && !c.given("billing.demo_credit") {
		c.Billing.DemoCredit = defaultDemoCredit
	}
	for name, g := range c.Groups {
		if g.PriceRatio == 0 && !c.given("groups."+name+".price_ratio") {
			g.PriceRatio = Ratio(money.PPM)
			c.Groups[name] = g
		}
	}
}

// fillModelLines copies the recorded lines of the models section.
func (c *Config) fillModelLines() {
	for i := range c.Models {
		if c.Models[i].Line == 0 {
			c.Models[i].Line = c.line(fmt.Sprintf("models.%d", i), 0)
		}
	}
}
