package openai

import (
	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/contract"
	"github.com/modelgate/modelgate/internal/jsonx"
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
}

// parseChat validates a chat completion body against the official request
// contract and returns its parameters, or a 400 naming the offending param.
func parseChat(body []byte) (chatParams, *apierr.Error) {
	if e := checkBody(body, contract.ChatCompletions); e != nil {
		return chatParams{}, e
	}
	var p chatParams
	_ = jsonx.Each(body, func(k, v []byte) bool {
		switch string(k) {
		case "model":
			p.Model, _, _ = str(v, "model")
		case "stream":
			p.Stream = string(v) == "true"
		case "stream_options":
			p.hasStreamOptions = !isNull(v)
			p.IncludeUsage, _ = streamOptions(v)
		case "n":
			p.N, _, _ = integer(v, "n", 1, 128)
		case "max_tokens":
			p.MaxTokens, _, _ = integer(v, "max_tokens", 0, 1<<63-1)
		case "max_completion_tokens":
			p.MaxCompletionTokens, _, _ = integer(v, "max_completion_tokens", 0, 1<<63-1)
		}
		return true
	})
	if e := checkModel(p.Model); e != nil {
		return chatParams{}, e
	}
	if p.hasStreamOptions && !p.Stream {
		return chatParams{}, apierr.Invalid("stream_options", "Invalid 'stream_options': only allowed when 'stream' is true.")
	}
	return p, nil
}
