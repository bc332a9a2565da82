package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/internal/money"
)

// modelJSON is the wire form of a Model in builtin.json and in JSON output:
// snake_case keys, zero values left out, and prices as exact decimal strings
// ("2.5", "0.000075") so no float ever touches an amount.
type modelJSON struct {
	ID            string   `json:"id"`
	OwnedBy       string   `json:"owned_by"`
	Created       int64    `json:"created"`
	Modality      Modality `json:"modality"`
	ContextWindow int64    `json:"context_window,omitempty"`
	MaxOutput     int64    `json:"max_output,omitempty"`
	OutputLimited bool     `json:"output_limited,omitempty"`
	Tools         bool     `json:"tools,omitempty"`
	Vision        bool     `json:"vision,omitempty"`
	Reasoning     bool     `json:"reasoning,omitempty"`
	Tokenizer     string   `json:"tokenizer,omitempty"`
	Input         Price    `json:"input,omitempty"`
	Output        Price    `json:"output,omitempty"`
	CachedInput   Price    `json:"cached_input,omitempty"`
	AudioInput    Price    `json:"audio_input,omitempty"`
	AudioOutput   Price    `json:"audio_output,omitempty"`
	// Tiers and ToolCalls are objects keyed by tier and tool type;
	// encoding/json writes map keys sorted, so the output is stable.
	Tiers          map[string]tierPriceJSON `json:"tiers,omitempty"`
	ToolCalls      map[string]Price         `json:"tool_calls,omitempty"`
	Searches       bool                     `json:"searches,omitempty"`
	Images         []imagePriceJSON         `json:"images,omitempty"`
	AudioPerSecond Price                    `json:"audio_per_second,omitempty"`
	VideoPerSecond Price                    `json:"video_per_second,omitempty"`
	ImageSizes     []string                 `json:"image_sizes,omitempty"`
	VideoDurations []int                    `json:"video_durations,omitempty"`
	// VideoDurationMap's keys are written as JSON strings ({"5":4}), the
	// only form JSON object keys have.
	VideoDurationMap map[int]int      `json:"video_duration_map,omitempty"`
	VideoPrices      []videoPriceJSON `json:"video_prices,omitempty"`
	ImageInput       Price            `json:"image_input,omitempty"` // per million image tokens
	CachedImageInput Price            `json:"cached_image_input,omitempty"`
	ImageOutput      Price            `json:"image_output,omitempty"`
	Free             bool             `json:"free,omitempty"`
}

type tierPriceJSON struct {
	Input       Price `json:"input"`
	Output      Price `json:"output"`
	CachedInput Price `json:"cached_input,omitempty"`
}

type videoPriceJSON struct {
	Size      string `json:"size"`
	PerSecond Price  `json:"per_second"`
}

type imagePriceJSON struct {
	Size    string `json:"size"`
	Quality string `json:"quality,omitempty"`
	Price   Price  `json:"price"`
}

// Price is a money amount that encodes in JSON as a short exact decimal
// string ("0.15", "2.5", "0"), so JSON readers never round it through a float.
type Price money.Micros

// FormatPrice writes an amount as a short exact decimal: trailing zeros
// and a trailing dot are dropped, so 150000 micros is "0.15" and 2 units is "2".
func FormatPrice(m money.Micros) string {
	s := m.String()
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// MarshalJSON writes the price as a quoted short decimal.
func (p Price) MarshalJSON() ([]byte, error) {
	return json.Marshal(FormatPrice(money.Micros(p)))
}

// UnmarshalJSON reads a quoted decimal with at most six decimals.
func (p *Price) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("price must be a decimal string like \"2.5\": %w", err)
	}
	m, err := money.Parse(s)
	if err != nil {
		return fmt.Errorf("price: %w", err)
	}
	*p = Price(m)
	return nil
}

// MarshalJSON writes the model in the snake_case wire form.
func (m Model) MarshalJSON() ([]byte, error) {
	w := modelJSON{
		ID: m.ID, OwnedBy: m.OwnedBy, Created: m.Created, Modality: m.Modality,
		ContextWindow: m.ContextWindow, MaxOutput: m.MaxOutput, OutputLimited: m.OutputLimited,
		Tools: m.Tools, Vision: m.Vision, Reasoning: m.Reasoning, Tokenizer: m.Tokenizer,
		Input: Price(m.Input), Output: Price(m.Output), CachedInput: Price(m.CachedInput),
		ImageInput: Price(m.ImageInput), CachedImageInput: Price(m.CachedImageInput), ImageOutput: Price(m.ImageOutput),
		AudioPerSecond: Price(m.AudioPerSecond), VideoPerSecond: Price(m.VideoPerSecond),
		ImageSizes: m.ImageSizes, VideoDurations: m.VideoDurations, VideoDurationMap: m.VideoDurationMap, Free: m.Free,
	}
	for _, p := range m.Images {
		w.Images = append(w.Images, imagePriceJSON{Size: p.Size, Quality: p.Quality, Price: Price(p.Price)})
	}
	for _, p := range m.VideoPrices {
		w.VideoPrices = append(w.VideoPrices, videoPriceJSON{Size: p.Size, PerSecond: Price(p.PerSecond)})
	}
	w.AudioInput, w.AudioOutput, w.Searches = Price(m.AudioInput), Price(m.AudioOutput), m.Searches
	for tier, p := range m.Tiers {
		if w.Tiers == nil {
			w.Tiers = make(map[string]tierPriceJSON, len(m.Tiers))
		}
		w.Tiers[tier] = tierPriceJSON{Input: Price(p.Input), Output: Price(p.Output), CachedInput: Price(p.CachedInput)}
	}
	for tool, p := range m.ToolCalls {
		if w.ToolCalls == nil {
			w.ToolCalls = make(map[string]Price, len(m.ToolCalls))
		}
		w.ToolCalls[tool] = Price(p)
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads the snake_case wire form; unknown keys are errors, so
// a typo in hand-edited data cannot silently drop a price.
func (m *Model) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var w modelJSON
	if err := dec.Decode(&w); err != nil {
		return err
	}
	*m = Model{
		ID: w.ID, OwnedBy: w.OwnedBy, Created: w.Created, Modality: w.Modality,
		ContextWindow: w.ContextWindow, MaxOutput: w.MaxOutput, OutputLimited: w.OutputLimited,
		Tools: w.Tools, Vision: w.Vision, Reasoning: w.Reasoning, Tokenizer: w.Tokenizer,
		Input: money.Micros(w.Input), Output: money.Micros(w.Output), CachedInput: money.Micros(w.CachedInput),
		ImageInput: money.Micros(w.ImageInput), CachedImageInput: money.Micros(w.CachedImageInput), ImageOutput: money.Micros(w.ImageOutput),
		AudioPerSecond: money.Micros(w.AudioPerSecond), VideoPerSecond: money.Micros(w.VideoPerSecond),
		ImageSizes: w.ImageSizes, VideoDurations: w.VideoDurations, VideoDurationMap: w.VideoDurationMap, Free: w.Free,
	}
	for _, p := range w.Images {
		m.Images = append(m.Images, ImagePrice{Size: p.Size, Quality: p.Quality, Price: money.Micros(p.Price)})
	}
	for _, p := range w.VideoPrices {
		m.VideoPrices = append(m.VideoPrices, VideoPrice{Size: p.Size, PerSecond: money.Micros(p.PerSecond)})
	}
	m.AudioInput, m.AudioOutput, m.Searches = money.Micros(w.AudioInput), money.Micros(w.AudioOutput), w.Searches
	for tier, p := range w.Tiers {
		if m.Tiers == nil {
			m.Tiers = make(map[string]TierPrice, len(w.Tiers))
		}
		m.Tiers[tier] = TierPrice{Input: money.Micros(p.Input), Output: money.Micros(p.Output), CachedInput: money.Micros(p.CachedInput)}
	}
	for tool, p := range w.ToolCalls {
		if m.ToolCalls == nil {
			m.ToolCalls = make(map[string]money.Micros, len(w.ToolCalls))
		}
		m.ToolCalls[tool] = money.Micros(p)
	}
	return nil
}

// Encode writes models as a JSON array with one model per line, the
// diff-friendly layout of builtin.json.
func Encode(models []Model) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, m := range models {
		line, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("encode model %q: %w", m.ID, err)
		}
		b.Write(line)
		if i < len(models)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	return b.Bytes(), nil
}
