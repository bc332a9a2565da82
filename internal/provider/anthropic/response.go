package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/anthropicwire"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
	"github.com/modelgate/modelgate/internal/tokenize"
)

// finishReason maps a stop_reason to OpenAI's finish_reason. jsonMode is
// set when a tool_use stood for response_format json_schema.
func finishReason(stop string, jsonMode bool) string {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_use":
		if jsonMode {
			return "stop"
		}
		return "tool_calls"
	case "refusal":
		return "content_filter"
	}
	return "stop" // end_turn, stop_sequence, pause_turn and any new reason
}

// toUsage converts Anthropic's counts: the prompt is every input token,
// cached or not; the web searches are usage.server_tool_use's.
func toUsage(u anthropicwire.Usage) provider.Usage {
	cr := u.CacheReadInputTokens
	in := u.InputTokens + cr + u.CacheCreationInputTokens
	out := u.OutputTokens
	var searches int64
	if u.ServerToolUse != nil {
		searches = u.ServerToolUse.WebSearchRequests
	}
	return provider.Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out, CachedTokens: cr,
		WebSearches: searches, WebSearchesCounted: true}
}

// thinkingTokens is the thinking count u reports (in
// output_tokens_details); ok is false when the answer did not report one.
func thinkingTokens(u *anthropicwire.Usage) (n int64, ok bool) {
	if !u.OutputTokensDetails.HasThinkingTokens() {
		return 0, false
	}
	return u.OutputTokensDetails.ThinkingTokens, true
}

// compact is the compact JSON text of a tool's input, "{}" when absent.
func compact(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// response translates a Message body into a chat.completion; tok (nil:
// none) counts its thinking text as reasoning_tokens. The thinking is
// reasoning_content, and with its signatures (and the redacted thinking)
// thinking_blocks, which a client sends back on the next turn.
func (c *Client) response(body []byte, model, jsonTool string, tok *tokenize.Tokenizer) (*provider.ChatResponse, error) {
	var m anthropicwire.Response
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, provider.BadResponse(c.name, fmt.Errorf("response body: %w", err))
	}
	if v, ok := jsonx.Field(body, "error"); m.Type == "error" || ok && !jsonx.IsNull(v) {
		var e anthropicwire.ErrorBody
		if err := json.Unmarshal(body, &e); err != nil {
			return nil, provider.BadResponse(c.name, fmt.Errorf("response body: %w", err))
		}
		return nil, eventError(c.name, c.secrets, e)
	}
	if m.ID == "" {
		return nil, provider.BadResponse(c.name, errors.New("response has no message id"))
	}
	var text, reasoning strings.Builder
	var calls []oaiwire.ToolCall
	var blocks []oaiwire.ThinkingBlock // the signed thinking, for the next turn
	thought := reasoningCount{tok: tok}
	jsonMode := false
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			reasoning.WriteString(b.Thinking)
			thought.add(b.Thinking)
			text := b.Thinking
			blocks = append(blocks, oaiwire.ThinkingBlock{Type: "thinking", Thinking: &text, Signature: b.Signature})
		case "redacted_thinking":
			blocks = append(blocks, oaiwire.ThinkingBlock{Type: "redacted_thinking", Data: b.Data})
		case "tool_use":
			if jsonTool != "" && b.Name == jsonTool {
				jsonMode = true
				text.WriteString(compact(b.Input))
				continue
			}
			calls = append(calls, oaiwire.ToolCall{ID: b.ID, Type: "function",
				Function: oaiwire.FunctionCall{Name: b.Name, Arguments: compact(b.Input)}})
		}
	}
	msg := oaiwire.RespMessage{Role: "assistant", ReasoningContent: reasoning.String(), ThinkingBlocks: blocks, ToolCalls: calls}
	if text.Len() > 0 || len(calls) == 0 {
		s := text.String()
		msg.Content = &s
	}
	u := thought.usage(m.Usage)
	out := oaiwire.Response{
		ID: "chatcmpl-" + m.ID, Object: "chat.completion", Created: c.now().Unix(), Model: model,
		Choices: []oaiwire.Choice{{Index: 0, Message: msg, FinishReason: finishReason(string(m.StopReason), jsonMode && len(calls) == 0)}},
		Usage:   oaiwire.NewUsage(u),
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("anthropic %s: encode response: %w", c.name, err)
	}
	return &provider.ChatResponse{Body: b, Usage: u, HasUsage: true}, nil
}
