package responses

import (
	"encoding/json"
	"fmt"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

// Translation is a Responses request turned into a chat completion request,
// with what the answer needs to show the client's parameters back.
type Translation struct {
	// Chat is the chat completion request body (model: the public id;
	// streams ask for usage).
	Chat []byte
	// Stream is whether the client asked for a stream.
	Stream bool
	base   Response
	names  toolNames // chat function names that stand for other client tools
	// searchParam names the web search tool's type ("" none).
	searchParam string
	// encrypted: reasoning items carry the signed thinking in
	// encrypted_content (include: reasoning.encrypted_content).
	encrypted bool
}

// Translate builds the chat request for r, or a 400 for what a chat
// completion cannot do. What happens to each parameter:
//
//	input, instructions    → messages (see messages)
//	tools (function)       → tools; namespace, custom, local_shell → function tools (toolmap.go);
//	                         web_search → web_search_options (search.go); other built-in tools → 400
//	tool_choice            → tool_choice; allowed_tools narrows tools; built-in → 400
//	parallel_tool_calls    → parallel_tool_calls (only with tools)
//	max_output_tokens      → max_completion_tokens
//	temperature, top_p     → temperature, top_p
//	text.format            → response_format (text, json_object, json_schema)
//	reasoning.effort       → reasoning_effort
//	user                   → user
//	metadata               → shown back in the Response only (not sent upstream)
//	store: true, background: true, previous_response_id, conversation, prompt → 400
//	include                → reasoning.encrypted_content: signed thinking in reasoning items (reasoning.go)
//	text.verbosity, reasoning.summary, truncation, service_tier, top_logprobs,
//	max_tool_calls, safety_identifier, prompt_cache_key, stream_options → dropped
func (r *Request) Translate() (*Translation, *apierr.Error) {
	w := &r.w
	why := fmt.Sprintf("the gateway serves the model '%s' by translating the Responses API to chat completions and does not store responses", r.Model)
	switch {
	case w.Background != nil && *w.Background:
		return nil, apierr.Invalid("background", "Background responses are not supported: %s.", why)
	case w.PreviousResponseID != nil && *w.PreviousResponseID != "":
		return nil, apierr.Invalid("previous_response_id", "previous_response_id is not supported: %s, so there is no earlier response to continue. "+
			"Send the whole conversation in input instead.", why)
	case present(w.Conversation):
		return nil, apierr.Invalid("conversation", "Conversations are not supported: %s. Send the whole conversation in input instead.", why)
	case w.Store != nil && *w.Store:
		return nil, apierr.Invalid("store", "store: true is not supported: %s, so they cannot be retrieved later. Send store: false or omit it.", why)
	case present(w.Prompt):
		return nil, apierr.Invalid("prompt", "Prompt templates are not supported: %s. Send input instead.", why)
	}
	msgs, e := r.messages()
	if e != nil {
		return nil, e
	}
	set, toolEchoes, e := r.tools()
	if e != nil {
		return nil, e
	}
	choice, tools, e := r.toolChoice(set)
	if e != nil {
		return nil, e
	}
	rf, textEcho, e := r.format()
	if e != nil {
		return nil, e
	}
	req := oaiwire.Request{Model: r.Model, Messages: msgs, Stream: r.Stream, Temperature: w.Temperature, TopP: w.TopP,
		ResponseFormat: rf}
	if r.Stream {
		req.StreamOptions = &oaiwire.StreamOptions{IncludeUsage: true}
	}
	if w.MaxOutputTokens != nil {
		req.MaxCompletionTokens = w.MaxOutputTokens
	}
	if len(tools) > 0 {
		req.Tools, req.ToolChoice, req.ParallelToolCalls = tools, choice, w.ParallelToolCalls
	}
	req.WebSearchOptions = set.searchOpts
	if w.Reasoning != nil && w.Reasoning.Effort != nil {
		req.ReasoningEffort = *w.Reasoning.Effort
	}
	if w.User != nil {
		req.User = *w.User
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, apierr.Internal(fmt.Errorf("responses: encode chat request: %w", err))
	}
	t := &Translation{Chat: body, Stream: r.Stream, base: r.base(toolEchoes, textEcho), names: set.names,
		searchParam: set.searchParam, encrypted: r.includesEncrypted()}
	return t, nil
}

// base is the Response object's echo of the request, before any output.
func (r *Request) base(tools []any, text json.RawMessage) Response {
	w := &r.w
	b := Response{Object: "response", Model: r.Model, Instructions: w.Instructions, MaxOutputTokens: w.MaxOutputTokens,
		Output: []any{}, ParallelToolCalls: true, Temperature: 1, TopP: 1, Text: text, ToolChoice: json.RawMessage(`"auto"`),
		Tools: tools, Truncation: "disabled", User: w.User, Metadata: w.Metadata,
		Reasoning: reasoningEcho{}}
	if w.ParallelToolCalls != nil {
		b.ParallelToolCalls = *w.ParallelToolCalls
	}
	if w.Temperature != nil {
		b.Temperature = *w.Temperature
	}
	if w.TopP != nil {
		b.TopP = *w.TopP
	}
	if present(w.ToolChoice) {
		b.ToolChoice = w.ToolChoice
	}
	if b.Metadata == nil {
		b.Metadata = map[string]string{}
	}
	if w.Reasoning != nil {
		b.Reasoning = reasoningEcho{Effort: w.Reasoning.Effort, Summary: w.Reasoning.Summary}
	}
	return b
}
