package gemini

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

// finishReason maps Gemini's finishReason to OpenAI's. Safety-like stops
// become content_filter; MALFORMED_FUNCTION_CALL, OTHER, the unspecified
// value and reasons added later become stop, since OpenAI has nothing
// closer. calls reports whether the choice called a tool: a STOP then is
// tool_calls, as OpenAI says.
func finishReason(r string, calls bool) string {
	switch r {
	case "MAX_TOKENS":
		return "length"
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
		"IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "LANGUAGE":
		return "content_filter"
	}
	if calls {
		return "tool_calls"
	}
	return "stop"
}

// usage converts usageMetadata: thoughts count as completion tokens, as
// OpenAI counts reasoning tokens.
func usage(m *usageMetadata) provider.Usage {
	if m == nil {
		return provider.Usage{}
	}
	u := provider.Usage{PromptTokens: m.PromptTokenCount, CompletionTokens: m.CandidatesTokenCount + m.ThoughtsTokenCount,
		CachedTokens: m.CachedContentTokenCount, ReasoningTokens: m.ThoughtsTokenCount}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// searches counts the web searches an answer (or stream event) reports:
// the grounding queries of every candidate; ok is false when none reports
// grounding metadata.
func searches(gr *genResponse) (n int64, ok bool) {
	for _, cd := range gr.Candidates {
		if g := cd.GroundingMetadata; g != nil {
			n, ok = n+int64(len(g.WebSearchQueries)), true
		}
	}
	return n, ok
}

// sigMark joins a function call's id and its thoughtSignature in the tool
// call id the client sees. Gemini 3 rejects a replayed function call
// without the signature it issued, and OpenAI clients send tool call ids
// back verbatim, so the id carries it there and back ("~" is in neither
// base64 alphabet nor the ids this package makes).
const sigMark = "~sig~"

// split sorts a candidate's parts into answer text, thought text and
// function call parts.
func split(c *content) (text, thought string, calls []*part) {
	if c == nil {
		return "", "", nil
	}
	var t, th strings.Builder
	for i := range c.Parts {
		p := &c.Parts[i]
		switch {
		case p.FunctionCall != nil:
			calls = append(calls, p)
		case p.Thought:
			th.WriteString(p.Text)
		default:
			t.WriteString(p.Text)
		}
	}
	return t.String(), th.String(), calls
}

// toolCall converts one function call part; ids are Gemini's when it sent
// one, with the part's thoughtSignature appended (see sigMark) and in
// extra_content.google.thought_signature, Gemini's own convention.
func (c *Client) toolCall(p *part, index *int) oaiwire.ToolCall {
	fc := p.FunctionCall
	id := fc.ID
	if id == "" {
		id = c.newID("call_")
	}
	if p.ThoughtSignature != "" {
		id += sigMark + p.ThoughtSignature
	}
	args := "{}"
	var buf bytes.Buffer
	if len(fc.Args) > 0 && json.Compact(&buf, fc.Args) == nil && buf.String() != "null" {
		args = buf.String()
	}
	return oaiwire.ToolCall{Index: index, ID: id, Type: "function", Function: oaiwire.FunctionCall{Name: fc.Name, Arguments: args},
		ExtraContent: extraContent(p.ThoughtSignature)}
}

// googleExtra is a tool call's extra_content in Gemini's OpenAI-compatible
// convention: the thought signature the call must come back with.
type googleExtra struct {
	Google struct {
		ThoughtSignature string `json:"thought_signature"`
	} `json:"google"`
}

// extraContent is the extra_content carrying sig (nil for none).
func extraContent(sig string) json.RawMessage {
	if sig == "" {
		return nil
	}
	var e googleExtra
	e.Google.ThoughtSignature = sig
	b, _ := json.Marshal(e)
	return b
}

// thoughtSignature is the signature a replayed tool call carries: in its
// extra_content (Gemini's convention), else in its id (see sigMark).
func thoughtSignature(tc oaiwire.ToolCall) string {
	var e googleExtra
	if len(tc.ExtraContent) > 0 && json.Unmarshal(tc.ExtraContent, &e) == nil && e.Google.ThoughtSignature != "" {
		return e.Google.ThoughtSignature
	}
	_, sig, _ := strings.Cut(tc.ID, sigMark)
	return sig
}

// responseID is the chat.completion id for a Gemini responseId.
func (c *Client) responseID(rid string) string {
	if rid == "" {
		return c.newID("chatcmpl-")
	}
	return "chatcmpl-" + rid
}

// toOpenAI builds the chat.completion for a whole Gemini answer. A prompt
// blocked before any candidate (promptFeedback.blockReason) becomes one
// empty choice with finish_reason content_filter, as OpenAI reports its own
// filtered prompts in streams; the client sees why in the finish reason.
func (c *Client) toOpenAI(gr *genResponse, model string) (*oaiwire.Response, provider.Usage) {
	out := &oaiwire.Response{ID: c.responseID(gr.ResponseID), Object: "chat.completion", Created: c.now().Unix(),
		Model: model, Choices: []oaiwire.Choice{}}
	cands := append([]candidate(nil), gr.Candidates...)
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Index < cands[j].Index })
	for _, cd := range cands {
		text, thought, calls := split(cd.Content)
		ch := oaiwire.Choice{Index: cd.Index, Message: oaiwire.RespMessage{Role: "assistant", ReasoningContent: thought},
			FinishReason: finishReason(cd.FinishReason, len(calls) > 0)}
		if text != "" || len(calls) == 0 {
			ch.Message.Content = &text
		}
		for _, fc := range calls {
			ch.Message.ToolCalls = append(ch.Message.ToolCalls, c.toolCall(fc, nil))
		}
		out.Choices = append(out.Choices, ch)
	}
	if len(out.Choices) == 0 {
		empty := ""
		out.Choices = append(out.Choices, oaiwire.Choice{Message: oaiwire.RespMessage{Role: "assistant", Content: &empty},
			FinishReason: "content_filter"})
	}
	u := usage(gr.UsageMetadata)
	u.WebSearches, _ = searches(gr)
	u.WebSearchesCounted = true
	if gr.UsageMetadata != nil {
		out.Usage = oaiwire.NewUsage(u)
	}
	return out, u
}
