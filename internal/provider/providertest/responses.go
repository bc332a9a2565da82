package providertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// StoredResponseID is the id of the response the fake OpenAI upstream has
// stored (GET /v1/responses/{id} finds it; any other id is a 404).
const StoredResponseID = "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b"

// serveResponses answers OpenAI's Responses API, at /v1/responses and at
// Azure's v1 path /openai/v1/responses, and reports whether r was one:
//
//	POST, model tool-call    a function_call, then text once input holds a function_call_output
//	POST, model err-NNN      that status with the recorded error body
//	POST, midstream-error    a stream with an error event after the first delta
//	POST, cut                a stream cut off after four events
//	POST, slow               never answers (until the request is cancelled)
//	POST, usage-gap          a reasoning model's stream: the visible answer, UsageGap
//	                         of silence, then response.completed (ReasoningCompletion)
//	POST, usage-stall        the visible answer, then silence until cancelled
//	POST, usage-late-end     the whole stream, then UsageGap before the body ends
//	POST, anything else      the recorded response or stream
//	GET  /{id}               the stored response for StoredResponseID, else a 404
//	POST background: true    a background response (background.go), then
//	GET  /{id}, POST /{id}/cancel  its progress and its cancel
//
// POSTs are logged like chat requests; a GET is logged with its request
// URI as Body.
func (f *OpenAI) serveResponses(w http.ResponseWriter, r *http.Request) bool {
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/responses")
	if !ok {
		if rest, ok = strings.CutPrefix(r.URL.Path, "/openai/v1/responses"); !ok {
			return false
		}
	}
	if f.serveBackground(w, r, rest) {
		return true
	}
	switch {
	case rest == "" && r.Method == http.MethodPost:
		f.createResponse(w, r)
	case strings.HasPrefix(rest, "/") && r.Method == http.MethodGet:
		f.add(Received{Header: r.Header.Clone(), Body: []byte(r.URL.RequestURI())})
		id := strings.TrimPrefix(rest, "/")
		if id != StoredResponseID {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":{"message":"Response with id '%s' not found.","type":"invalid_request_error","param":null,"code":null}}`, id)
			return true
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(Fixture(f.t, "openai/response.json"))
	default:
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
	}
	return true
}

func (f *OpenAI) createResponse(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model      string          `json:"model"`
		Stream     bool            `json:"stream"`
		Background bool            `json:"background"`
		Input      json.RawMessage `json:"input"`
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
	if req.Background && !req.Stream {
		f.createBackground(w, req.Model)
		return
	}
	if req.Model == "slow" {
		<-r.Context().Done()
		f.noteCancel()
		return
	}
	if !req.Stream {
		name := "openai/response.json"
		if req.Model == "tool-call" && !bytes.Contains(req.Input, []byte(`"function_call_output"`)) {
			name = "openai/response_tool_call.json"
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(Fixture(f.t, name))
		return
	}
	events := bytes.SplitAfter(Fixture(f.t, "openai/response_stream.sse"), []byte("\n\n"))
	switch req.Model {
	case "usage-gap", "usage-stall", "usage-late-end":
		f.reasoningResponse(w, r, events, req.Model)
		return
	case "cut":
		events = events[:4]
	case "midstream-error":
		events = append(events[:5:5], []byte(`event: error`+"\n"+
			`data: {"type":"error","sequence_number":5,"code":"server_error","message":"The server had an error while processing your request.","param":null}`+"\n\n"))
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
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
