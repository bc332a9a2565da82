package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The usage the fake reports for its background responses: a completed
// one read BackgroundInput input tokens (BackgroundCached of them from the
// cache) and wrote BackgroundOutput output tokens, nearly all hidden
// reasoning; a cancelled one had written BackgroundCancelledOutput.
const (
	BackgroundInput           = 1_200
	BackgroundCached          = 200
	BackgroundOutput          = 60_000
	BackgroundReasoning       = 59_900
	BackgroundCancelledOutput = 2_000
)

// BackgroundNever is the upstream model whose background responses stay
// in progress until cancelled.
const BackgroundNever = "bg-never"

// bgResponse is one background response of the fake.
type bgResponse struct {
	model   string
	gets    int    // GETs so far
	status  string // queued, in_progress, completed, cancelled
	cancels int
}

// createBackground answers a background request as OpenAI does: at once,
// with the response queued and no usage. GETs then show it in_progress
// (the first) and completed with the Background* usage (from the second
// on), unless the model is BackgroundNever; POST /{id}/cancel cancels it.
func (f *OpenAI) createBackground(w http.ResponseWriter, model string) {
	f.mu.Lock()
	if f.background == nil {
		f.background = map[string]*bgResponse{}
	}
	id := fmt.Sprintf("resp_bg%040x", len(f.background)+1)
	b := &bgResponse{model: model, status: "queued"}
	f.background[id] = b
	body := f.backgroundBody(id, b)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// serveBackground answers GET /{id} and POST /{id}/cancel for the fake's
// background responses and reports whether r was one.
func (f *OpenAI) serveBackground(w http.ResponseWriter, r *http.Request, rest string) bool {
	id, cancel := strings.CutSuffix(strings.TrimPrefix(rest, "/"), "/cancel")
	f.mu.Lock()
	b, ok := f.background[id]
	f.mu.Unlock()
	if !ok || strings.Contains(id, "/") || (cancel != (r.Method == http.MethodPost)) || (!cancel && r.Method != http.MethodGet) {
		return false
	}
	f.add(Received{Header: r.Header.Clone(), Body: []byte(r.Method + " " + r.URL.RequestURI()), Model: b.model})
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case cancel && b.status == "completed":
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprint(w, `{"error":{"message":"Cannot cancel a completed response.","type":"invalid_request_error","param":null,"code":null}}`)
		return true
	case cancel:
		b.status = "cancelled"
		b.cancels++
	case b.status == "cancelled":
	case b.model == BackgroundNever:
		b.gets++
		b.status = "in_progress"
	default:
		b.gets++
		b.status = "in_progress"
		if b.gets >= 2 {
			b.status = "completed"
		}
	}
	_, _ = w.Write(f.backgroundBody(id, b))
	return true
}

// BackgroundCancels reports how many times the response id was cancelled.
func (f *OpenAI) BackgroundCancels(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b := f.background[id]; b != nil {
		return b.cancels
	}
	return 0
}

// BackgroundGets reports how many GETs of the response id the fake
// answered.
func (f *OpenAI) BackgroundGets(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if b := f.background[id]; b != nil {
		return b.gets
	}
	return 0
}

// backgroundBody is the Response object of b, the recorded response with
// its id, status, output and usage; f.mu held.
func (f *OpenAI) backgroundBody(id string, b *bgResponse) []byte {
	var obj map[string]any
	if err := json.Unmarshal(Fixture(f.t, "openai/response.json"), &obj); err != nil {
		f.t.Fatalf("fixture: %v", err)
	}
	obj["id"], obj["status"], obj["background"], obj["model"] = id, b.status, true, b.model
	// Until it ends the response has no usage: OpenAI sends "usage": null,
	// which the published schema does not allow, so the fake leaves it out.
	obj["completed_at"] = nil
	delete(obj, "usage")
	switch b.status {
	case "completed":
		obj["completed_at"] = 1741476600
		obj["usage"] = usageObject(BackgroundInput, BackgroundCached, BackgroundOutput, BackgroundReasoning)
	case "cancelled":
		obj["output"] = []any{}
		obj["usage"] = usageObject(BackgroundInput, 0, BackgroundCancelledOutput, BackgroundCancelledOutput)
	default:
		obj["output"] = []any{}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		f.t.Fatalf("background body: %v", err)
	}
	return out
}

func usageObject(in, cached, out, reasoning int) map[string]any {
	return map[string]any{
		"input_tokens":          in,
		"input_tokens_details":  map[string]any{"cached_tokens": cached},
		"output_tokens":         out,
		"output_tokens_details": map[string]any{"reasoning_tokens": reasoning},
		"total_tokens":          in + out,
	}
}
