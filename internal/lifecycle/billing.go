package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	chg "github.com/modelgate/modelgate/internal/charge"
	"github.com/modelgate/modelgate/internal/contract"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/route"
	"github.com/modelgate/modelgate/internal/surcharge"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// Charge is one request's billing state: the shared lifecycle
// (internal/charge) and, for chat, the request body its prompt is counted
// from. Every method accepts a nil charge (billing off).
type Charge struct {
	*chg.Charge
	body []byte // chat only: the request, for counting its prompt
	// prompt counts the prompt of a request that is no chat body (a
	// legacy completion's prompt member, AdmitBody's count); nil: body.
	prompt func() int64

	// Plan prices what the request asked for beyond tokens (a service
	// tier, built-in tools, audio); nil: none, the default tier's prices.
	Plan *surcharge.Plan
	// Used is what the vendor's answer showed it used beyond tokens (the
	// Responses API's tool call items), noted before settling.
	Used surcharge.Used
	// BoundTokens is, for a stored Responses answer, the input and output
	// tokens reserved for it (see reserveNative).
	BoundTokens int64
}

// ToolCalls is the max_tool_calls to send upstream because the client set
// none (0: none to send).
func (c *Charge) ToolCalls() int64 {
	if c == nil || c.Plan == nil {
		return 0
	}
	return c.Plan.Calls
}

// Bound is the input and output tokens reserved for a Responses answer (0
// without billing).
func (c *Charge) Bound() int64 {
	if c == nil {
		return 0
	}
	return c.BoundTokens
}

// NoteAnswer notes what a whole Responses object (a plain answer, or a
// stream's final response) says the vendor used beyond tokens; it replaces
// what NoteItem counted.
func (c *Charge) NoteAnswer(obj []byte) {
	if c != nil && c.Plan != nil {
		c.Used = surcharge.Scan(obj)
	}
}

// NoteItem counts an output item a stream showed done, so a stream cut
// short before its final event still pays for the tool calls it made.
func (c *Charge) NoteItem(item []byte) {
	if c != nil && c.Plan != nil {
		c.Used.Add(item)
	}
}

// Payer is who p's requests are charged to.
func Payer(p gate.Principal) billing.Payer {
	return billing.Payer{AccountID: p.AccountID, KeyID: p.KeyID, SpendCap: p.SpendCap}
}

// admit prices the request, refuses prompts that cannot fit the model's
// context window, and reserves the most the request can cost: its prompt
// (bounded from above) and the largest output the upstream request allows,
// after the adapter's own adjustments (see outputBound). Before reserving,
// it counts the same bound of tokens against the key's token limit. It
// sets the request's MaxOutput from the catalog.
func (h *Core) AdmitChat(ctx context.Context, info *reqinfo.Info, p gate.Principal, d route.Deployment, req *provider.ChatRequest, params ChatParams) (*Charge, error) {
	public, upstream, body := req.PublicModel, req.UpstreamModel, req.Body
	cc, err := h.Billing.Start(Payer(p), p.Group, public, upstream, func(mp billing.ModelPrice) bool { return mp.Priced })
	if err != nil {
		return nil, h.NotPriced(public, upstream)
	}
	if cc == nil {
		return nil, nil
	}
	mp := cc.Price
	req.MaxOutput = mp.MaxOutput
	c := &Charge{Charge: cc, body: body}
	counter := c.Tok
	if w := mp.ContextWindow; w > 0 {
		// Counting stops soon after twice the window: enough to refuse, and
		// a 20 MB prompt costs no more than one that barely overflows.
		counter = c.Tok.AtMost(int(min(2*w, 1<<30)))
	}
	// Byte-level BPE tokens are at least one byte long, so a body no longer
	// than the window certainly fits; only longer ones are tokenized.
	if w := mp.ContextWindow; w > 0 && int64(len(body)) > w {
		n, err := promptTokens(counter, body)
		if err != nil {
			return nil, apierr.Internal(err)
		}
		if !c.Tok.Exact() {
			n = n * 9 / 10 // another vendor's tokenizer: refuse only what certainly does not fit
		}
		if n > w {
			return nil, &apierr.Error{Status: http.StatusBadRequest, Type: apierr.TypeInvalidRequest, Code: apierr.CodeContextLength,
				Param: "messages", Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", w, n)}
		}
	}
	if e := OutputLimit(mp, "max_completion_tokens", params.MaxCompletionTokens); e != nil {
		return nil, e
	}
	if e := OutputLimit(mp, "max_tokens", params.MaxTokens); e != nil {
		return nil, e
	}
	if info.Limited.TPM > 0 {
		n := PromptBound(body) + outputBound(mp, d.Chatter, req, max(params.MaxCompletionTokens, params.MaxTokens))*max(params.N, 1)
		if err := h.TakeTokens(info, n); err != nil {
			return nil, err
		}
	}
	if mp.Free {
		return c, nil
	}
	marks := markChat(body)
	Unsized, err := h.Unsized(p, chatUnsized(body, marks))
	if err != nil {
		return nil, err
	}
	if a, ok := chatAsk(mp, params, body, marks); ok {
		if c.Plan, err = surcharge.New(mp, a, h.ImageModels(p)); err != nil {
			return nil, err
		}
	}
	price, fees := c.ReservePrice()
	out := outputBound(mp, d.Chatter, req, max(params.MaxCompletionTokens, params.MaxTokens)) * max(params.N, 1)
	// First try the cheap upper bound (every prompt token is at least one
	// byte); only when the balance cannot cover that, count the prompt.
	amount, err := billing.Cost(price, billing.Tokens{Prompt: PromptBound(body), Completion: out, Fees: fees}, c.Ratio)
	if err == nil {
		err = c.TryReserve(ctx, amount+Unsized)
	}
	if billing.Tighter(err) {
		n, terr := promptTokens(counter, body)
		if terr != nil {
			return nil, apierr.Internal(terr)
		}
		if !c.Tok.Exact() {
			n += n / 4 // another vendor's tokenizer may count more
		}
		amount, err = billing.Cost(price, billing.Tokens{Prompt: n + ImageAllowance(body), Completion: out, Fees: fees}, c.Ratio)
		if err == nil {
			err = c.TryReserve(ctx, amount+Unsized)
		}
	}
	if err != nil {
		return nil, ReserveError(err, amount, "max_tokens")
	}
	return c, nil
}

// Unsized is what a request reserves on top of its body for the input
// named by param that the vendor bills and the gateway cannot size ("":
// none): the group's responses.reserve where the group allows such input,
// else a 400 naming param.
func (h *Core) Unsized(p gate.Principal, param string) (money.Micros, error) {
	if param == "" {
		return 0, nil
	}
	r := h.Policy.Rules(p.Group)
	if !r.AllowUnsized {
		return 0, apierr.Invalid(param, "Invalid '%s': the vendor would bill input this request does not contain (stored at the "+
			"vendor), which the gateway cannot size and so cannot reserve for. Send the content itself; an operator can allow "+
			"such requests for your key's group with a fixed reservation (groups.%s.responses.allow_unsized).", param, p.Group)
	}
	return r.Reserve, nil
}

// ImageModels checks the image model of an image_generation tool as a
// direct call by p would be: the model must be one p's group may use and
// have a price per image.
func (h *Core) ImageModels(p gate.Principal) surcharge.ImageModels {
	return func(model string) (billing.ModelPrice, error) {
		if !h.Router.Has(model) || !h.Policy.Allows(p.Group, model) {
			return billing.ModelPrice{}, apierr.ModelNotFound(model)
		}
		mp, ok := h.Billing.Prices(model, model)
		if !ok || !mp.Free && len(mp.Images) == 0 {
			return billing.ModelPrice{}, h.NotPriced(model, model)
		}
		return mp, nil
	}
}

// outputBound is the most output tokens one choice of the upstream request
// can make: the adapter's own limit when it sets one (Anthropic sends a
// max_tokens raised above the thinking budget), else the client's (the
// larger of max_tokens and max_completion_tokens: a vendor may read
// either), else OutputCeiling.
func outputBound(mp billing.ModelPrice, c provider.Chatter, req *provider.ChatRequest, client int64) int64 {
	if ob, ok := c.(provider.OutputBounder); ok {
		if n := ob.OutputBound(req); n > 0 {
			return n
		}
	}
	if client > 0 {
		return client
	}
	return OutputCeiling(mp)
}

// OutputCeiling is the most output a request that sets no limit can get:
// the model's published output limit; else its context window, which no
// answer can exceed (the catalog's assumed output limit is no bound: the
// vendor's real one may be higher); else the assumed limit, else the
// default.
func OutputCeiling(mp billing.ModelPrice) int64 {
	for _, n := range []int64{mp.OutputLimit, mp.ContextWindow, mp.MaxOutput} {
		if n > 0 {
			return n
		}
	}
	return billing.DefaultMaxOutput
}

// ImageTokens is what one image of a prompt is reserved as: more than
// OpenAI (at most 1,105 for a high-detail image), Anthropic (about 1,600
// for the largest) or Gemini (258) count, since an image sent by URL is
// only a few bytes of the body.
const ImageTokens = 1600

// ImageAllowance is ImageTokens for every "image_url" in body (a chat
// image part names it twice, so it is reserved twice over).
func ImageAllowance(body []byte) int64 {
	return ImageTokens * int64(bytes.Count(body, []byte(`"image_url"`)))
}

// PromptBound is an upper bound of a prompt's tokens: every token is at
// least one byte of the body, and images are counted by ImageAllowance.
func PromptBound(body []byte) int64 {
	return int64(len(body)) + ImageAllowance(body)
}

// OutputLimit refuses a request for more output tokens (n, in param) than
// the model's published limit, with OpenAI's answer; the catalog's assumed
// limits of models whose real one is unknown refuse nothing.
func OutputLimit(mp billing.ModelPrice, param string, n int64) *apierr.Error {
	if mp.OutputLimit > 0 && n > mp.OutputLimit {
		return apierr.Broken(contract.CodeInvalidValue, param,
			"%s is too large: %d. This model supports at most %d completion tokens, whereas you provided %d.", param, n, mp.OutputLimit, n)
	}
	return nil
}

// ReserveError is the client's error for a failed reservation of amount;
// param names what the client can lower. A key's spend cap that is spent
// is said so; one with less left than amount is told as the balance is:
// the request's maximum cost, what is left, and what to lower.
func ReserveError(err error, amount money.Micros, param string) error {
	var short *billing.CapShortError
	switch {
	case errors.Is(err, billing.ErrInsufficient):
		hint := "."
		if param != "" {
			hint = ", or lower " + param + "."
		}
		return Quota("You exceeded your current quota: the account's balance cannot cover this request's maximum cost (" +
			amount.String() + "). Add funds" + hint)
	case errors.As(err, &short):
		hint := "."
		if param != "" {
			hint = ", or lower " + param + "."
		}
		return Quota("You exceeded your current quota: what is left of this API key's spend cap (" + short.Left.String() +
			") cannot cover this request's maximum cost (" + amount.String() + "). Ask for a higher spend cap" + hint)
	case errors.Is(err, billing.ErrKeyCap):
		return Quota("This API key has reached its spend cap.")
	case errors.Is(err, billing.ErrOverflow):
		return apierr.Invalid(param, "The request's maximum cost is too large to reserve; lower %s.", param)
	}
	return apierr.Internal(err)
}

// NotPriced is the 503 for a model the gateway cannot bill (never served
// free by accident); the operator sees why in the log.
func (h *Core) NotPriced(public, upstream string) error {
	h.Logger().Error("model has no price; refusing it (set a price or free: true in the config's models section)",
		"model", public, "upstream_model", upstream)
	return &apierr.Error{Status: http.StatusServiceUnavailable, Type: apierr.TypeServer, Code: apierr.CodeModelNotPriced,
		Message: fmt.Sprintf("The model '%s' is not available: the gateway has no price for it. Ask the operator to configure one.", public)}
}

// StartCharge begins billing a request that is not a chat completion.
// usable reports whether the model's price covers this endpoint (a token
// price for embeddings, image prices for images, ...); a model that is
// neither free nor usable is refused with model_not_priced. The charge is
// nil when billing is off; every charge method accepts nil.
func (h *Core) StartCharge(p gate.Principal, public, upstream string, usable func(billing.ModelPrice) bool) (*Charge, error) {
	cc, err := h.Billing.Start(Payer(p), p.Group, public, upstream, usable)
	if err != nil {
		return nil, h.NotPriced(public, upstream)
	}
	if cc == nil {
		return nil, nil
	}
	return &Charge{Charge: cc}, nil
}

// ChargeError is the client's error for a failure of the charge lifecycle.
func (h *Core) ChargeError(err error) error {
	var np *chg.NotPricedError
	var re *chg.RefusedError
	switch {
	case errors.As(err, &np):
		return h.NotPriced(np.Model, np.Upstream)
	case errors.As(err, &re):
		return ReserveError(re.Err, re.Amount, re.Param)
	}
	return apierr.Internal(err)
}

// Reserve holds amount, the most the request can cost with the group's
// ratio applied; param names what the client can lower to fit. Free models
// hold nothing.
func (c *Charge) Reserve(ctx context.Context, amount money.Micros, param string) error {
	if c == nil {
		return nil
	}
	if err := c.TryReserve(ctx, amount); err != nil {
		return ReserveError(err, max(amount, 1), param)
	}
	return nil
}

// TokenCost is what t costs; free models and no billing cost nothing.
func (c *Charge) TokenCost(t billing.Tokens) (money.Micros, error) {
	if c == nil {
		return 0, nil
	}
	return c.Charge.TokenCost(t)
}

// FlatCost is count units at unit price with the group's ratio applied.
func (c *Charge) FlatCost(unit money.Micros, count int64) (money.Micros, error) {
	if c == nil {
		return 0, nil
	}
	return c.Charge.FlatCost(unit, count)
}

// SettleCost charges cost against the reservation and returns what was
// charged (see chg.Charge.SettleCost).
func (c *Charge) SettleCost(cost money.Micros) money.Micros {
	if c == nil {
		return 0
	}
	return c.Charge.SettleCost(cost)
}

// Held is what the reservation holds (0 without billing).
func (c *Charge) Held() money.Micros {
	if c == nil {
		return 0
	}
	return c.Charge.Held()
}

// Quota is the 429 insufficient_quota of a request the balance or the
// key's spend cap cannot cover.
func Quota(msg string) *apierr.Error {
	return &apierr.Error{Status: http.StatusTooManyRequests, Type: apierr.TypeInsufficientQuota,
		Code: apierr.CodeInsufficientQuota, Message: msg}
}

// promptTokens counts a chat request's prompt with tok.
func promptTokens(tok *tokenize.Tokenizer, body []byte) (int64, error) {
	n, err := tok.ChatPrompt(body)
	if err != nil {
		return 0, fmt.Errorf("count prompt tokens: %w", err)
	}
	return int64(n), nil
}

// Settle charges u (completed from counts when the vendor reported none)
// and returns the cost; a nil charge (no billing) costs nothing.
func (c *Charge) Settle(u *provider.Usage, completion func() int64, out *Outcome) money.Micros {
	return c.SettleUsage(u, func() int64 { return c.promptTokens() }, completion, out)
}

// promptTokens is the gateway's count of the request's prompt.
func (c *Charge) promptTokens() int64 {
	if c.prompt != nil {
		return c.prompt()
	}
	n, _ := promptTokens(c.Tok, c.body)
	return n
}

// SettleUsage charges u at the model's token price; when the vendor
// reported no usage, prompt and completion count it (and the record says
// estimated). Absurd counts charge the reservation, never nothing.
func (c *Charge) SettleUsage(u *provider.Usage, prompt, completion func() int64, out *Outcome) money.Micros {
	if c == nil {
		return 0
	}
	if u.PromptTokens == 0 && u.CompletionTokens == 0 {
		u.PromptTokens, u.CompletionTokens = prompt(), completion()
		out.Estimated = true
	}
	if c.Free() {
		return 0
	}
	cost, err := c.UsageCost(u)
	if err != nil {
		cost = c.Held()
	}
	return c.Charge.SettleCost(cost)
}

// UsageCost is what the vendor's usage u costs: its tokens at the prices
// of the tier the vendor ran the request at (audio tokens at the audio
// prices), and the fees of the tool calls the answer showed.
func (c *Charge) UsageCost(u *provider.Usage) (money.Micros, error) {
	if c.Free() {
		return 0, nil
	}
	used := c.Used
	if used.Tier == "" {
		used.Tier = u.ServiceTier
	}
	used.Searches, used.SearchesCounted = u.WebSearches, u.WebSearchesCounted
	price, fees := c.Price.Price, money.Micros(0)
	if c.Plan != nil {
		price, fees = c.Plan.Settle(used)
	} else if p, ok := c.Price.TierPrice(used.Tier); ok {
		price = p
	}
	return billing.Cost(price, billing.Tokens{Prompt: u.PromptTokens, Cached: u.CachedTokens, Completion: u.CompletionTokens,
		AudioPrompt: u.AudioPromptTokens, AudioCompletion: u.AudioCompletionTokens, Fees: fees}, c.Ratio)
}

// ReservePrice is the token price a request is reserved at and the fees
// it may run up: its plan's, else the model's default tier with none.
func (c *Charge) ReservePrice() (billing.TokenPrice, money.Micros) {
	if c.Plan != nil {
		return c.Plan.Price, c.Plan.Fees
	}
	return c.Price.Price, 0
}

// Release gives the reservation back (the request used nothing billable).
func (c *Charge) Release() {
	if c != nil {
		c.Charge.Release()
	}
}

// Delivered returns the record of a stream's delivered text, or nil
// without billing. text extracts a chunk's generated text (nil: a chat
// chunk's deltas, AddText); a door whose chunks are another format (the
// Anthropic pass-through's events, legacy completions) gives its own.
func (c *Charge) Delivered(text func(s *tokenize.Stream, chunk []byte)) *Delivered {
	if c == nil {
		return nil
	}
	return &Delivered{tok: c.Tok, text: text}
}

// AnswerTokens counts the generated text of a complete chat response.
func (c *Charge) AnswerTokens(body []byte) func() int64 {
	return func() int64 {
		if c == nil {
			return 0
		}
		s := c.Tok.NewStream()
		AddText(s, body, "message")
		return int64(s.Tokens())
	}
}

// AddText feeds the generated text of a chunk or a response to s: the
// content, reasoning_content, refusal and tool call arguments of every
// choice's delta (chunks) or message (responses).
func AddText(s *tokenize.Stream, obj []byte, member string) {
	if s == nil {
		return
	}
	choices, ok := jsonx.Field(obj, "choices")
	if !ok {
		return
	}
	_ = jsonx.EachElement(choices, func(el []byte) bool {
		m, ok := jsonx.Field(el, member)
		if !ok {
			return true
		}
		for _, k := range [...]string{"content", "reasoning_content", "refusal"} {
			if v, ok := jsonx.Field(m, k); ok {
				WriteString(s, v)
			}
		}
		if calls, ok := jsonx.Field(m, "tool_calls"); ok {
			_ = jsonx.EachElement(calls, func(call []byte) bool {
				if fn, ok := jsonx.Field(call, "function"); ok {
					if v, ok := jsonx.Field(fn, "name"); ok {
						WriteString(s, v)
					}
					if v, ok := jsonx.Field(fn, "arguments"); ok {
						WriteString(s, v)
					}
				}
				return true
			})
		}
		return true
	})
}

// WriteString writes the text of a JSON string value (nothing for other values).
func WriteString(s *tokenize.Stream, raw []byte) {
	if len(raw) < 2 || raw[0] != '"' {
		return
	}
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c == '\\' {
			var str string
			if json.Unmarshal(raw, &str) == nil {
				s.Write([]byte(str))
			}
			return
		}
	}
	s.Write(inner)
}
