// Package billing turns usage into money and keeps requests from spending
// what an account does not have.
//
// Cost arithmetic is integer only: prices are micro-units per million
// tokens, group price ratios are parts per million, and a request's cost is
//
//	round_half_up( Σ tokens × price_per_million × ratio_ppm / 10^12 )
//
// computed once per request over the exact 128-bit product, so splitting a
// request into parts never rounds twice.
//
// Reservations (Ledger) live in memory: Reserve admits a request only when
// balance − settled-but-unwritten charges − outstanding reservations covers
// the most it can cost; Settle turns a reservation into a charge that
// reaches the store with the request's usage record (one transaction, in
// the usage writer's batch), so billing adds no database write to the
// request path.
package billing

import (
	"errors"

	"github.com/modelgate/modelgate/internal/money"
)

// TokenPrice is a model's price per million tokens.
type TokenPrice struct {
	Input       money.Micros
	Output      money.Micros
	CachedInput money.Micros // 0: cached input tokens cost Input
	// AudioInput and AudioOutput price audio tokens (a chat model that
	// hears or speaks); 0: they cost Input and Output. Whether a model may
	// be sent audio at all is the caller's decision (see ModelPrice.Audio).
	AudioInput  money.Micros
	AudioOutput money.Micros
}

// Tokens is a request's token usage, and what it was charged besides
// tokens.
type Tokens struct {
	Prompt          int64 // all input tokens, cached and audio ones included
	Cached          int64 // part of Prompt read from the vendor's cache (text)
	Completion      int64 // all output tokens, reasoning and audio included
	AudioPrompt     int64 // part of Prompt that is audio
	AudioCompletion int64 // part of Completion that is audio
	// Fees are list-price charges outside token counts (built-in tool
	// calls): added before the group's ratio, so the request is rounded
	// once.
	Fees money.Micros
}

// perMillion is the divisor for a price per million tokens times a ratio in
// parts per million.
const perMillion = 1_000_000 * 1_000_000

// ErrOverflow means a cost does not fit the arithmetic (absurd token counts
// or prices); the request is refused rather than billed wrong.
var ErrOverflow = errors.New("billing: cost overflows")

// Cost is what t costs at p with the price ratio ratioPPM (money.PPM is 1),
// rounded half up to the micro-unit.
func Cost(p TokenPrice, t Tokens, ratioPPM int64) (money.Micros, error) {
	if t.Prompt < 0 || t.Cached < 0 || t.Completion < 0 || t.AudioPrompt < 0 || t.AudioCompletion < 0 || t.Fees < 0 ||
		p.Input < 0 || p.Output < 0 || p.CachedInput < 0 || p.AudioInput < 0 || p.AudioOutput < 0 || ratioPPM < 0 {
		return 0, ErrOverflow
	}
	audioIn, audioOut := min(t.AudioPrompt, t.Prompt), min(t.AudioCompletion, t.Completion)
	cached := min(t.Cached, t.Prompt-audioIn)
	terms := [6][2]int64{
		{t.Prompt - audioIn - cached, int64(p.Input)},
		{cached, int64(or(p.CachedInput, p.Input))},
		{audioIn, int64(or(p.AudioInput, p.Input))},
		{t.Completion - audioOut, int64(p.Output)},
		{audioOut, int64(or(p.AudioOutput, p.Output))},
		{int64(t.Fees), 1_000_000}, // a fee is a price per million of a million
	}
	return weighted(terms[:], ratioPPM)
}

// weighted is Σ count × price-per-million over terms ({count, price}),
// times ratioPPM, rounded half up once: the cost of one request. Each
// product and the sum stay below int64's limit, else ErrOverflow.
func weighted(terms [][2]int64, ratioPPM int64) (money.Micros, error) {
	limit := int64(1<<62) / int64(len(terms))
	var sum int64
	for _, tm := range terms {
		if tm[0] != 0 && tm[1] > limit/tm[0] {
			return 0, ErrOverflow
		}
		sum += tm[0] * tm[1]
	}
	c, ok := money.MulDiv(sum, ratioPPM, perMillion)
	if !ok {
		return 0, ErrOverflow
	}
	return money.Micros(c), nil
}

// or is p, or def when p is 0 (a price that defaults to another).
func or(p, def money.Micros) money.Micros {
	if p == 0 {
		return def
	}
	return p
}

// Scale applies a price ratio to a flat amount (a per-image or per-second
// price times a count), rounding half up.
func Scale(amount money.Micros, count, ratioPPM int64) (money.Micros, error) {
	if amount < 0 || count < 0 {
		return 0, ErrOverflow
	}
	if count != 0 && int64(amount) > (1<<62)/count {
		return 0, ErrOverflow
	}
	c, ok := money.MulDiv(int64(amount)*count, ratioPPM, money.PPM)
	if !ok {
		return 0, ErrOverflow
	}
	return money.Micros(c), nil
}

// ModelPrice is what billing needs to know about one model.
type ModelPrice struct {
	Price         TokenPrice
	Free          bool   // explicitly free: no reservation, no charge
	Priced        bool   // has a token price (a model neither Free nor Priced is refused)
	ContextWindow int64  // tokens; 0 unknown
	MaxOutput     int64  // tokens; 0 unknown
	OutputLimit   int64  // the most output tokens a request may ask for; 0: no published limit
	Tokenizer     string // catalog tokenizer name ("o200k", "cl100k", "" approximate)
	// Reasoning marks a model whose usage can hold tokens its answer does
	// not show (hidden reasoning): a client that leaves before the
	// vendor's usage arrived is charged from it all the same.
	Reasoning bool

	Modality       string       // the catalog's: chat, completion, embedding, image, audio, video
	Images         []ImagePrice // per generated image, by size and quality
	ImageSizes     []string     // the sizes (WxH) an image model accepts; nil: any
	AudioPerSecond money.Micros // per second of input audio
	VideoPerSecond money.Micros // per second of generated video (sizes may cost more: see the catalog)

	// Tiers are the token prices of the vendor's service tiers other than
	// its default ("priority", "flex"); a tier not listed has no price.
	Tiers map[string]TokenPrice
	// ToolCalls is the list price of one call of each built-in tool the
	// vendor runs and charges for ("web_search"); a tool not listed has no
	// price.
	ToolCalls map[string]money.Micros
	// Searches: every request runs one web search, charged at
	// ToolCalls["web_search"] (OpenAI's search-preview chat models).
	Searches bool
	// ImageTokens prices an image model its vendor bills by token (the GPT
	// image models); zero for the others. On the images endpoints it wins
	// over Images.
	ImageTokens ImageTokenPrice
}

// DefaultTier is the tier every price applies to unless Tiers says
// otherwise.
const DefaultTier = "default"

// TierPrice is the token price of a service tier: the default price for
// "", "auto" and "default" (what the vendor runs a request at unless it is
// asked for another tier), else the tier's entry; ok is false when the
// tier has no price.
func (m ModelPrice) TierPrice(tier string) (TokenPrice, bool) {
	switch tier {
	case "", "auto", DefaultTier:
		return m.Price, true
	}
	p, ok := m.Tiers[tier]
	if !ok {
		return TokenPrice{}, false
	}
	if p.AudioInput == 0 && p.AudioOutput == 0 {
		p.AudioInput, p.AudioOutput = m.Price.AudioInput, m.Price.AudioOutput
	}
	return p, true
}

// ImagePrice is the price of one image of a size and quality ("" matches
// any size or quality).
type ImagePrice struct {
	Size, Quality string
	Price         money.Micros
}

// ImagePrice finds the price of one image of size and quality: an exact
// match first, then an entry that leaves size or quality open.
func (m ModelPrice) ImagePrice(size, quality string) (money.Micros, bool) {
	best, rank := money.Micros(0), 0
	for _, p := range m.Images {
		r := 0
		switch {
		case p.Size == size && p.Quality == quality:
			r = 3
		case p.Size == size && p.Quality == "":
			r = 2
		case p.Size == "" && (p.Quality == quality || p.Quality == ""):
			r = 1
		}
		if r > rank {
			best, rank = p.Price, r
		}
	}
	return best, rank > 0
}

// DefaultMaxOutput is the output reserved for a model whose maximum output
// is unknown and whose request sets no max_tokens.
const DefaultMaxOutput = 16384
