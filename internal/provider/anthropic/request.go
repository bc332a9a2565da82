package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/anthropicwire"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

// jsonObjectInstruction is added to system for response_format json_object:
// Anthropic has no JSON mode, so the model is asked for JSON in words.
const jsonObjectInstruction = "Respond only with a single valid JSON object. Do not add any text before or after it."

// thinkingBudgets maps reasoning_effort to an extended thinking budget.
var thinkingBudgets = map[string]int64{"low": 1024, "medium": 4096, "high": 16384}

// translated is a request ready to send, with what the answer's
// translation needs to know about it.
type translated struct {
	body      []byte
	jsonTool  string // the forced tool standing for response_format json_schema
	maxTokens int64  // the max_tokens sent, thinking budget included
}

// translate builds the Anthropic request for req. Errors are
// *apierr.Error values meant for the client. What happens to each OpenAI
// parameter:
//
//	messages            system/developer → system; tool/function → tool_result in a user turn;
//	                    consecutive same-role turns merged; empty text dropped
//	max_completion_tokens, max_tokens → max_tokens (else the provider's max_tokens, else the catalog's MaxOutput, else DefaultMaxTokens)
//	temperature         clamped to Anthropic's 0..1 (OpenAI allows up to 2)
//	top_p, stop, user   top_p (dropped when temperature is set too), stop_sequences, metadata.user_id
//	tools, functions    tools (parameters → input_schema, default an empty object schema)
//	tool_choice         auto → auto, required → any, named → tool, none → none
//	parallel_tool_calls false → disable_parallel_tool_use on the tool choice
//	response_format     json_schema → a forced tool whose input is returned as content;
//	                    json_object → a system instruction asking for JSON only
//	web_search_options  the web search server tool (web_search_20250305, max_uses webSearchMaxUses,
//	                    user_location); search_context_size dropped
//	reasoning_effort    low/medium/high → thinking budget 1024/4096/16384 (temperature, top_p
//	                    dropped; off with forced tools or when the last assistant turn used tools
//	                    without its thinking_blocks)
//	thinking_blocks     an assistant turn's thinking and redacted_thinking blocks, first in the turn
//	                    (dropped when thinking is off)
//	n > 1               rejected (400, param n)
//	input_audio, file   rejected (400, param messages)
//	seed, logprobs, top_logprobs, frequency_penalty, presence_penalty, image detail,
//	metadata, reasoning_content of earlier turns: dropped
func (c *Client) translate(req *provider.ChatRequest, stream bool) (*translated, error) {
	r, err := oaiwire.ParseRequest(req.Body)
	if err != nil {
		return nil, apierr.Invalid("", "The request body is not a valid chat completion request: %v", err)
	}
	out := anthropicwire.MessagesRequest{Model: req.UpstreamModel, Stream: stream}
	if r.N != nil && *r.N > 1 {
		return nil, apierr.Invalid("n", "n greater than 1 is not supported by this model's provider.")
	}
	var system []anthropicwire.Block
	if system, out.Messages, err = convertMessages(r.Messages); err != nil {
		return nil, err
	}
	if len(out.Messages) == 0 {
		return nil, apierr.Invalid("messages", "messages must contain at least one user or assistant message.")
	}
	// The client's limit, else the operator's configured default, else the
	// catalog's output limit, else DefaultMaxTokens.
	maxTokens := r.MaxOutput()
	for _, v := range []int64{c.maxTokens, req.MaxOutput, DefaultMaxTokens} {
		if maxTokens <= 0 {
			maxTokens = v
		}
	}
	if r.Temperature != nil {
		t := min(max(*r.Temperature, 0), 1) // Anthropic's range is 0..1; OpenAI's is 0..2
		out.Temperature = &t
	}
	if out.Temperature == nil {
		// Newer Claude models refuse temperature and top_p together;
		// temperature wins, as Anthropic recommends changing only one.
		out.TopP = r.TopP
	}
	out.StopSequences = r.Stop
	if r.User != "" {
		out.Metadata = &anthropicwire.Metadata{UserID: r.User}
	}
	tr := &translated{}
	if err := applyTools(r, &out); err != nil {
		return nil, err
	}
	if o := r.WebSearchOptions; o != nil {
		t, err := searchTool(o)
		if err != nil {
			return nil, fmt.Errorf("anthropic %s: %w", c.name, err)
		}
		out.Tools = append(out.Tools, t)
	}
	if rf := r.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_object":
			system = append(system, anthropicwire.Block{Type: "text", Text: jsonObjectInstruction})
		case "json_schema":
			if rf.JSONSchema == nil || rf.JSONSchema.Name == "" {
				return nil, apierr.Invalid("response_format", "response_format json_schema needs a json_schema with a name.")
			}
			tr.jsonTool = rf.JSONSchema.Name
			out.Tools = append(out.Tools, anthropicwire.Tool{Name: rf.JSONSchema.Name, Description: rf.JSONSchema.Description,
				InputSchema: schemaOrEmpty(rf.JSONSchema.Schema)})
			if len(out.Tools) == 1 || out.ToolChoice == nil || out.ToolChoice.Type == "none" {
				out.ToolChoice = &anthropicwire.ToolChoice{Type: "tool", Name: rf.JSONSchema.Name}
			}
		}
	}
	if b, ok := thinkingBudgets[r.ReasoningEffort]; ok && tr.jsonTool == "" && thinkingReplayed(out.Messages) &&
		(out.ToolChoice == nil || out.ToolChoice.Type == "auto" || out.ToolChoice.Type == "none") {
		// Extended thinking needs max_tokens above the budget, and allows
		// neither temperature nor top_p changes. It is left off when the
		// last assistant turn used tools without its signed thinking blocks
		// (an OpenAI client that does not keep thinking_blocks): Anthropic
		// wants them back then.
		out.Thinking = &anthropicwire.Thinking{Type: "enabled", BudgetTokens: &b}
		if maxTokens <= b {
			maxTokens += b
		}
		out.Temperature, out.TopP = nil, nil
	}
	if out.Thinking == nil {
		dropThinking(out.Messages) // earlier turns' thinking only goes with thinking on
	}
	if len(system) > 0 {
		out.System = &anthropicwire.Content{Blocks: system}
	}
	out.MaxTokens, tr.maxTokens = &maxTokens, maxTokens
	tr.body, err = json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("anthropic %s: encode request: %w", c.name, err)
	}
	return tr, nil
}

// webSearchTool is the version of Anthropic's web search server tool the
// adapter sends.
const webSearchTool = "web_search_20250305"

// webSearchMaxUses bounds the searches of one answer: the built-in tool
// calls the gateway reserves for when a request sets no bound
// (surcharge.DefaultMaxToolCalls).
const webSearchMaxUses = 10

// WebSearch reports that Anthropic has a web search of its own
// (web_search_options turns it on); the vendor bills each search.
func (c *Client) WebSearch() bool { return true }

// searchTool is the web search server tool for web_search_options.
// Its own members (max_uses, user_location) go in the tool's Extra.
func searchTool(o *oaiwire.WebSearchOptions) (anthropicwire.Tool, error) {
	t := anthropicwire.Tool{Type: webSearchTool, Name: "web_search",
		Extra: map[string]json.RawMessage{"max_uses": strconv.AppendInt(nil, webSearchMaxUses, 10)}}
	if l := o.UserLocation; l != nil {
		a := l.Approximate
		if a.City != "" || a.Country != "" || a.Region != "" || a.Timezone != "" {
			b, err := json.Marshal(anthropicwire.UserLocation{Type: "approximate", City: a.City, Country: a.Country, Region: a.Region, Timezone: a.Timezone})
			if err != nil {
				return t, fmt.Errorf("web search user_location: %w", err)
			}
			t.Extra["user_location"] = b
		}
	}
	return t, nil
}

// applyTools translates tools, legacy functions and the tool choice.
func applyTools(r *oaiwire.Request, out *anthropicwire.MessagesRequest) error {
	for _, f := range r.AllTools() {
		out.Tools = append(out.Tools, anthropicwire.Tool{Name: f.Name, Description: f.Description, InputSchema: schemaOrEmpty(f.Parameters)})
	}
	ch, err := r.Choice()
	if err != nil {
		return apierr.Invalid("tool_choice", "%v", err)
	}
	switch ch.Mode {
	case "auto":
		out.ToolChoice = &anthropicwire.ToolChoice{Type: "auto"}
	case "required":
		out.ToolChoice = &anthropicwire.ToolChoice{Type: "any"}
	case "function":
		out.ToolChoice = &anthropicwire.ToolChoice{Type: "tool", Name: ch.Name}
	case "none":
		out.ToolChoice = &anthropicwire.ToolChoice{Type: "none"}
	}
	if r.ParallelToolCalls != nil && !*r.ParallelToolCalls && len(out.Tools) > 0 {
		if out.ToolChoice == nil {
			out.ToolChoice = &anthropicwire.ToolChoice{Type: "auto"}
		}
		if out.ToolChoice.Type != "none" {
			t := true
			out.ToolChoice.DisableParallelToolUse = &t
		}
	}
	return nil
}

// thinkingReplayed reports whether thinking may be turned on: the last
// assistant turn, when it used tools, starts with its thinking.
func thinkingReplayed(msgs []anthropicwire.Message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != "assistant" {
			continue
		}
		for _, b := range m.Content.Blocks {
			if b.Type == "tool_use" {
				t := m.Content.Blocks[0].Type
				return t == "thinking" || t == "redacted_thinking"
			}
		}
		return true
	}
	return true
}

// dropThinking removes earlier turns' thinking blocks.
func dropThinking(msgs []anthropicwire.Message) {
	for i := range msgs {
		kept := msgs[i].Content.Blocks[:0]
		for _, b := range msgs[i].Content.Blocks {
			if b.Type != "thinking" && b.Type != "redacted_thinking" {
				kept = append(kept, b)
			}
		}
		msgs[i].Content.Blocks = kept
	}
}

// thinkingBlocks are an assistant message's thinking_blocks as content
// blocks (message i, for errors).
func thinkingBlocks(i int, tbs []oaiwire.ThinkingBlock) ([]anthropicwire.Block, error) {
	var out []anthropicwire.Block
	for j, tb := range tbs {
		switch {
		case tb.Type == "thinking" && tb.Signature != "":
			text := ""
			if tb.Thinking != nil {
				text = *tb.Thinking
			}
			out = append(out, anthropicwire.Block{Type: "thinking", Thinking: text, Signature: tb.Signature})
		case tb.Type == "redacted_thinking" && tb.Data != "":
			out = append(out, anthropicwire.Block{Type: "redacted_thinking", Data: tb.Data})
		default:
			return nil, apierr.Invalid("messages", "messages[%d].thinking_blocks[%d]: expected a thinking block with a signature "+
				"or a redacted_thinking block with data.", i, j)
		}
	}
	return out, nil
}

func schemaOrEmpty(s json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(s); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		return s
	}
	return json.RawMessage(`{"type":"object","properties":{}}`)
}

// convertMessages splits system text from the conversation and merges
// consecutive turns of one role, as Anthropic requires alternation.
func convertMessages(msgs []oaiwire.Message) ([]anthropicwire.Block, []anthropicwire.Message, error) {
	var (
		system []anthropicwire.Block
		out    []anthropicwire.Message
		legacy int    // legacy function calls seen, for their made-up ids
		lastFn string // id of the latest legacy function call
	)
	add := func(role string, blocks []anthropicwire.Block) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content.Blocks = append(out[n-1].Content.Blocks, blocks...)
			return
		}
		out = append(out, anthropicwire.Message{Role: role, Content: anthropicwire.Content{Blocks: blocks}})
	}
	for i, m := range msgs {
		switch m.Role {
		case "system", "developer":
			if s := m.Content.String(); s != "" {
				system = append(system, anthropicwire.Block{Type: "text", Text: s})
			}
		case "user":
			bs, err := contentBlocks(i, m.Content)
			if err != nil {
				return nil, nil, err
			}
			add("user", bs)
		case "assistant":
			bs, err := thinkingBlocks(i, m.ThinkingBlocks) // thinking comes first
			if err != nil {
				return nil, nil, err
			}
			text, err := contentBlocks(i, m.Content)
			if err != nil {
				return nil, nil, err
			}
			bs = append(bs, text...)
			for j, tc := range m.ToolCalls {
				in, err := arguments(tc.Function.Arguments)
				if err != nil {
					return nil, nil, apierr.Invalid("messages", "messages[%d].tool_calls[%d].function.arguments: %v", i, j, err)
				}
				bs = append(bs, anthropicwire.Block{Type: "tool_use", ID: tc.ID, Name: tc.Function.Name, Input: in})
			}
			if fc := m.FunctionCall; fc != nil {
				in, err := arguments(fc.Arguments)
				if err != nil {
					return nil, nil, apierr.Invalid("messages", "messages[%d].function_call.arguments: %v", i, err)
				}
				legacy++
				lastFn = fmt.Sprintf("toolu_function_%d", legacy)
				bs = append(bs, anthropicwire.Block{Type: "tool_use", ID: lastFn, Name: fc.Name, Input: in})
			}
			add("assistant", bs)
		case "tool", "function":
			bs, err := contentBlocks(i, m.Content)
			if err != nil {
				return nil, nil, err
			}
			id := m.ToolCallID
			if m.Role == "function" {
				id = lastFn
			}
			res := anthropicwire.Block{Type: "tool_result", ToolUseID: id}
			if len(bs) > 0 {
				res.Content = &anthropicwire.Content{Blocks: bs}
			}
			add("user", []anthropicwire.Block{res})
		default:
			return nil, nil, apierr.Invalid("messages", "messages[%d].role %q is not supported by this model's provider.", i, m.Role)
		}
	}
	return system, out, nil
}

// arguments checks a tool call's arguments are a JSON object.
func arguments(s string) (json.RawMessage, error) {
	t := bytes.TrimSpace([]byte(s))
	if len(t) == 0 {
		return json.RawMessage(`{}`), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(t, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("not a valid JSON object")
	}
	return json.RawMessage(t), nil
}

// OutputBound is the max_tokens the request is sent with: the client's
// limit, else the configured or catalog one, raised above the thinking
// budget reasoning_effort asks for. A request the adapter will refuse
// bounds nothing (0).
func (c *Client) OutputBound(req *provider.ChatRequest) int64 {
	tr, err := c.translate(req, false)
	if err != nil {
		return 0
	}
	return tr.maxTokens
}
