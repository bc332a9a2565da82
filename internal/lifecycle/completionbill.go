package lifecycle

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/gate"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider/completechat"
	"github.com/modelgate/modelgate/internal/reqinfo"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// AdmitCompletion prices a legacy completion request, refuses a prompt that
// cannot fit the model's context window, and reserves the most the request
// can cost: every prompt token (bounded by the body's length, or counted
// when the balance cannot cover that bound) plus max_tokens for each choice
// (max(n, best_of) per prompt). Without max_tokens, a pass-through request
// reserves the model's output limit, since the vendor applies its own
// default (OpenAI's is 16, but not every vendor's); a translated one
// reserves completechat.DefaultMaxTokens, which it sends.
func (h *Core) AdmitCompletion(ctx context.Context, info *reqinfo.Info, p gate.Principal, public, upstream string, body []byte,
	params CompletionParams, passthrough bool) (*Charge, error) {
	// A model the catalog knows for another endpoint is refused as such,
	// whether or not it has a token price.
	c, err := h.StartCharge(p, public, upstream, func(mp billing.ModelPrice) bool { return mp.Priced || !completionModality(mp.Modality) })
	if c == nil || err != nil {
		return c, err
	}
	prompt := params.Prompt
	c.prompt = func() int64 {
		n, _ := CountPrompts(c.Tok, prompt)
		return n
	}
	if !completionModality(c.Price.Modality) {
		return nil, apierr.Invalid("model", "The model '%s' does not support completions (it is a model for %s).", public, c.Price.Modality)
	}
	counter := c.Tok
	if w := c.Price.ContextWindow; w > 0 {
		counter = c.Tok.AtMost(int(min(2*w, 1<<30)))
		// As for chat: a body no longer than the window certainly fits.
		if int64(len(body)) > w {
			_, largest := CountPrompts(counter, params.Prompt)
			if !c.Tok.Exact() {
				largest = largest * 9 / 10
			}
			if largest > w {
				return nil, &apierr.Error{Status: http.StatusBadRequest, Type: apierr.TypeInvalidRequest, Code: apierr.CodeContextLength,
					Param: "prompt", Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, your prompt resulted in %d tokens. Please reduce the length of the prompt.", w, largest)}
			}
		}
	}
	if params.HasMaxTokens {
		if e := OutputLimit(c.Price, "max_tokens", params.MaxTokens); e != nil {
			return nil, e
		}
	}
	out := params.MaxTokens
	switch {
	case params.HasMaxTokens:
	case !passthrough:
		out = completechat.DefaultMaxTokens
	default:
		out = OutputCeiling(c.Price) // the vendor's default applies: not every vendor's is 16
	}
	out = completionMul(completionMul(out, max(params.N, params.BestOf, 1)), params.Prompts)
	// The key's token limit counts the same bound, before the reservation.
	if err := h.TakeTokens(info, int64(len(body))+out); err != nil {
		return nil, err
	}
	if c.Price.Free {
		return c, nil
	}
	amount, err := billing.Cost(c.Price.Price, billing.Tokens{Prompt: int64(len(body)), Completion: out}, c.Ratio)
	if err == nil {
		err = c.TryReserve(ctx, amount)
	}
	if billing.Tighter(err) {
		n, _ := CountPrompts(counter, params.Prompt)
		if !c.Tok.Exact() {
			n += n / 4 // another vendor's tokenizer may count more
		}
		amount, err = billing.Cost(c.Price.Price, billing.Tokens{Prompt: n, Completion: out}, c.Ratio)
		if err == nil {
			err = c.TryReserve(ctx, amount)
		}
	}
	if err != nil {
		return nil, ReserveError(err, amount, "max_tokens")
	}
	return c, nil
}

// completionModality reports whether a catalog modality generates text ("" is
// a model the operator configured without one).
func completionModality(m string) bool {
	switch m {
	case "embedding", "image", "audio", "video":
		return false
	}
	return true
}

// completionMul is a×b for non-negative counts, saturating at 2^62 (a reservation
// that large fails as an overflow, not as a wrapped small number).
func completionMul(a, b int64) int64 {
	const limit = 1 << 62
	if b != 0 && a > limit/b {
		return limit
	}
	return a * b
}

// CountPrompts counts the tokens of a completion's prompt member (a string,
// strings, token ids or token-id arrays; token ids count one each) and
// returns the total and the largest single prompt.
func CountPrompts(tok *tokenize.Tokenizer, raw []byte) (total, largest int64) {
	add := func(n int64) {
		total += n
		largest = max(largest, n)
	}
	switch jsonx.Kind(raw) {
	case "string":
		add(int64(tok.Count(promptText(raw))))
	case "array":
		var ids int64
		_ = jsonx.EachElement(raw, func(el []byte) bool {
			switch jsonx.Kind(el) {
			case "string":
				add(int64(tok.Count(promptText(el))))
			case "number":
				ids++
			case "array":
				var n int64
				_ = jsonx.EachElement(el, func([]byte) bool { n++; return true })
				add(n)
			}
			return true
		})
		if ids > 0 {
			add(ids)
		}
	}
	return total, largest
}

// promptText is the text of a JSON string value.
func promptText(raw []byte) []byte {
	if len(raw) < 2 || raw[0] != '"' {
		return nil
	}
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c == '\\' {
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return nil
			}
			return []byte(s)
		}
	}
	return inner
}

// CompletionTokens counts the generated text of a complete text_completion.
func (c *Charge) CompletionTokens(body []byte) func() int64 {
	return func() int64 {
		s := c.Tok.NewStream()
		AddCompletionText(s, body)
		return int64(s.Tokens())
	}
}

// AddCompletionText feeds choices[].text of a text_completion object or
// chunk to s.
func AddCompletionText(s *tokenize.Stream, obj []byte) {
	choices, ok := jsonx.Field(obj, "choices")
	if !ok {
		return
	}
	_ = jsonx.EachElement(choices, func(el []byte) bool {
		if v, ok := jsonx.Field(el, "text"); ok {
			WriteString(s, v)
		}
		return true
	})
}
