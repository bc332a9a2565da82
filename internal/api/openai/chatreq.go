package openai

import (
	"github.com/modelgate/modelgate/internal/apierr"
)

// chatParams is what the request path needs from a valid chat request;
// everything else stays in the raw body, which is what goes upstream.
type chatParams struct {
	Model               string
	Stream              bool
	IncludeUsage        bool
	N                   int64 // 0 when absent
	MaxTokens           int64 // 0 when absent
	MaxCompletionTokens int64 // 0 when absent
	hasStreamOptions    bool
	hasMessages         bool
}

// chatFields are the top-level members the gateway checks.
var chatFields = []string{
	"model", "messages", "stream", "stream_options", "temperature", "top_p", "n", "max_tokens",
	"max_completion_tokens", "presence_penalty", "frequency_penalty", "seed", "logprobs", "top_logprobs",
	"user", "parallel_tool_calls", "store", "metadata", "reasoning_effort", "service_tier", "modalities",
	"logit_bias", "stop", "tools", "tool_choice", "functions", "function_call", "response_format",
}

// parseChat validates a chat completion body and returns its parameters,
// or a 400 naming the offending param.
func parseChat(body []byte) (chatParams, *apierr.Error) {
	if e := checkJSON(body); e != nil {
		return chatParams{}, e
	}
	var p chatParams
	if e := members(body, "", chatFields, p.member); e != nil {
		return chatParams{}, e
	}
	if p.Model == "" {
		return chatParams{}, missing("model")
	}
	if !p.hasMessages {
		return chatParams{}, missing("messages")
	}
	if p.hasStreamOptions && !p.Stream {
		return chatParams{}, apierr.Invalid("stream_options", "Invalid 'stream_options': only allowed when 'stream' is true.")
	}
	return p, nil
}

// member checks one top-level member.
func (p *chatParams) member(key string, v []byte) *apierr.Error {
	var e *apierr.Error
	switch key {
	case "model":
		p.Model, e = modelName(v)
	case "messages":
		p.hasMessages, e = checkMessages(v)
	case "stream":
		p.Stream, _, e = boolean(v, key)
	case "stream_options":
		p.hasStreamOptions = !isNull(v)
		e = p.streamOptions(v)
	case "temperature":
		e = number(v, key, 0, 2)
	case "top_p":
		e = number(v, key, 0, 1)
	case "presence_penalty", "frequency_penalty":
		e = number(v, key, -2, 2)
	case "n":
		p.N, _, e = integer(v, key, 1, 128)
	case "max_tokens":
		p.MaxTokens, _, e = integer(v, key, 1, 1<<53)
	case "max_completion_tokens":
		p.MaxCompletionTokens, _, e = integer(v, key, 1, 1<<53)
	case "top_logprobs":
		_, _, e = integer(v, key, 0, 20)
	case "seed":
		_, _, e = integer(v, key, -1<<63, 1<<63-1)
	case "logprobs", "parallel_tool_calls", "store":
		_, _, e = boolean(v, key)
	case "user", "reasoning_effort", "service_tier":
		e = isStr(v, key)
	case "metadata":
		e = stringMap(v, key)
	case "modalities":
		e = stringArray(v, key)
	case "logit_bias":
		e = logitBias(v)
	case "stop":
		e = checkStop(v)
	case "tools":
		e = checkTools(v)
	case "functions":
		e = checkFunctions(v)
	case "tool_choice":
		e = checkChoice("tool_choice", v, "none", "auto", "required")
	case "function_call":
		e = checkChoice("function_call", v, "none", "auto")
	case "response_format":
		e = checkFormat(v)
	}
	return e
}

func (p *chatParams) streamOptions(v []byte) (e *apierr.Error) {
	p.IncludeUsage, e = streamOptions(v)
	return e
}

func stringMap(v []byte, param string) *apierr.Error {
	switch kind(v) {
	case "null":
		return nil
	case "object":
	default:
		return wrongType(param, "an object", v)
	}
	return members(v, param, nil, func(string, []byte) *apierr.Error { return nil })
}

func stringArray(v []byte, param string) *apierr.Error {
	switch kind(v) {
	case "null":
		return nil
	case "array":
	default:
		return wrongType(param, "an array of strings", v)
	}
	return elements(v, func(i int, el []byte) *apierr.Error {
		if kind(el) != "string" {
			return wrongType(index(param, i), "a string", el)
		}
		return nil
	})
}

func logitBias(v []byte) *apierr.Error {
	switch kind(v) {
	case "null":
		return nil
	case "object":
	default:
		return wrongType("logit_bias", "an object", v)
	}
	var bad *apierr.Error
	_ = eachMember(v, func(k string, val []byte) bool {
		bad = number(val, "logit_bias", -100, 100)
		if bad != nil {
			bad.Message = "Invalid 'logit_bias' for token " + k + ": values must be numbers between -100 and 100."
		}
		return bad == nil
	})
	return bad
}

func checkStop(v []byte) *apierr.Error {
	switch kind(v) {
	case "nothing", "null", "string":
		return nil
	case "array":
		return stringArray(v, "stop")
	default:
		return wrongType("stop", "a string or an array of strings", v)
	}
}
