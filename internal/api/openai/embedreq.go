package openai

import (
	"math"
	"strconv"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/contract"
)

// maxEmbedInputs is the most inputs one request may carry (the spec's
// maxItems for an array of strings or of token arrays).
const maxEmbedInputs = 2048

// maxTokenID bounds token ids; every vocabulary is far smaller.
const maxTokenID = math.MaxInt32

// embedParams is a validated embeddings request. Exactly one of Texts and
// Tokens is set once parsing succeeded.
type embedParams struct {
	Model      string
	Texts      []string
	Tokens     [][]int64
	Base64     bool
	Dimensions int64 // 0 when absent
}

// embedFields are the members the gateway checks; others are the vendor's
// business and pass through to OpenAI-compatible vendors untouched.
var embedFields = []string{"model", "input", "encoding_format", "dimensions", "user"}

// parseEmbeddings validates an embeddings body (the spec's
// CreateEmbeddingRequest) and returns its parameters, or a 400 naming the
// offending param.
func parseEmbeddings(body []byte) (embedParams, *apierr.Error) {
	if e := checkBody(body, contract.Embeddings); e != nil {
		return embedParams{}, e
	}
	var p embedParams
	if e := members(body, "", embedFields, p.member); e != nil {
		return embedParams{}, e
	}
	if p.Model == "" {
		return embedParams{}, missing("model")
	}
	if p.Texts == nil && p.Tokens == nil {
		return embedParams{}, missing("input")
	}
	return p, nil
}

// member checks one top-level member.
func (p *embedParams) member(key string, v []byte) *apierr.Error {
	var e *apierr.Error
	switch key {
	case "model":
		p.Model, e = modelName(v)
	case "input":
		e = p.input(v)
	case "encoding_format":
		var s string
		var ok bool
		if s, ok, e = str(v, key); e == nil && ok {
			switch s {
			case "float":
			case "base64":
				p.Base64 = true
			default:
				e = oneOf(key, s, "float", "base64")
			}
		}
	case "dimensions":
		p.Dimensions, _, e = integer(v, key, 1, math.MaxInt32)
	case "user":
		e = isStr(v, key)
	}
	return e
}

// input reads the input union: a string, an array of strings, an array of
// token ids (one input), or an array of token id arrays. null is left for
// parseEmbeddings to report as missing.
func (p *embedParams) input(v []byte) *apierr.Error {
	switch kind(v) {
	case "null":
		return nil
	case "string":
		s, _, e := str(v, "input")
		if e != nil {
			return e
		}
		if s == "" {
			return apierr.Invalid("input", "Invalid 'input': the string must not be empty.")
		}
		p.Texts = []string{s}
		return nil
	case "array":
		return p.inputArray(v)
	}
	return wrongType("input", "a string, an array of strings, an array of token ids or an array of token id arrays", v)
}

// inputArray reads an array input; its first element decides which of the
// three array forms it is, and every other element must be of that form.
func (p *embedParams) inputArray(v []byte) *apierr.Error {
	var first string
	var texts []string
	var flat []int64
	var nested [][]int64
	e := elements(v, func(i int, el []byte) *apierr.Error {
		k := kind(el)
		if i == 0 {
			first = k
		}
		if k != first {
			return apierr.Invalid("input", "Invalid 'input': input[%d] is %s but input[0] is %s; an array input must hold only strings, only token ids, or only arrays of token ids.",
				i, what(k), what(first))
		}
		if first != "number" && i >= maxEmbedInputs {
			return apierr.Invalid("input", "Invalid 'input': at most %d inputs are allowed in one request.", maxEmbedInputs)
		}
		switch first {
		case "string":
			s, _, e := str(el, "input")
			if e != nil {
				return e
			}
			if s == "" {
				return apierr.Invalid("input", "Invalid 'input': input[%d] is an empty string; every input must have text.", i)
			}
			texts = append(texts, s)
		case "number":
			id, e := embedTokenID(el, index("input", i))
			if e != nil {
				return e
			}
			flat = append(flat, id)
		case "array":
			ids, e := embedTokenArray(el, index("input", i))
			if e != nil {
				return e
			}
			nested = append(nested, ids)
		default:
			return apierr.Invalid("input", "Invalid 'input': input[%d] is %s; expected a string, a token id or an array of token ids.", i, what(k))
		}
		return nil
	})
	if e != nil {
		return e
	}
	switch first {
	case "":
		return apierr.Invalid("input", "Invalid 'input': the array must not be empty.")
	case "string":
		p.Texts = texts
	case "number":
		p.Tokens = [][]int64{flat}
	case "array":
		p.Tokens = nested
	}
	return nil
}

// embedTokenArray reads one non-empty array of token ids found at at.
func embedTokenArray(v []byte, at string) ([]int64, *apierr.Error) {
	var ids []int64
	e := elements(v, func(i int, el []byte) *apierr.Error {
		id, e := embedTokenID(el, index(at, i))
		ids = append(ids, id)
		return e
	})
	if e != nil {
		return nil, e
	}
	if len(ids) == 0 {
		return nil, apierr.Invalid("input", "Invalid 'input': %s is an empty array; every input must have tokens.", at)
	}
	return ids, nil
}

// embedTokenID reads one token id found at at: a non-negative integer.
func embedTokenID(v []byte, at string) (int64, *apierr.Error) {
	if k := kind(v); k != "number" {
		return 0, apierr.Invalid("input", "Invalid 'input': %s is %s, not a token id (a non-negative integer).", at, what(k))
	}
	id, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || id < 0 || id > maxTokenID {
		return 0, apierr.Invalid("input", "Invalid 'input': %s is %s, not a token id (a non-negative integer below 2^31).", at, v)
	}
	return id, nil
}

// what names a JSON kind in a message: "a string", "null".
func what(k string) string {
	if k == "null" {
		return k
	}
	return article(k)
}

// inputBound is an upper bound of the input tokens: token arrays count
// exactly, and every byte-level BPE token of a text is at least one byte.
func (p *embedParams) inputBound() int64 {
	var n int64
	for _, s := range p.Texts {
		n += int64(len(s))
	}
	for _, ids := range p.Tokens {
		n += int64(len(ids))
	}
	return n
}
