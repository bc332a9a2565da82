package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// serveCompletion answers POST /v1/completions (OpenAI's legacy text
// completions) by scenario, like chat:
//
//	err-NNN         that status with the recorded error body
//	slow            never answers (until the request is cancelled)
//	endless         a stream that never ends
//	midstream-error a stream with an error event after two chunks
//	anything else   the recorded text_completion, or its stream (with the
//	                usage chunk when stream_options.include_usage is set)
//
// A body without a prompt gets a 400, as OpenAI answers.
func (f *OpenAI) serveCompletion(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		request
		Prompt json.RawMessage `json:"prompt"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"fake upstream: %s","type":"invalid_request_error"}}`, err)
		return
	}
	f.add(Received{Header: r.Header.Clone(), Body: body, Model: req.Model})
	if code, ok := strings.CutPrefix(req.Model, "err-"); ok {
		f.fail(w, code)
		return
	}
	if len(req.Prompt) == 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":{"message":"you must provide a prompt parameter","type":"invalid_request_error","param":"prompt","code":null}}`)
		return
	}
	if req.Model == "slow" {
		<-r.Context().Done()
		f.noteCancel()
		return
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(Fixture(f.t, "openai/completion.json"))
		return
	}
	usage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	name := map[bool]string{false: "openai/completion_stream.sse", true: "openai/completion_stream_usage.sse"}[usage]
	events := bytes.SplitAfter(Fixture(f.t, name), []byte("\n\n"))
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	switch req.Model {
	case "endless":
		for i := 0; ; i++ {
			select {
			case <-r.Context().Done():
				f.noteCancel()
				return
			case <-time.After(5 * time.Millisecond):
			}
			_, _ = w.Write(events[i%7])
			_ = rc.Flush()
		}
	case "midstream-error":
		events = append(events[:2:2], []byte(`data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`+"\n\n"))
	}
	for _, ev := range events {
		if len(ev) == 0 {
			continue
		}
		if _, err := w.Write(ev); err != nil {
			f.noteCancel()
			return
		}
		_ = rc.Flush()
	}
}
