package providertest

import (
	"bytes"
	"net/http"
	"time"
)

// The reasoning scenarios (upstream model ids usage-gap, usage-stall and
// usage-late-end of the OpenAI fake, chat and Responses; thinking-gap and
// thinking-stall of the Anthropic fake) answer as a reasoning model does:
// the visible answer streams first, and the usage that comes last holds
// 20,000 reasoning tokens nobody saw. The usage is ReasoningPrompt input
// and ReasoningCompletion output tokens (Anthropic: AnthropicCompletion).
const (
	ReasoningPrompt     = 30
	ReasoningCompletion = 20_010 // of which ReasoningTokens were hidden
	ReasoningTokens     = 20_000
	AnthropicCompletion = 20_180
	// UsageGap is the silence between the visible answer and its usage
	// (or, for usage-late-end, between the usage and the stream's end):
	// long enough for a client that leaves after the answer to be gone
	// before the usage comes. A provider in front of these scenarios needs
	// a longer idle_timeout.
	UsageGap = time.Second
)

// reasoningChatUsage is the usage chunk of the chat reasoning scenarios.
var reasoningChatUsage = []byte(`data: {"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk","created":1741570283,"model":"o3-mini-2025-01-31","service_tier":"default","system_fingerprint":"fp_42bfad963b","choices":[],"usage":{"prompt_tokens":30,"completion_tokens":20010,"total_tokens":20040,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":20000,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}` + "\n\n")

// The Responses fixture's usage, and the reasoning scenarios' in its place.
var (
	responseUsage          = []byte(`"usage":{"input_tokens":12,"input_tokens_details":{"cached_tokens":0,"cache_write_tokens":0},"output_tokens":9,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":21}`)
	reasoningResponseUsage = []byte(`"usage":{"input_tokens":30,"input_tokens_details":{"cached_tokens":0,"cache_write_tokens":0},"output_tokens":20010,"output_tokens_details":{"reasoning_tokens":20000},"total_tokens":20040}`)
)

// reasoningCompletion answers the usage-gap scenario not streamed: the
// recorded completion, with the reasoning usage, after UsageGap.
func (f *OpenAI) reasoningCompletion(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
		f.noteCancel()
		return
	case <-time.After(UsageGap):
	}
	body := Fixture(f.t, "openai/chat_completion.json")
	usage := bytes.Index(body, []byte(`"usage": {`))
	end := bytes.Index(body, []byte(`"service_tier"`))
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(append(append([]byte(nil), body[:usage]...), `"usage": {"prompt_tokens": 30, "completion_tokens": 20010, "total_tokens": 20040, `+
		`"completion_tokens_details": {"reasoning_tokens": 20000}},
  `...), body[end:]...))
}

// reasoningStream answers a chat reasoning scenario from the recorded
// stream with usage.
func (f *OpenAI) reasoningStream(w http.ResponseWriter, r *http.Request, scenario string) {
	var answer [][]byte // role, content and finish chunks
	for _, ev := range bytes.SplitAfter(Fixture(f.t, "openai/chat_stream_usage.sse"), []byte("\n\n")) {
		if bytes.Contains(ev, []byte(`"usage":{`)) || bytes.HasPrefix(ev, []byte("data: [DONE]")) {
			break
		}
		answer = append(answer, ev)
	}
	done := []byte("data: [DONE]\n\n")
	switch scenario {
	case "usage-gap":
		f.gapped(w, r, answer, [][]byte{reasoningChatUsage, done}, UsageGap)
	case "usage-stall":
		f.gapped(w, r, answer, nil, -1)
	case "usage-late-end":
		f.gapped(w, r, append(answer, reasoningChatUsage), [][]byte{done}, UsageGap)
	}
}

// reasoningResponse answers a Responses reasoning scenario from the
// recorded stream (events, split after each event; the last is
// response.completed).
func (f *OpenAI) reasoningResponse(w http.ResponseWriter, r *http.Request, events [][]byte, scenario string) {
	var answer [][]byte
	var completed []byte
	for _, ev := range events {
		if bytes.HasPrefix(ev, []byte("event: response.completed")) {
			completed = bytes.Replace(ev, responseUsage, reasoningResponseUsage, 1)
			break
		}
		if len(ev) > 0 {
			answer = append(answer, ev)
		}
	}
	switch scenario {
	case "usage-gap":
		f.gapped(w, r, answer, [][]byte{completed}, UsageGap)
	case "usage-stall":
		f.gapped(w, r, answer, nil, -1)
	case "usage-late-end":
		// The body's end follows the last event after a gap, as the
		// Responses API's does over a real network; Codex CLI hangs up
		// at response.completed, before it.
		f.gapped(w, r, append(answer, completed), nil, UsageGap)
	}
}

// gapped writes the event stream before, then holds it for gap (a negative
// gap: until the request is cancelled), then writes after and ends the
// body. A request cancelled meanwhile is counted and gets nothing more.
func (l *requestLog) gapped(w http.ResponseWriter, r *http.Request, before, after [][]byte, gap time.Duration) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	write := func(evs [][]byte) bool {
		for _, ev := range evs {
			if _, err := w.Write(ev); err != nil {
				l.noteCancel()
				return false
			}
		}
		if rc.Flush() != nil {
			l.noteCancel()
			return false
		}
		return true
	}
	if !write(before) {
		return
	}
	var wait <-chan time.Time
	if gap >= 0 {
		t := time.NewTimer(gap)
		defer t.Stop()
		wait = t.C
	}
	select {
	case <-r.Context().Done():
		l.noteCancel()
		return
	case <-wait:
	}
	write(after)
}
