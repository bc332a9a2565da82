package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/anthropicwire"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

// chatAnswer is the part of a chat.completion the translation reads.
type chatAnswer struct {
	Choices []struct {
		Message struct {
			Content          json.RawMessage `json:"content"` // a string, or an array of text parts
			ReasoningContent string          `json:"reasoning_content"`
			Reasoning        string          `json:"reasoning"` // what some vendors call it
			Refusal          string          `json:"refusal"`
			ToolCalls        []struct {
				ID       string               `json:"id"`
				Function oaiwire.FunctionCall `json:"function"`
			} `json:"tool_calls"`
			FunctionCall *oaiwire.FunctionCall `json:"function_call"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage `json:"usage"`
}

// chatUsage is a chat answer's usage.
type chatUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u *chatUsage) usage() provider.Usage {
	p := provider.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens,
		TotalTokens: u.PromptTokens + u.CompletionTokens}
	if d := u.PromptTokensDetails; d != nil {
		p.CachedTokens = d.CachedTokens
	}
	if d := u.CompletionTokensDetails; d != nil {
		p.ReasoningTokens = d.ReasoningTokens
	}
	return p
}

// messageUsage is a Message's usage for the upstream's counts: input
// tokens without the cached ones, which are cache reads; the reasoning
// part of the output as thinking_tokens when there is one.
func messageUsage(u provider.Usage) anthropicwire.Usage {
	m := anthropicwire.Usage{InputTokens: max(u.PromptTokens-u.CachedTokens, 0), CacheReadInputTokens: u.CachedTokens,
		OutputTokens: u.CompletionTokens}
	if u.ReasoningTokens > 0 {
		m.OutputTokensDetails = &anthropicwire.OutputTokensDetails{ThinkingTokens: u.ReasoningTokens}
	}
	return m
}

// stopReason maps a chat finish_reason to Anthropic's stop_reason.
func stopReason(finish string) string {
	switch finish {
	case "length":
		return anthropicwire.StopMaxTokens
	case "tool_calls", "function_call":
		return anthropicwire.StopToolUse
	case "content_filter":
		return anthropicwire.StopRefusal
	}
	return anthropicwire.StopEndTurn // stop, and any reason Anthropic has no word for
}

// badAnswer is the 502 for a chat answer that cannot be translated.
func badAnswer(err error) *apierr.Error {
	return &apierr.Error{Status: http.StatusBadGateway, Type: apierr.TypeServer, Code: apierr.CodeBadUpstreamResponse,
		Message: "The upstream provider sent a malformed response.", Err: fmt.Errorf("chat answer to Message: %w", err)}
}

// fromChat translates a chat.completion into a Message answering for
// publicModel: reasoning_content becomes a thinking block (no signature),
// the text a text block, each tool call a tool_use block whose input is
// the parsed arguments. Its errors are *apierr.Error (502).
func fromChat(chat []byte, publicModel string) ([]byte, error) {
	var a chatAnswer
	if err := json.Unmarshal(chat, &a); err != nil {
		return nil, badAnswer(err)
	}
	if len(a.Choices) == 0 {
		return nil, badAnswer(errors.New("no choices"))
	}
	c := &a.Choices[0]
	msg := &c.Message
	m := anthropicwire.Response{ID: oaiwire.NewID("msg_"), Model: publicModel, StopReason: anthropicwire.NullString(stopReason(c.FinishReason))}
	reasoning := msg.ReasoningContent
	if reasoning == "" {
		reasoning = msg.Reasoning
	}
	if reasoning != "" {
		m.Content = append(m.Content, anthropicwire.ResponseBlock{Type: anthropicwire.BlockThinking, Thinking: reasoning})
	}
	text, err := answerText(msg.Content)
	if err != nil {
		return nil, badAnswer(err)
	}
	if text == "" && msg.Refusal != "" {
		text = msg.Refusal
	}
	if text != "" {
		m.Content = append(m.Content, anthropicwire.ResponseBlock{Type: anthropicwire.BlockText, Text: text})
	}
	truncated := c.FinishReason == "length"
	for i, tc := range msg.ToolCalls {
		b, err := toolUse(tc.ID, tc.Function, truncated)
		if err != nil {
			return nil, badAnswer(fmt.Errorf("tool_calls[%d]: %w", i, err))
		}
		m.Content = append(m.Content, b)
	}
	if fc := msg.FunctionCall; fc != nil && len(msg.ToolCalls) == 0 {
		b, err := toolUse("", *fc, truncated)
		if err != nil {
			return nil, badAnswer(fmt.Errorf("function_call: %w", err))
		}
		m.Content = append(m.Content, b)
	}
	if a.Usage != nil {
		m.Usage = messageUsage(a.Usage.usage())
	}
	return m.AppendJSON(make([]byte, 0, len(chat)+256)), nil
}

// answerText is a message's content: a string, null, or an array of parts
// whose text parts are joined.
func answerText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content: %w", err)
	}
	var s string
	for _, p := range parts {
		if p.Type == "text" {
			s += p.Text
		}
	}
	return s, nil
}

// toolUse is the tool_use block of a tool call: its arguments, a JSON
// object, are the input ("" is {}). Arguments that are not an object are
// an error, unless the answer was cut at its length limit (then {}).
func toolUse(id string, f oaiwire.FunctionCall, truncated bool) (anthropicwire.ResponseBlock, error) {
	if id == "" {
		id = oaiwire.NewID("toolu_")
	}
	b := anthropicwire.ResponseBlock{Type: anthropicwire.BlockToolUse, ID: id, Name: f.Name, Input: json.RawMessage("{}")}
	args := bytes.TrimSpace([]byte(f.Arguments))
	if len(args) == 0 {
		return b, nil
	}
	if args[0] != '{' || !json.Valid(args) {
		if truncated {
			return b, nil
		}
		return b, fmt.Errorf("arguments of %q are not a JSON object", f.Name)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, args); err != nil {
		return b, fmt.Errorf("arguments of %q: %w", f.Name, err)
	}
	b.Input = buf.Bytes()
	return b, nil
}
