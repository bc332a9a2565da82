package openai

import (
	"bytes"
	"strconv"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/contract"
	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/lifecycle"
)

// chatParams is what the request path needs from a valid chat request:
// the exchange's (lifecycle.ChatParams) and where the adapter finds model
// and stream_options; everything else stays in the raw body, which is what
// goes upstream.
type chatParams struct {
	lifecycle.ChatParams
	hasStreamOptions bool
	// modelAt and optionsAt locate model and stream_options in the body,
	// for the adapter (see provider.ChatRequest.ModelAt).
	modelAt, optionsAt jsonx.Span
}

// chatKeys are the top-level members parseChat reads, in spans order.
var chatKeys = []string{"model", "stream", "stream_options", "n", "max_tokens", "max_completion_tokens",
	"service_tier", "web_search_options", "modalities", "audio"}

// parseChat validates a chat completion body against the official request
// contract and returns its parameters, or a 400 naming the offending param.
func parseChat(body []byte) (chatParams, *apierr.Error) {
	if e := checkJSON(body); e != nil {
		return chatParams{}, e
	}
	var sp [10]jsonx.Span
	if e := contract.ValidateSpans(contract.ChatCompletions, body, chatKeys, sp[:]); e != nil {
		return chatParams{}, e
	}
	var p chatParams
	p.Model, _, _ = str(sp[0].Value(body), "model")
	p.modelAt, p.optionsAt = sp[0], sp[2]
	p.Stream = string(sp[1].Value(body)) == "true"
	if v := sp[2].Value(body); v != nil && !isNull(v) {
		p.hasStreamOptions = true
		p.IncludeUsage, _ = streamOptions(v)
	}
	p.N, p.MaxTokens, p.MaxCompletionTokens = intAt(sp[3].Value(body)), intAt(sp[4].Value(body)), intAt(sp[5].Value(body))
	if v := sp[6].Value(body); v != nil && !isNull(v) {
		p.Tier, _, _ = str(v, "service_tier")
	}
	p.SearchOptions = present(sp[7].Value(body))
	if v := sp[8].Value(body); v != nil && bytes.Contains(v, []byte(`"audio"`)) {
		p.AudioOut = "modalities"
	} else if present(sp[9].Value(body)) {
		p.AudioOut = "audio"
	}
	if e := checkModel(p.Model); e != nil {
		return chatParams{}, e
	}
	if p.hasStreamOptions && !p.Stream {
		return chatParams{}, apierr.Invalid("stream_options", "Invalid 'stream_options': only allowed when 'stream' is true.")
	}
	return p, nil
}

// intAt reads a member the contract has checked to be an integer, null or
// absent (0).
func intAt(v []byte) int64 {
	if len(v) == 0 || v[0] == 'n' {
		return 0
	}
	n, _ := strconv.ParseInt(string(v), 10, 64)
	return n
}

// present reports whether a member was given and is not null.
func present(v []byte) bool { return v != nil && !isNull(v) }
