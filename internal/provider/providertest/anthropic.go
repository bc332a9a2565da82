package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Anthropic is a fake Anthropic Messages API upstream. The upstream model
// id in a request picks the scenario (see ServeHTTP).
type Anthropic struct {
	*httptest.Server
	requestLog
}

// NewAnthropic starts a fake Anthropic upstream; it is closed when the
// test ends.
func NewAnthropic(t testing.TB) *Anthropic {
	f := &Anthropic{requestLog: requestLog{t: t}}
	f.Server = httptest.NewServer(f)
	t.Cleanup(f.Close)
	return f
}

type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
		} `json:"content"`
	} `json:"messages"`
}

// afterTool tells whether the last turn carries a tool_result.
func (r anthropicRequest) afterTool() bool {
	if len(r.Messages) == 0 {
		return false
	}
	last := r.Messages[len(r.Messages)-1]
	for _, b := range last.Content {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

// ServeHTTP answers POST /v1/messages/count_tokens (14 tokens) and POST
// /v1/messages by scenario:
//
//	tool-call       a tool_use, then text once the last turn holds a tool_result
//	err-NNN         that status with the recorded error body (529, 400, 429; others 500)
//	midstream-error a stream with an overloaded_error event after two text deltas
//	thinking-gap    the recorded answer with thinking, UsageGap of silence before
//	                its message_delta, whose output_tokens are AnthropicCompletion
//	thinking-stall  the answer with thinking, then silence until cancelled
//	anything else   the recorded message or stream
//
// A request without x-api-key or anthropic-version gets a 401.
func (f *Anthropic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens" {
		f.countTokens(w, r)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		anthropicError(w, http.StatusNotFound, "not_found_error", "Not found")
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "fake upstream: "+err.Error())
		return
	}
	f.add(Received{Header: r.Header.Clone(), Body: body, Model: req.Model})
	if r.Header.Get("X-Api-Key") == "" || r.Header.Get("Anthropic-Version") == "" {
		anthropicError(w, http.StatusUnauthorized, "authentication_error", "x-api-key header is required")
		return
	}
	if code, ok := strings.CutPrefix(req.Model, "err-"); ok {
		status := map[string]int{"400": 400, "429": 429, "529": 529}[code]
		b, err := fixtures.ReadFile("testdata/anthropic/error_" + code + ".json")
		if status == 0 || err != nil {
			anthropicError(w, http.StatusInternalServerError, "api_error", "Internal server error")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(b)
		return
	}
	tool := req.Model == "tool-call" && !req.afterTool()
	if !req.Stream {
		name := "message.json"
		if req.Model == "tool-call" {
			name = map[bool]string{true: "tool_use.json", false: "after_tool.json"}[tool]
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(Fixture(f.t, "anthropic/"+name))
		return
	}
	name := map[bool]string{true: "anthropic/stream_tool.sse", false: "anthropic/stream.sse"}[tool]
	events := bytes.SplitAfter(Fixture(f.t, name), []byte("\n\n"))
	if req.Model == "thinking-gap" || req.Model == "thinking-stall" {
		f.thinkingStream(w, r, req.Model)
		return
	}
	if req.Model == "midstream-error" {
		events = append(events[:5:5], []byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"))
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for _, ev := range events {
		if len(ev) == 0 {
			continue
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		_ = rc.Flush()
	}
}

// countTokens answers POST /v1/messages/count_tokens with 14 tokens (the
// request is recorded like any other).
func (f *Anthropic) countTokens(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "fake upstream: "+err.Error())
		return
	}
	f.add(Received{Header: r.Header.Clone(), Body: body, Model: req.Model})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"input_tokens":14}`))
}

func anthropicError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(msg)
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%s}}`, typ, b)
}

// thinkingStream answers a thinking scenario from the recorded answer with
// thinking: everything up to its last text delta, then the gap, then the
// rest with message_delta's output_tokens raised to AnthropicCompletion.
func (f *Anthropic) thinkingStream(w http.ResponseWriter, r *http.Request, scenario string) {
	events := bytes.SplitAfter(Fixture(f.t, "anthropic/thinking.sse"), []byte("\n\n"))
	last := 0
	for i, ev := range events {
		if bytes.Contains(ev, []byte(`"text_delta"`)) {
			last = i
		}
	}
	answer, rest := events[:last+1], events[last+1:]
	if scenario == "thinking-stall" {
		f.gapped(w, r, answer, nil, -1)
		return
	}
	for i, ev := range rest {
		rest[i] = bytes.Replace(ev, []byte(`"output_tokens":180}`), []byte(`"output_tokens":20180}`), 1)
	}
	f.gapped(w, r, answer, rest, UsageGap)
}
