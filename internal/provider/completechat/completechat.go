// Package completechat serves OpenAI's legacy text completions
// (POST /v1/completions) with vendors that only chat (Anthropic, Gemini, the
// demo): the prompt becomes one user message, the chat answer becomes a
// text_completion object, and each chat chunk a text_completion chunk.
//
// What a chat model cannot do is refused with a 400 naming the parameter,
// before anything is sent upstream: several prompts or token-id prompts
// (prompt), suffix, echo, logprobs, best_of above 1, and max_tokens 0
// (which only makes sense with echo).
package completechat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
)

// DefaultMaxTokens is the legacy API's default max_tokens; it is sent to the
// chat model when the client set none, so every vendor stops where OpenAI's
// completion models would.
const DefaultMaxTokens = 16

// Adapter serves legacy completions with a chat-only adapter.
type Adapter struct {
	Chatter provider.Chatter
}

var _ provider.Completer = Adapter{}

// New returns the adapter that translates completions for ch.
func New(ch provider.Chatter) Adapter { return Adapter{Chatter: ch} }

// Complete translates req to a chat completion, asks the chat model, and
// translates its chat.completion back to a text_completion.
func (a Adapter) Complete(ctx context.Context, req *provider.CompletionRequest) (*provider.CompletionResponse, error) {
	chat, err := Translate(req)
	if err != nil {
		return nil, err
	}
	res, err := a.Chatter.Chat(ctx, chat)
	if err != nil {
		return nil, err
	}
	body, err := Response(res.Body, req.PublicModel)
	if err != nil {
		return nil, provider.BadResponse("completechat", err)
	}
	return &provider.CompletionResponse{Body: body, Usage: res.Usage, HasUsage: res.HasUsage}, nil
}

// CompleteStream is Complete for streams: each chat chunk is translated as
// it arrives.
func (a Adapter) CompleteStream(ctx context.Context, req *provider.CompletionRequest) (provider.CompletionStream, error) {
	chat, err := Translate(req)
	if err != nil {
		return nil, err
	}
	st, err := a.Chatter.ChatStream(ctx, chat)
	if err != nil {
		return nil, err
	}
	return newStream(st, req.PublicModel), nil
}

// request is what Translate reads of a completion request. Carried-over
// values stay raw, so they reach the chat model exactly as the client wrote
// them (the gateway's handler has already checked their types and ranges).
type request struct {
	Prompt           json.RawMessage `json:"prompt"`
	MaxTokens        *int64          `json:"max_tokens"`
	Temperature      json.RawMessage `json:"temperature"`
	TopP             json.RawMessage `json:"top_p"`
	Stop             json.RawMessage `json:"stop"`
	N                json.RawMessage `json:"n"`
	User             json.RawMessage `json:"user"`
	Seed             json.RawMessage `json:"seed"`
	PresencePenalty  json.RawMessage `json:"presence_penalty"`
	FrequencyPenalty json.RawMessage `json:"frequency_penalty"`
	Suffix           *string         `json:"suffix"`
	Echo             *bool           `json:"echo"`
	Logprobs         json.RawMessage `json:"logprobs"`
	BestOf           *int64          `json:"best_of"`
}

// chatRequest is the chat completion standing for a completion request.
type chatRequest struct {
	Model            string          `json:"model"`
	Messages         []chatMessage   `json:"messages"`
	MaxTokens        int64           `json:"max_tokens"`
	Temperature      json.RawMessage `json:"temperature,omitempty"`
	TopP             json.RawMessage `json:"top_p,omitempty"`
	Stop             json.RawMessage `json:"stop,omitempty"`
	N                json.RawMessage `json:"n,omitempty"`
	User             json.RawMessage `json:"user,omitempty"`
	Seed             json.RawMessage `json:"seed,omitempty"`
	PresencePenalty  json.RawMessage `json:"presence_penalty,omitempty"`
	FrequencyPenalty json.RawMessage `json:"frequency_penalty,omitempty"`
	Stream           bool            `json:"stream,omitempty"`
	StreamOptions    *streamOptions  `json:"stream_options,omitempty"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Translate builds the chat completion request standing for the legacy
// completion request req: the prompt becomes one user message; max_tokens
// (default DefaultMaxTokens), temperature, top_p, stop, n, user, seed,
// presence_penalty and frequency_penalty are carried over; logit_bias
// (token ids of another tokenizer) and members the legacy API does not
// define are dropped. What a chat model cannot do is a 400 naming the
// parameter.
func Translate(req *provider.CompletionRequest) (*provider.ChatRequest, error) {
	var r request
	if err := json.Unmarshal(req.Body, &r); err != nil {
		return nil, apierr.Invalid("", "The request body is not a valid completion request: %v", err)
	}
	prompt, err := onePrompt(r.Prompt)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Suffix != nil && *r.Suffix != "":
		return nil, unsupported("suffix", "suffix (text insertion)")
	case r.Echo != nil && *r.Echo:
		return nil, unsupported("echo", "echo")
	case present(r.Logprobs):
		return nil, unsupported("logprobs", "logprobs")
	case r.BestOf != nil && *r.BestOf > 1:
		return nil, unsupported("best_of", "best_of greater than 1")
	case r.MaxTokens != nil && *r.MaxTokens < 1:
		return nil, apierr.Invalid("max_tokens", "max_tokens must be at least 1 for this model: a completion of no tokens only makes sense with echo, which its provider does not support.")
	}
	c := chatRequest{Model: req.PublicModel, Messages: []chatMessage{{Role: "user", Content: prompt}}, MaxTokens: DefaultMaxTokens,
		Temperature: keep(r.Temperature), TopP: keep(r.TopP), Stop: keep(r.Stop), N: keep(r.N), User: keep(r.User),
		Seed: keep(r.Seed), PresencePenalty: keep(r.PresencePenalty), FrequencyPenalty: keep(r.FrequencyPenalty), Stream: req.Stream}
	if r.MaxTokens != nil {
		c.MaxTokens = *r.MaxTokens
	}
	if req.Stream && req.IncludeUsage {
		c.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	body, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("completechat: encode chat request: %w", err)
	}
	out := *req
	out.Body = body
	return &out, nil
}

// onePrompt is the prompt's text, when it is one non-empty string (or an
// array holding one).
func onePrompt(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil && present(raw) {
		if s == "" {
			return "", apierr.Invalid("prompt", "This model's provider needs a non-empty prompt.")
		}
		return s, nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil || len(list) == 0 {
		return "", apierr.Invalid("prompt", "Invalid 'prompt': expected a string or an array of strings.")
	}
	if len(list) > 1 {
		return "", apierr.Invalid("prompt", "This model's provider serves chat models, which take one prompt per request; send the %d prompts as separate requests.", len(list))
	}
	if json.Unmarshal(list[0], &s) != nil {
		return "", apierr.Invalid("prompt", "This model's provider serves chat models, which do not take prompts as token ids; send the prompt as text.")
	}
	return onePrompt(list[0])
}

func unsupported(param, what string) *apierr.Error {
	return apierr.Invalid(param, "%s is not supported by this model: its provider serves chat models, to which the gateway translates legacy completions.", what)
}

// present reports whether a raw member was sent with a value other than null.
func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// keep is raw when it holds a value, nil (omitted) when absent or null.
func keep(raw json.RawMessage) json.RawMessage {
	if !present(raw) {
		return nil
	}
	return raw
}
