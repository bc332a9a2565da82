//go:build unix

package app_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// agentScript is the two-turn loop a scripted fake vendor plays with an
// agent CLI: turn 1 calls the client's shell tool with Command; turn 2,
// once a request carries Marker (what Command prints, which the command's
// own text does not contain), answers with a text that contains it.
type agentScript struct {
	Command string // e.g. echo modelgate-$((6*7))-TOKEN
	Marker  string // e.g. modelgate-42-TOKEN
}

// newAgentScript makes a script whose marker is unique to the test, so an
// answer that contains it proves the command ran on the client's side.
func newAgentScript(t *testing.T) agentScript {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	tok := hex.EncodeToString(b)
	return agentScript{Command: "echo modelgate-$((6*7))-" + tok, Marker: "modelgate-42-" + tok}
}

// shellArgs is the arguments of each known shell tool for command: Claude
// Code's Bash, Codex's exec_command, and older Codex shell tools.
var shellArgs = []struct {
	name string
	args func(cmd string) any
}{
	{"Bash", func(cmd string) any { return map[string]any{"command": cmd, "description": "Print the marker"} }},
	{"exec_command", func(cmd string) any { return map[string]any{"cmd": cmd} }},
	{"shell_command", func(cmd string) any { return map[string]any{"command": cmd} }},
	{"shell", func(cmd string) any { return map[string]any{"command": []string{"bash", "-lc", cmd}} }},
}

// agentTurn is what the fake decided for one request.
type agentTurn struct {
	Path     string
	Model    string
	Stream   bool
	Tool     string // the shell tool called, "" when the answer is text
	Answered bool   // the answer quotes the marker
	Header   http.Header
	Body     []byte
}

// agentVendor is a scripted fake vendor speaking OpenAI's Responses API
// (/v1/responses), chat completions (/v1/chat/completions) and Anthropic's
// Messages API (/v1/messages), streamed or not, each in its documented
// wire format, with usage on every answer.
type agentVendor struct {
	*httptest.Server
	script agentScript
	mu     sync.Mutex
	turns  []agentTurn
}

func newAgentVendor(t *testing.T, s agentScript) *agentVendor {
	v := &agentVendor{script: s}
	v.Server = httptest.NewServer(v)
	t.Cleanup(v.Close)
	return v
}

// Turns returns the requests the fake answered, in order.
func (v *agentVendor) Turns() []agentTurn {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]agentTurn(nil), v.turns...)
}

// agentRequest is the part of the three request shapes the script reads.
type agentRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Tools  []struct {
		Name     string `json:"name"` // Responses and Messages
		Function struct {
			Name string `json:"name"`
		} `json:"function"` // chat completions
	} `json:"tools"`
}

// decide picks the turn: the answer once the tool's output is in the
// request, else a call of the first shell tool offered, else plain text.
func (v *agentVendor) decide(path string, header http.Header, body []byte) (agentTurn, error) {
	var req agentRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return agentTurn{}, fmt.Errorf("decode %s request: %w", path, err)
	}
	turn := agentTurn{Path: path, Model: req.Model, Stream: req.Stream, Header: header, Body: body}
	if bytes.Contains(body, []byte(v.script.Marker)) {
		turn.Answered = true
	} else {
		offered := map[string]bool{}
		for _, tl := range req.Tools {
			offered[tl.Name], offered[tl.Function.Name] = true, true
		}
		for _, s := range shellArgs {
			if offered[s.name] {
				turn.Tool = s.name
				break
			}
		}
	}
	v.mu.Lock()
	v.turns = append(v.turns, turn)
	v.mu.Unlock()
	return turn, nil
}

func (turn agentTurn) text(s agentScript) string {
	if turn.Answered {
		return "The command printed " + s.Marker + "."
	}
	return "Nothing to run."
}

func (turn agentTurn) args(s agentScript) string {
	for _, sh := range shellArgs {
		if sh.name == turn.Tool {
			return mustJSON(sh.args(s.Command))
		}
	}
	return "{}"
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// ServeHTTP answers the three APIs; anything else is a 404 the test sees.
func (v *agentVendor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	turn, err := v.decide(r.URL.Path, r.Header.Clone(), body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch r.URL.Path {
	case "/v1/responses":
		v.responses(w, turn)
	case "/v1/chat/completions":
		v.chat(w, turn)
	case "/v1/messages":
		v.messages(w, turn)
	default:
		http.NotFound(w, r)
	}
}

// sseWriter writes server-sent events, each flushed at once.
type sseWriter struct{ w http.ResponseWriter }

func startSSE(w http.ResponseWriter) sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	return sseWriter{w}
}

// event writes one event; name "" writes a data-only event (chat).
func (s sseWriter) event(name string, data any) {
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	d, ok := data.(string)
	if !ok {
		d = mustJSON(data)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", d)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, mustJSON(v))
}

// Token counts every answer reports: 120 in (20 of them cached), 15 out.
const (
	agentInputTokens  = 120
	agentCachedTokens = 20
	agentOutputTokens = 15
)

// responses answers in OpenAI's Responses API format.
func (v *agentVendor) responses(w http.ResponseWriter, turn agentTurn) {
	var item map[string]any
	if turn.Tool != "" {
		item = map[string]any{"type": "function_call", "id": "fc_agent1", "call_id": "call_agent1", "name": turn.Tool,
			"arguments": turn.args(v.script), "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": "msg_agent1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": turn.text(v.script), "annotations": []any{}}}}
	}
	resp := func(status string, output []any) map[string]any {
		r := map[string]any{"id": "resp_agent1", "object": "response", "created_at": 1767225600, "status": status,
			"model": turn.Model, "output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}}
		if status == "completed" {
			r["usage"] = map[string]any{"input_tokens": agentInputTokens, "input_tokens_details": map[string]any{"cached_tokens": agentCachedTokens},
				"output_tokens": agentOutputTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
				"total_tokens": agentInputTokens + agentOutputTokens}
		}
		return r
	}
	if !turn.Stream {
		writeJSON(w, resp("completed", []any{item}))
		return
	}
	s := startSSE(w)
	s.event("response.created", map[string]any{"type": "response.created", "sequence_number": 0, "response": resp("in_progress", []any{})})
	s.event("response.in_progress", map[string]any{"type": "response.in_progress", "sequence_number": 1, "response": resp("in_progress", []any{})})
	added := map[string]any{}
	for k, val := range item {
		added[k] = val
	}
	added["status"] = "in_progress"
	if turn.Tool != "" {
		added["arguments"] = ""
	} else {
		added["content"] = []any{}
	}
	s.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "sequence_number": 2, "output_index": 0, "item": added})
	if turn.Tool != "" {
		s.event("response.function_call_arguments.delta", map[string]any{"type": "response.function_call_arguments.delta", "sequence_number": 3,
			"item_id": "fc_agent1", "output_index": 0, "delta": turn.args(v.script)})
		s.event("response.function_call_arguments.done", map[string]any{"type": "response.function_call_arguments.done", "sequence_number": 4,
			"item_id": "fc_agent1", "output_index": 0, "arguments": turn.args(v.script)})
	} else {
		text := turn.text(v.script)
		part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
		s.event("response.content_part.added", map[string]any{"type": "response.content_part.added", "sequence_number": 3,
			"item_id": "msg_agent1", "output_index": 0, "content_index": 0, "part": part})
		s.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "sequence_number": 4,
			"item_id": "msg_agent1", "output_index": 0, "content_index": 0, "delta": text, "logprobs": []any{}})
		s.event("response.output_text.done", map[string]any{"type": "response.output_text.done", "sequence_number": 5,
			"item_id": "msg_agent1", "output_index": 0, "content_index": 0, "text": text, "logprobs": []any{}})
		part["text"] = text
		s.event("response.content_part.done", map[string]any{"type": "response.content_part.done", "sequence_number": 6,
			"item_id": "msg_agent1", "output_index": 0, "content_index": 0, "part": part})
	}
	s.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "sequence_number": 7, "output_index": 0, "item": item})
	s.event("response.completed", map[string]any{"type": "response.completed", "sequence_number": 8, "response": resp("completed", []any{item})})
}

// chat answers in OpenAI's chat completions format.
func (v *agentVendor) chat(w http.ResponseWriter, turn agentTurn) {
	usage := map[string]any{"prompt_tokens": agentInputTokens, "completion_tokens": agentOutputTokens,
		"total_tokens": agentInputTokens + agentOutputTokens, "prompt_tokens_details": map[string]any{"cached_tokens": agentCachedTokens}}
	msg := map[string]any{"role": "assistant", "content": turn.text(v.script)}
	finish := "stop"
	var calls []any
	if turn.Tool != "" {
		calls = []any{map[string]any{"id": "call_agent1", "type": "function",
			"function": map[string]any{"name": turn.Tool, "arguments": turn.args(v.script)}}}
		msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}
		finish = "tool_calls"
	}
	base := map[string]any{"id": "chatcmpl-agent1", "created": 1767225600, "model": turn.Model}
	if !turn.Stream {
		r := map[string]any{"object": "chat.completion", "usage": usage,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}}
		for k, val := range base {
			r[k] = val
		}
		writeJSON(w, r)
		return
	}
	s := startSSE(w)
	chunk := func(delta map[string]any, finish any, usage any) map[string]any {
		c := map[string]any{"object": "chat.completion.chunk", "choices": []any{}}
		if delta != nil {
			c["choices"] = []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}
		}
		if usage != nil {
			c["usage"] = usage
		}
		for k, val := range base {
			c[k] = val
		}
		return c
	}
	s.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil))
	if turn.Tool != "" {
		s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_agent1", "type": "function",
			"function": map[string]any{"name": turn.Tool, "arguments": ""}}}}, nil, nil))
		s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0,
			"function": map[string]any{"arguments": turn.args(v.script)}}}}, nil, nil))
	} else {
		s.event("", chunk(map[string]any{"content": turn.text(v.script)}, nil, nil))
	}
	s.event("", chunk(map[string]any{}, finish, nil))
	s.event("", chunk(nil, nil, usage))
	s.event("", "[DONE]")
}

// messages answers in Anthropic's Messages API format.
func (v *agentVendor) messages(w http.ResponseWriter, turn agentTurn) {
	block := map[string]any{"type": "text", "text": turn.text(v.script)}
	stop := "end_turn"
	if turn.Tool != "" {
		var input any
		_ = json.Unmarshal([]byte(turn.args(v.script)), &input)
		block = map[string]any{"type": "tool_use", "id": "toolu_agent1", "name": turn.Tool, "input": input}
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": agentInputTokens - agentCachedTokens, "cache_read_input_tokens": agentCachedTokens,
		"cache_creation_input_tokens": 0, "output_tokens": agentOutputTokens}
	msg := map[string]any{"id": "msg_agent1", "type": "message", "role": "assistant", "model": turn.Model,
		"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage}
	if !turn.Stream {
		writeJSON(w, msg)
		return
	}
	s := startSSE(w)
	start := map[string]any{}
	for k, val := range msg {
		start[k] = val
	}
	start["content"], start["stop_reason"] = []any{}, nil
	start["usage"] = map[string]any{"input_tokens": agentInputTokens - agentCachedTokens, "cache_read_input_tokens": agentCachedTokens,
		"cache_creation_input_tokens": 0, "output_tokens": 1}
	s.event("message_start", map[string]any{"type": "message_start", "message": start})
	s.event("ping", map[string]any{"type": "ping"})
	if turn.Tool != "" {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": "toolu_agent1", "name": turn.Tool, "input": map[string]any{}}})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": turn.args(v.script)}})
	} else {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": turn.text(v.script)}})
	}
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": agentOutputTokens}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}
