// Package providertest holds fakes of upstream vendors for tests: HTTP
// servers that speak a vendor's documented wire format from recorded
// fixtures under testdata/, and record what the gateway sent them.
package providertest

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:embed testdata
var fixtures embed.FS

// Fixture returns a recorded file, e.g. "openai/chat_completion.json".
func Fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := fixtures.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return b
}

// Received is one request the fake upstream got.
type Received struct {
	Header http.Header
	Body   []byte
	Model  string // the body's model field
}

// requestLog keeps what a fake upstream received, and how many requests
// the gateway abandoned mid-answer; each fake embeds one.
type requestLog struct {
	t         testing.TB
	mu        sync.Mutex
	received  []Received
	cancelled int // requests whose context ended before the answer did
}

// Cancelled counts requests the gateway abandoned mid-answer.
func (l *requestLog) Cancelled() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cancelled
}

func (l *requestLog) noteCancel() {
	l.mu.Lock()
	l.cancelled++
	l.mu.Unlock()
}

func (l *requestLog) add(r Received) {
	l.mu.Lock()
	l.received = append(l.received, r)
	l.mu.Unlock()
}

// Received returns a copy of the requests so far.
func (l *requestLog) Received() []Received {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Received(nil), l.received...)
}

// Last is the most recent request; the test fails when there was none.
func (l *requestLog) Last() Received {
	r := l.Received()
	if len(r) == 0 {
		l.t.Fatal("the fake upstream received no request")
	}
	return r[len(r)-1]
}

// OpenAI is a fake OpenAI-compatible upstream. The upstream model id in a
// request picks the scenario (see ServeHTTP), so one server covers every
// behaviour a test needs.
type OpenAI struct {
	*httptest.Server
	requestLog
	// background holds the background responses created (background.go);
	// under mu.
	background map[string]*bgResponse
}

// NewOpenAI starts a fake upstream; it is closed when the test ends.
func NewOpenAI(t testing.TB) *OpenAI {
	f := &OpenAI{requestLog: requestLog{t: t}}
	f.Server = httptest.NewServer(f)
	t.Cleanup(f.Close)
	return f
}

type request struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role string `json:"role"`
	} `json:"messages"`
}

// ServeHTTP answers POST /v1/chat/completions by scenario:
//
//	tool-call       a tool call, then text once the last message is a tool result
//	err-NNN         that status with the recorded error body (err-429-quota too)
//	malformed       200 with truncated JSON
//	slow            never answers (until the request is cancelled)
//	endless         a stream that never ends
//	paced           the recorded stream with 40ms between events
//	cut             a stream cut off after three chunks
//	midstream-error a stream with an error event after two chunks
//	stream-json     a stream request answered with a JSON error and status 200
//	usage-gap       a reasoning model's stream: the visible answer, UsageGap of
//	                silence, then the usage chunk (ReasoningCompletion) and
//	                [DONE]; not streamed: the completion after UsageGap
//	usage-stall     the visible answer, then silence until the request is cancelled
//	usage-late-end  the answer and the usage chunk, then UsageGap before [DONE]
//	anything else   the recorded completion or stream
//
// Requests cancelled during a gap, a stall or an endless stream are counted
// (Cancelled).
func (f *OpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.serveTranscription(w, r) { // audio.go
		return
	}
	if f.serveEmbeddings(w, r) { // embed.go
		return
	}
	if f.serveResponses(w, r) { // responses.go
		return
	}
	if f.serveImages(w, r) { // images.go
		return
	}
	if r.Method == http.MethodPost && r.URL.Path == "/v1/completions" {
		f.serveCompletion(w, r) // completions.go
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"fake upstream: %s","type":"invalid_request_error"}}`, err)
		return
	}
	f.add(Received{Header: r.Header.Clone(), Body: body, Model: req.Model})

	if strings.HasPrefix(req.Model, "err-") {
		f.fail(w, strings.TrimPrefix(req.Model, "err-"))
		return
	}
	afterTool := len(req.Messages) > 0 && req.Messages[len(req.Messages)-1].Role == "tool"
	switch req.Model {
	case "malformed":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-x","object":"chat.completion","choices":[{"index":0,`)
		return
	case "slow":
		<-r.Context().Done()
		f.noteCancel()
		return
	case "stream-json":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"error":{"message":"streaming is not supported for this model","type":"invalid_request_error"}}`)
		return
	}
	if !req.Stream && req.Model == "usage-gap" {
		f.reasoningCompletion(w, r)
		return
	}
	if !req.Stream {
		name := "chat_completion.json"
		if req.Model == "tool-call" {
			name = map[bool]string{false: "chat_tool_call.json", true: "chat_after_tool.json"}[afterTool]
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(Fixture(f.t, "openai/"+name))
		return
	}
	f.stream(w, r, req, afterTool)
}

func (f *OpenAI) fail(w http.ResponseWriter, code string) {
	status := map[string]int{"400": 400, "401": 401, "403": 403, "404": 404, "429": 429, "429-quota": 429,
		"500": 500, "502": 502, "503": 503, "504": 504, "529": 529}[code]
	if status == 0 {
		status = 500
	}
	name := "openai/error_" + strings.ReplaceAll(code, "-", "_") + ".json"
	body, err := fixtures.ReadFile("testdata/" + name)
	if err != nil {
		body = Fixture(f.t, "openai/error_500.json")
	}
	w.Header().Set("Content-Type", "application/json")
	if status == 429 || status == 503 {
		w.Header().Set("Retry-After", "7")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// stream writes SSE fixtures event by event, flushing each.
func (f *OpenAI) stream(w http.ResponseWriter, r *http.Request, req request, afterTool bool) {
	switch req.Model {
	case "usage-gap", "usage-stall", "usage-late-end":
		f.reasoningStream(w, r, req.Model)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	usage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	name := map[bool]string{false: "openai/chat_stream.sse", true: "openai/chat_stream_usage.sse"}[usage]
	if req.Model == "tool-call" && !afterTool {
		name = "openai/chat_stream_tool_usage.sse"
	}
	events := bytes.SplitAfter(Fixture(f.t, name), []byte("\n\n"))
	switch req.Model {
	case "endless":
		for i := 0; ; i++ {
			select {
			case <-r.Context().Done():
				f.noteCancel()
				return
			case <-time.After(5 * time.Millisecond):
			}
			_, _ = w.Write(events[1+i%8])
			_ = rc.Flush()
		}
	case "cut":
		events = events[:3]
	case "midstream-error":
		events = append(events[:2:2], []byte(`data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`+"\n\n"))
	}
	for _, ev := range events {
		if len(ev) == 0 {
			continue
		}
		if req.Model == "paced" {
			time.Sleep(40 * time.Millisecond)
		}
		if _, err := w.Write(ev); err != nil {
			f.noteCancel()
			return
		}
		_ = rc.Flush()
	}
}
