// Package responses translates OpenAI's Responses API (POST /v1/responses)
// to chat completions and back, so that vendors that only speak chat
// (Anthropic, Gemini, the demo provider, OpenAI-compatible vendors without
// the Responses API) serve Responses clients too: a request becomes a chat
// completion body, a chat.completion becomes a Response object, and a stream
// of chat chunks becomes the typed Responses events (response.created,
// response.output_text.delta, ..., response.completed).
//
// Nothing is stored: a translated response cannot be retrieved later or
// continued with previous_response_id.
package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/jsonx"
)

// maxDepth bounds JSON nesting, as for chat requests.
const maxDepth = 128

// Request is a parsed Responses API create request. Parse checks the JSON
// type and range of every member the gateway reads; Translate checks what
// only a translation cannot do.
type Request struct {
	Model           string
	Stream          bool
	MaxOutputTokens int64 // 0 when absent
	w               wireRequest
}

// wireRequest is the part of CreateResponse the gateway reads. Pointers and
// raw values keep "absent" apart from zero values.
type wireRequest struct {
	Model              string            `json:"model"`
	Input              json.RawMessage   `json:"input"`
	Instructions       *string           `json:"instructions"`
	Stream             *bool             `json:"stream"`
	MaxOutputTokens    *int64            `json:"max_output_tokens"`
	Temperature        *float64          `json:"temperature"`
	TopP               *float64          `json:"top_p"`
	Tools              []json.RawMessage `json:"tools"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls  *bool             `json:"parallel_tool_calls"`
	Text               *textParam        `json:"text"`
	Reasoning          *reasoningParam   `json:"reasoning"`
	User               *string           `json:"user"`
	Metadata           map[string]string `json:"metadata"`
	Store              *bool             `json:"store"`
	Background         *bool             `json:"background"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Conversation       json.RawMessage   `json:"conversation"`
	Prompt             json.RawMessage   `json:"prompt"`
	Include            []string          `json:"include"`
	TopLogprobs        *int64            `json:"top_logprobs"`
	MaxToolCalls       *int64            `json:"max_tool_calls"`
	Truncation         *string           `json:"truncation"`
	ServiceTier        *string           `json:"service_tier"`
	SafetyIdentifier   *string           `json:"safety_identifier"`
	PromptCacheKey     *string           `json:"prompt_cache_key"`
	StreamOptions      json.RawMessage   `json:"stream_options"`
}

type textParam struct {
	Format    json.RawMessage `json:"format"`
	Verbosity *string         `json:"verbosity"`
}

type reasoningParam struct {
	Effort  *string `json:"effort"`
	Summary *string `json:"summary"`
}

// knownFields are the top-level members a key differing only by case is
// refused for (vendors match keys exactly; encoding/json would not).
var knownFields = []string{
	"model", "input", "instructions", "stream", "max_output_tokens", "temperature", "top_p", "tools",
	"tool_choice", "parallel_tool_calls", "text", "reasoning", "user", "metadata", "store", "background",
	"previous_response_id", "conversation", "prompt", "include", "top_logprobs", "max_tool_calls",
	"truncation", "service_tier", "safety_identifier", "prompt_cache_key", "stream_options",
}

// Parse validates a Responses API create request and returns it, or a 400
// naming the offending parameter.
func Parse(body []byte) (*Request, *apierr.Error) {
	if err := jsonx.Check(body, maxDepth); err != nil {
		return nil, apierr.Invalid("", "We could not parse the JSON body of your request: %v. "+
			"The body must be a single JSON object in UTF-8 with no duplicate keys.", err)
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, apierr.Invalid("", "The request body must be a JSON object.")
	}
	if e := checkKeys(body); e != nil {
		return nil, e
	}
	r := &Request{}
	if err := json.Unmarshal(body, &r.w); err != nil {
		return nil, typeError(err)
	}
	w := &r.w
	switch {
	case w.Model == "":
		return nil, missing("model")
	case len(w.Model) > 256:
		return nil, apierr.Invalid("model", "Invalid 'model': longer than 256 characters.")
	}
	if e := between("temperature", w.Temperature, 0, 2); e != nil {
		return nil, e
	}
	if e := between("top_p", w.TopP, 0, 1); e != nil {
		return nil, e
	}
	if w.MaxOutputTokens != nil {
		if *w.MaxOutputTokens < 1 {
			return nil, apierr.Invalid("max_output_tokens", "Invalid 'max_output_tokens': expected a value of at least 1, but got %d instead.", *w.MaxOutputTokens)
		}
		r.MaxOutputTokens = *w.MaxOutputTokens
	}
	switch kind(w.Input) {
	case "nothing", "null", "string", "array":
	default:
		return nil, wrongType("input", "a string or an array of input items", w.Input)
	}
	if kind(w.ToolChoice) == "number" || kind(w.ToolChoice) == "boolean" || kind(w.ToolChoice) == "array" {
		return nil, wrongType("tool_choice", "a string or an object", w.ToolChoice)
	}
	r.Model = w.Model
	r.Stream = w.Stream != nil && *w.Stream
	if len(w.StreamOptions) > 0 && !jsonx.IsNull(w.StreamOptions) && !r.Stream {
		return nil, apierr.Invalid("stream_options", "Invalid 'stream_options': only allowed when 'stream' is true.")
	}
	return r, nil
}

// checkKeys refuses top-level keys that match a known one only when case
// is ignored ("Max_Output_Tokens").
func checkKeys(body []byte) *apierr.Error {
	var bad *apierr.Error
	_ = jsonx.Each(body, func(k, _ []byte) bool {
		key := string(k)
		for _, name := range knownFields {
			if key == name {
				return true
			}
		}
		for _, name := range knownFields {
			if strings.EqualFold(key, name) {
				bad = apierr.Invalid(key, "Unrecognized request argument '%s'; did you mean '%s'? Parameter names are case-sensitive.", key, name)
				return false
			}
		}
		return true // unknown members are the vendor's business
	})
	return bad
}

// typeError turns encoding/json's complaint into a 400 naming the member.
func typeError(err error) *apierr.Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		param := te.Field
		if param == "" {
			param = "input"
		}
		return apierr.Invalid(param, "Invalid type for '%s': expected %s, but got %s instead.", param, goKind(te.Type), jsonKind(te.Value))
	}
	return apierr.Invalid("", "We could not parse the JSON body of your request: %v.", err)
}

func goKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return goKind(t.Elem())
	default:
		return "an object"
	}
}

// jsonKind renders UnmarshalTypeError.Value ("string", "number 1.5", ...).
func jsonKind(v string) string {
	switch {
	case v == "bool":
		return "a boolean"
	case strings.HasPrefix(v, "number"):
		return "a number"
	case v == "array" || v == "object":
		return "an " + v
	}
	return "a " + v
}

// kind names the JSON type of a raw value (see jsonx.Kind).
func kind(raw []byte) string { return jsonx.Kind(raw) }

func present(raw []byte) bool { k := kind(raw); return k != "nothing" && k != "null" }

func missing(param string) *apierr.Error {
	return apierr.Invalid(param, "Missing required parameter: '%s'.", param)
}

func wrongType(param, want string, raw []byte) *apierr.Error {
	got := kind(raw)
	switch got {
	case "array", "object":
		got = "an " + got
	case "nothing":
	default:
		got = "a " + got
	}
	return apierr.Invalid(param, "Invalid type for '%s': expected %s, but got %s instead.", param, want, got)
}

func between(param string, v *float64, lo, hi float64) *apierr.Error {
	if v != nil && (*v < lo || *v > hi) {
		return apierr.Invalid(param, "Invalid '%s': expected a value between %g and %g, but got %g instead.", param, lo, hi, *v)
	}
	return nil
}

func at(param string, i int) string { return fmt.Sprintf("%s[%d]", param, i) }
