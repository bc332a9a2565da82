package openai

import (
	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/contract"
	"github.com/modelgate/modelgate/internal/lifecycle"
)

// completionParams is what the request path needs from a valid legacy
// completion request (OpenAI's CreateCompletionRequest); the raw body is
// what goes upstream.
type completionParams struct {
	lifecycle.CompletionParams
	hasStreamOptions bool
}

// completionFields are the top-level members the request path reads; the
// contract has checked every member already.
var completionFields = []string{"model", "prompt", "best_of", "max_tokens", "n", "stream", "stream_options"}

// parseCompletion validates a completion body and returns its parameters,
// or a 400 naming the offending param.
func parseCompletion(body []byte) (completionParams, *apierr.Error) {
	if e := checkBody(body, contract.Completions); e != nil {
		return completionParams{}, e
	}
	var p completionParams
	if e := members(body, "", completionFields, p.member); e != nil {
		return completionParams{}, e
	}
	switch {
	case p.Model == "":
		return completionParams{}, missing("model")
	case p.Prompt == nil:
		return completionParams{}, missing("prompt")
	case p.hasStreamOptions && !p.Stream:
		return completionParams{}, apierr.Invalid("stream_options", "Invalid 'stream_options': only allowed when 'stream' is true.")
	case p.BestOf > 1 && p.Stream:
		return completionParams{}, apierr.Invalid("best_of", "Invalid 'best_of': results cannot be streamed when best_of is greater than 1.")
	case p.BestOf > 0 && p.N > p.BestOf:
		return completionParams{}, apierr.Invalid("best_of", "Invalid 'best_of': it must be at least 'n' (%d), but got %d.", p.N, p.BestOf)
	}
	return p, nil
}

// member checks one top-level member.
func (p *completionParams) member(key string, v []byte) *apierr.Error {
	var e *apierr.Error
	switch key {
	case "model":
		p.Model, e = modelName(v)
	case "prompt":
		e = p.prompt(v)
	case "stream":
		p.Stream, _, e = boolean(v, key)
	case "stream_options":
		p.hasStreamOptions = !isNull(v)
		e = p.streamOptions(v)
	case "n":
		p.N, _, e = integer(v, key, 1, 128)
	case "best_of":
		p.BestOf, _, e = integer(v, key, 0, 20)
	case "max_tokens":
		p.MaxTokens, p.HasMaxTokens, e = integer(v, key, 0, 1<<53)
	}
	return e
}

// prompt checks the four shapes the API accepts: a string, an array of
// strings, an array of token ids, or an array of token-id arrays. null
// counts as missing.
func (p *completionParams) prompt(v []byte) *apierr.Error {
	switch kind(v) {
	case "null":
		return nil
	case "string":
		p.Prompt, p.Prompts = v, 1
		return nil
	case "array":
	default:
		return wrongType("prompt", "a string, an array of strings, an array of tokens or an array of token arrays", v)
	}
	var first string // the kind of the first element; every other must match
	var n int64
	e := elements(v, func(i int, el []byte) *apierr.Error {
		k := kind(el)
		if first == "" {
			first = k
		}
		if k != first {
			return apierr.Invalid("prompt", "Invalid 'prompt': its elements must all be strings, all tokens, or all token arrays, but element %d is %s.", i, article(k))
		}
		n++
		switch k {
		case "string":
			return nil
		case "number":
			return promptToken(el)
		case "array":
			return promptTokenArray(el)
		}
		return apierr.Invalid("prompt", "Invalid 'prompt': element %d must be a string, a token id or a token array, but got %s.", i, article(k))
	})
	if e != nil {
		return e
	}
	if n == 0 {
		return apierr.Invalid("prompt", "Invalid 'prompt': the array is empty; send at least one prompt.")
	}
	p.Prompt, p.Prompts = v, n
	if first == "number" {
		p.Prompts = 1 // one prompt given as token ids
	}
	return nil
}

// promptToken checks one token id: an integer that fits a vocabulary.
func promptToken(v []byte) *apierr.Error {
	if _, _, e := integer(v, "prompt", 0, 1<<31-1); e != nil {
		return apierr.Invalid("prompt", "Invalid 'prompt': token ids must be non-negative integers, but got %s.", v)
	}
	return nil
}

// promptTokenArray checks one non-empty array of token ids.
func promptTokenArray(v []byte) *apierr.Error {
	n := 0
	e := elements(v, func(_ int, el []byte) *apierr.Error {
		n++
		if kind(el) != "number" {
			return apierr.Invalid("prompt", "Invalid 'prompt': a token array must hold only token ids, but got %s.", article(kind(el)))
		}
		return promptToken(el)
	})
	if e == nil && n == 0 {
		e = apierr.Invalid("prompt", "Invalid 'prompt': a token array is empty.")
	}
	return e
}

func (p *completionParams) streamOptions(v []byte) (e *apierr.Error) {
	p.IncludeUsage, e = streamOptions(v)
	return e
}
