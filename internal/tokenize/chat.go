package tokenize

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Constants of OpenAI's chat token accounting (openai-cookbook, "How to
// count tokens with tiktoken", num_tokens_from_messages).
const (
	tokensPerMessage = 3  // <|start|>{role}<|message|>...<|end|>
	tokensPerName    = 1  // extra token when a message has a name
	tokensReply      = 3  // every reply is primed with <|start|>assistant<|message|>
	tokensPerImage   = 85 // an image part at detail "low"
)

// errNoMessages is returned for a body without a messages array.
var errNoMessages = errors.New("tokenize: chat request has no messages")

// chatRequest holds the parts of a chat completion request that are billed
// as prompt tokens.
type chatRequest struct {
	Messages  []map[string]json.RawMessage `json:"messages"`
	Tools     []json.RawMessage            `json:"tools"`
	Functions []json.RawMessage            `json:"functions"` // deprecated form of tools
}

// contentPart is one element of an array-valued message content.
type contentPart struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Refusal string `json:"refusal"`
}

// ChatPrompt counts the prompt tokens of an OpenAI chat completion request
// body the way OpenAI bills them, following the OpenAI cookbook rule:
//
//   - every message costs 3 tokens, plus the tokens of each of its string
//     fields (role, content, name, tool_call_id, ...), plus 1 more when it
//     has a name;
//   - content given as parts counts its "text" (and "refusal") parts as text
//     and every "image_url" part as a fixed 85 tokens, the price of a
//     low-detail image (high-detail images cost more, by tile, which cannot
//     be known without the image); audio and file parts count 0;
//   - other non-string message fields (tool_calls, function_call, audio)
//     count the tokens of their compact JSON text;
//   - tool (and legacy function) definitions count the tokens of their
//     compact JSON text, an approximation of the schema rendering OpenAI
//     uses internally;
//   - 3 tokens prime the reply.
//
// Other request fields (response_format schemas, ...) are not counted.
// body is a raw JSON request already validated by the gateway; malformed
// JSON or a missing messages array is reported as an error.
func (t *Tokenizer) ChatPrompt(body []byte) (int, error) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return 0, fmt.Errorf("tokenize: chat request: %w", err)
	}
	if req.Messages == nil {
		return 0, errNoMessages
	}
	var scratch bytes.Buffer
	n := tokensReply
	for _, msg := range req.Messages {
		if t.limit > 0 && n > t.limit {
			return n, nil
		}
		n += tokensPerMessage
		for key, val := range msg {
			c, err := t.messageField(key, val, &scratch)
			if err != nil {
				return 0, fmt.Errorf("tokenize: message %s: %w", key, err)
			}
			n += c
		}
	}
	for _, list := range [][]json.RawMessage{req.Tools, req.Functions} {
		for _, def := range list {
			c, err := t.countJSON(def, &scratch)
			if err != nil {
				return 0, fmt.Errorf("tokenize: tool: %w", err)
			}
			n += c
		}
	}
	return n, nil
}

// messageField counts one field of a message.
func (t *Tokenizer) messageField(key string, val json.RawMessage, scratch *bytes.Buffer) (int, error) {
	val = bytes.TrimSpace(val)
	switch {
	case len(val) == 0 || string(val) == "null":
		return 0, nil
	case key == "content" && val[0] == '[':
		return t.contentParts(val)
	case val[0] == '"':
		var s string
		if err := json.Unmarshal(val, &s); err != nil {
			return 0, err
		}
		n := t.countString(s)
		if key == "name" {
			n += tokensPerName
		}
		return n, nil
	default:
		return t.countJSON(val, scratch)
	}
}

// contentParts counts an array of content parts.
func (t *Tokenizer) contentParts(val json.RawMessage) (int, error) {
	var parts []contentPart
	if err := json.Unmarshal(val, &parts); err != nil {
		return 0, err
	}
	n := 0
	for _, p := range parts {
		switch p.Type {
		case "text":
			n += t.countString(p.Text)
		case "refusal":
			n += t.countString(p.Refusal)
		case "image_url":
			n += tokensPerImage
		}
	}
	return n, nil
}

// countJSON counts the tokens of the compact form of a JSON value.
func (t *Tokenizer) countJSON(val json.RawMessage, scratch *bytes.Buffer) (int, error) {
	scratch.Reset()
	if err := json.Compact(scratch, val); err != nil {
		return 0, err
	}
	return t.Count(scratch.Bytes()), nil
}
