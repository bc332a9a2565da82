// Package surcharge prices what a vendor charges for a request outside its
// model's standard token prices: built-in tools the vendor runs (web
// search per call, image generation per image through the image model's
// own price), service tiers with their own token prices (OpenAI's
// priority and flex) and audio tokens of chat models that hear or speak.
//
// At admission New turns what a request asks for (an Ask) into a Plan: the
// token price to reserve at, the most the fees can come to, or a refusal
// naming the parameter the catalog has no price for, so nothing the
// gateway cannot price reaches a vendor. At settlement the Plan prices what
// the vendor's answer says it used (Used: the tier it ran at, the tool
// calls among its output items). Every front door shares it; it holds no
// HTTP types beyond the client error it refuses with.
package surcharge

import (
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/money"
)

// DefaultMaxToolCalls bounds the built-in tool calls of a request that
// sets no max_tool_calls: the gateway sends it upstream, so the fees a
// request can run up are known before it starts (see Plan.Calls).
const DefaultMaxToolCalls = 10

// imageGeneration is the built-in tool that generates images with an
// image model of its own (gpt-image-1 unless the tool names another).
const (
	imageGeneration   = "image_generation"
	defaultImageModel = "gpt-image-1"
)

// Tool is a built-in tool a request offers the model (function and custom
// tools are the client's own and are not listed).
type Tool struct {
	Param string // where the request names its type: "tools[2].type"
	Type  string // as sent: "web_search", "web_search_2025_08_26", "mcp", ...
	// Model, Size and Quality are image_generation's own ("" when not
	// given: gpt-image-1, auto, auto).
	Model, Size, Quality string
}

// Ask is what a request asks for beyond tokens.
type Ask struct {
	Tier  string // service_tier as sent; "" when absent
	Tools []Tool
	// MaxToolCalls is the client's max_tool_calls (0 when absent).
	MaxToolCalls int64
	// DefaultCalls replaces DefaultMaxToolCalls when positive (the
	// operator's setting).
	DefaultCalls int64
	// SearchOptions is chat's web_search_options: one web search.
	SearchOptions bool
	// Choices is chat's n (0 or 1: one answer), for models that search
	// on every request.
	Choices int64
	// AudioIn names the first audio input of the request ("" none);
	// AudioOut names the parameter that asks for spoken output.
	AudioIn, AudioOut string
}

// ImageModels prices the image model an image_generation tool uses, as a
// direct call of the key would be checked: an error (the model is not the
// key's to use, or has no price) refuses the request.
type ImageModels func(model string) (billing.ModelPrice, error)

// Plan is an admitted request's surcharges.
type Plan struct {
	// Price is the token price the request is reserved at: its tier's,
	// raised to the audio prices where it hears or speaks.
	Price billing.TokenPrice
	// Fees is the most the request's tool calls can cost (list price).
	Fees money.Micros
	// Calls is the max_tool_calls to send upstream because the client set
	// none (0: the body is left as it is).
	Calls int64

	mp    billing.ModelPrice
	tier  string                  // the tier asked for ("" default)
	items map[string]money.Micros // output item type → price of one
	image []imageTool             // the image_generation tools offered
	fixed money.Micros            // fees charged whatever the answer (searching models)
	// search is the price of one web search web_search_options asks of a
	// vendor that counts its searches (0: none asked, or a model that
	// searches on every request): the count replaces fixed (see Settle).
	search money.Micros
}

// imageTool is an image_generation tool's model price and requested
// size and quality.
type imageTool struct {
	price         billing.ModelPrice
	size, quality string
}

// New plans the surcharges of a request for a model priced mp. It refuses,
// naming the parameter, a tier, tool or audio the catalog has no price
// for; a request without surcharges gets the model's default price and no
// fees.
func New(mp billing.ModelPrice, ask Ask, images ImageModels) (*Plan, error) {
	p := &Plan{mp: mp, Price: mp.Price}
	if e := p.planTier(ask.Tier); e != nil {
		return nil, e
	}
	if ask.AudioIn != "" {
		if mp.Price.AudioInput <= 0 {
			return nil, apierr.Invalid(ask.AudioIn, "This model cannot be sent audio through the gateway: it has no price for audio input tokens.")
		}
		p.Price.Input = max(p.Price.Input, mp.Price.AudioInput)
	}
	if ask.AudioOut != "" {
		if mp.Price.AudioOutput <= 0 {
			return nil, apierr.Invalid(ask.AudioOut, "This model cannot answer with audio through the gateway: it has no price for audio output tokens.")
		}
		p.Price.Output = max(p.Price.Output, mp.Price.AudioOutput)
	}
	if e := p.planSearch(ask); e != nil {
		return nil, e
	}
	if err := p.planTools(ask, images); err != nil {
		return nil, err
	}
	return p, nil
}

// planTier prices the tier asked for. A tier other than the default must
// have a price; the reservation takes, part by part, the dearer of it and
// the default, since a vendor may run the request at its default tier
// instead (OpenAI downgrades priority past its limits).
func (p *Plan) planTier(tier string) error {
	tp, ok := p.mp.TierPrice(tier)
	if !ok {
		return apierr.Invalid("service_tier", "The service tier '%s' is not available for this model through the gateway: "+
			"it has no price for it. Omit service_tier or use 'auto' or 'default'.", tier)
	}
	if tier == "auto" || tier == billing.DefaultTier {
		tier = ""
	}
	p.tier = tier
	d := p.mp.Price
	p.Price = billing.TokenPrice{Input: max(tp.Input, d.Input), Output: max(tp.Output, d.Output),
		CachedInput: max(tp.CachedInput, d.CachedInput), AudioInput: d.AudioInput, AudioOutput: d.AudioOutput}
	return nil
}

// planSearch prices chat's web search: web_search_options, or a model
// that searches on every request. A model that searches on every request
// pays one search per choice; web_search_options on another model pays
// the searches its vendor reports (Anthropic's web search tool and
// Gemini's grounding search as often as the model wants, up to the tool
// calls bound the reservation covers), or one per choice when the vendor
// does not count them.
func (p *Plan) planSearch(ask Ask) error {
	if !ask.SearchOptions && !p.mp.Searches {
		return nil
	}
	price, ok := p.mp.ToolCalls["web_search"]
	if !ok {
		return apierr.Invalid("web_search_options", "Web search is not available for this model through the gateway: it has no price for it.")
	}
	p.fixed = money.Micros(max(ask.Choices, 1)) * price
	if p.mp.Searches {
		p.Fees += p.fixed
		return nil
	}
	p.search = price
	calls := ask.MaxToolCalls
	if calls <= 0 {
		calls = ask.DefaultCalls
	}
	if calls <= 0 {
		calls = DefaultMaxToolCalls
	}
	fees, err := billing.Scale(price, max(calls, max(ask.Choices, 1)), money.PPM)
	if err != nil {
		return apierr.Invalid("max_tool_calls", "max_tool_calls is too large to reserve for; lower it.")
	}
	p.Fees += fees
	return nil
}

// planTools prices the built-in tools offered: each must have a price
// (image_generation through its image model), and the fees are bounded by
// max_tool_calls calls of the dearest.
func (p *Plan) planTools(ask Ask, images ImageModels) error {
	if len(ask.Tools) == 0 {
		return nil
	}
	p.items = make(map[string]money.Micros, len(ask.Tools))
	var dearest money.Micros
	for _, t := range ask.Tools {
		kind := Normalize(t.Type)
		if kind == imageGeneration {
			it, price, err := p.imageTool(t, images)
			if err != nil {
				return err
			}
			p.image = append(p.image, it)
			dearest = max(dearest, price)
			continue
		}
		price, ok := p.mp.ToolCalls[kind]
		if !ok {
			return apierr.Invalid(t.Param, "The tool type '%s' is not available through the gateway for this model: "+
				"the gateway has no price for what the vendor charges for it, and does not pass on what it cannot bill.", t.Type)
		}
		item := ItemType(kind)
		p.items[item] = max(p.items[item], price)
		dearest = max(dearest, price)
	}
	calls := ask.MaxToolCalls
	if calls <= 0 {
		calls = ask.DefaultCalls
		if calls <= 0 {
			calls = DefaultMaxToolCalls
		}
		p.Calls = calls
	}
	fees, err := billing.Scale(dearest, calls, money.PPM)
	if err != nil {
		return apierr.Invalid("max_tool_calls", "max_tool_calls is too large to reserve for; lower it.")
	}
	p.Fees += fees
	return nil
}

// imageTool checks an image_generation tool's model like a direct call
// and returns it with the most one of its images can cost.
func (p *Plan) imageTool(t Tool, images ImageModels) (imageTool, money.Micros, error) {
	model := t.Model
	if model == "" {
		model = defaultImageModel
	}
	mp, err := images(model)
	if err != nil {
		ae := apierr.From(err)
		if ae.Status != http.StatusNotFound && ae.Status != http.StatusBadRequest && ae.Status != http.StatusServiceUnavailable {
			return imageTool{}, 0, err
		}
		// Refused as a direct call would be, but as the parameter it is.
		return imageTool{}, 0, apierr.Invalid(strings.TrimSuffix(t.Param, ".type")+".model",
			"The image_generation tool cannot use the model '%s': %s", model, ae.Message)
	}
	it := imageTool{price: mp, size: t.Size, quality: t.Quality}
	price, ok := it.imagePrice(t.Size, t.Quality)
	if !ok {
		return imageTool{}, 0, apierr.Invalid(strings.TrimSuffix(t.Param, ".type")+".size",
			"The image model '%s' has no price for images of size '%s' and quality '%s'.", model, or(t.Size, "auto"), or(t.Quality, "auto"))
	}
	return it, price, nil
}

// imagePrice is one image's list price at size and quality; "auto" or ""
// (the vendor picks) is priced at the dearest it may pick.
func (it imageTool) imagePrice(size, quality string) (money.Micros, bool) {
	if it.price.Free {
		return 0, true
	}
	auto := func(s string) bool { return s == "" || s == "auto" }
	var best money.Micros
	found := false
	for _, ip := range it.price.Images {
		if (auto(size) || ip.Size == size || ip.Size == "") && (auto(quality) || ip.Quality == quality || ip.Quality == "") {
			best, found = max(best, ip.Price), true
		}
	}
	return best, found
}

// Settle prices what the answer says the vendor used: the token price of
// the tier it ran at (the reserved tier's when it names none, or one the
// catalog has no price for), and the fees of its tool calls at list price.
func (p *Plan) Settle(u Used) (billing.TokenPrice, money.Micros) {
	price, ok := p.mp.TierPrice(u.Tier)
	if u.Tier == "" || !ok {
		price, _ = p.mp.TierPrice(p.tier)
	}
	fees := p.fixed
	if u.SearchesCounted && p.search > 0 {
		fees = money.Micros(u.Searches) * p.search
	}
	for item, n := range u.Calls {
		fees += money.Micros(n) * p.items[item]
	}
	for _, img := range u.Images {
		fees += p.imageFee(img)
	}
	return price, fees
}

// imageFee is one generated image's list price: by the size and quality
// the vendor reports, else the dearest the tools offered allow.
func (p *Plan) imageFee(img Image) money.Micros {
	var fee money.Micros
	for _, it := range p.image {
		size, quality := or(img.Size, it.size), or(img.Quality, it.quality)
		if f, ok := it.imagePrice(size, quality); ok {
			fee = max(fee, f)
		} else if f, ok := it.imagePrice(it.size, it.quality); ok {
			fee = max(fee, f)
		}
	}
	return fee
}

// Normalize is a tool type without its date ("web_search_2025_08_26" is
// "web_search"), the name the catalog prices it by.
func Normalize(typ string) string {
	// A date suffix is _YYYY_MM_DD: 11 characters.
	if n := len(typ); n > 11 && typ[n-11] == '_' && typ[n-6] == '_' && typ[n-3] == '_' && digits(typ[n-10:n-6]+typ[n-5:n-3]+typ[n-2:]) {
		return typ[:n-11]
	}
	return typ
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ItemType is the type of the output item a call of the built-in tool kind
// leaves in the answer: web_search (and web_search_preview) leave
// web_search_call items, computer_use_preview computer_call ones, the
// others kind + "_call".
func ItemType(kind string) string {
	switch kind {
	case "web_search_preview":
		return "web_search_call"
	case "computer_use_preview", "computer_use":
		return "computer_call"
	}
	return kind + "_call"
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
