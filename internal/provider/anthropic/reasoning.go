package anthropic

import (
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/anthropicwire"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// reasoningCount counts the thinking text the adapter delivers as
// reasoning_content, for usage.completion_tokens_details.reasoning_tokens
// when the answer does not say itself: Anthropic bills thinking as part
// of output_tokens, and reports how much of it was thinking
// (usage.output_tokens_details.thinking_tokens, in a Message and in a
// stream's message_delta) only on newer models; that figure wins (see
// reasoningTokens), the count is the fallback.
//
// Both a complete Message and a stream feed the same bounded counter
// (tokenize.Stream), block by block or delta by delta, so the same answer
// gives the same figure either way however its deltas were cut (exactly,
// unless 16 KiB of thinking arrive without a single word break; see
// tokenize.Stream), and a long stream's thinking is never held in memory
// to be counted. redacted_thinking blocks carry no readable text and count
// nothing, though Anthropic bills them in output_tokens.
//
// The zero value (no tokenizer configured) counts nothing.
type reasoningCount struct {
	tok *tokenize.Tokenizer
	s   *tokenize.Stream // made on the first thinking text
}

// tokenizer is the tokenizer the catalog names for req's model, or nil
// when the client was built without Options.Tokenizer.
func (c *Client) tokenizer(req *provider.ChatRequest) *tokenize.Tokenizer {
	if c.tokens == nil {
		return nil
	}
	return c.tokens(req.PublicModel, req.UpstreamModel)
}

// add counts text, the next piece of thinking delivered to the client.
func (r *reasoningCount) add(text string) {
	if r.tok == nil || text == "" {
		return
	}
	if r.s == nil {
		r.s = r.tok.NewStream()
	}
	r.s.Write([]byte(text))
}

// apply sets u.ReasoningTokens to the thinking counted so far, never more
// than the vendor's completion tokens (which include the thinking and stay
// the figure billed).
func (r *reasoningCount) apply(u provider.Usage) provider.Usage {
	if r.s == nil {
		return u
	}
	u.ReasoningTokens = min(int64(r.s.Tokens()), u.CompletionTokens)
	return u
}

// usage converts the vendor's usage w: its thinking_tokens as the
// reasoning tokens when it reports them, else the thinking counted.
func (r *reasoningCount) usage(w anthropicwire.Usage) provider.Usage {
	u := toUsage(w)
	if n, ok := thinkingTokens(&w); ok {
		u.ReasoningTokens = min(max(n, 0), u.CompletionTokens)
		return u
	}
	return r.apply(u)
}
