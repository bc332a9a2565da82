package providertest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Billed is a fake OpenAI that bills as OpenAI does what a request's body
// does not show: a stored response's context is billed again as input of
// every response that continues it (previous_response_id); a stored prompt
// or a conversation adds HiddenInput tokens; built-in tools leave their call
// items (web_search_call, image_generation_call) in the answer; the answer
// names the service tier it ran at; audio parts and spoken answers are
// counted as audio tokens. It serves POST /v1/responses (plain and
// streamed) and POST /v1/chat/completions. Counts are deterministic: a
// body's input is its length in bytes / 4 (always below the gateway's
// byte bound), an answer's output is Output tokens (capped at
// max_output_tokens), of which Reasoning are reasoning.
type Billed struct {
	*httptest.Server
	requestLog

	mu          sync.Mutex
	Output      int64 // output tokens of every answer (default 100)
	Reasoning   int64 // of which reasoning (default 0)
	Searches    int64 // web_search_call items per answer with a web search tool (default 3)
	HiddenInput int64 // input a stored prompt or a conversation adds (default 50,000)
	stored      map[string]int64
	background  map[string]string // background response id → its final Response object
}

// NewBilled starts the fake; it is closed when the test ends.
func NewBilled(t testing.TB) *Billed {
	f := &Billed{requestLog: requestLog{t: t}, Output: 100, Searches: 3, HiddenInput: 50_000, stored: map[string]int64{},
		background: map[string]string{}}
	f.Server = httptest.NewServer(f)
	t.Cleanup(f.Close)
	return f
}

// Set changes the counts under the lock (tests call it between requests).
func (f *Billed) Set(fn func(f *Billed)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// billedRequest is what the fake reads of either request.
type billedRequest struct {
	Model              string            `json:"model"`
	Stream             bool              `json:"stream"`
	Background         bool              `json:"background"`
	Store              *bool             `json:"store"`
	PreviousResponseID string            `json:"previous_response_id"`
	Prompt             json.RawMessage   `json:"prompt"`
	Conversation       json.RawMessage   `json:"conversation"`
	MaxOutputTokens    int64             `json:"max_output_tokens"`
	MaxToolCalls       *int64            `json:"max_tool_calls"`
	ServiceTier        string            `json:"service_tier"`
	Tools              []json.RawMessage `json:"tools"`
	Modalities         []string          `json:"modalities"`
	Messages           []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// ServeHTTP answers the two endpoints, and GET /v1/responses/{id} of a
// background response (completed as soon as it is read).
func (f *Billed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if id, ok := strings.CutPrefix(r.URL.Path, "/v1/responses/"); ok && r.Method == http.MethodGet {
		f.add(Received{Header: r.Header.Clone(), Body: []byte(r.URL.RequestURI())})
		f.mu.Lock()
		obj, ok := f.background[id]
		f.mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":{"message":"Response with id '%s' not found.","type":"invalid_request_error","param":null,"code":null}}`, id)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, obj)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req billedRequest
	if r.Method != http.MethodPost || json.Unmarshal(body, &req) != nil {
		http.Error(w, `{"error":{"message":"fake: bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	f.add(Received{Header: r.Header.Clone(), Body: body, Model: req.Model})
	switch r.URL.Path {
	case "/v1/responses":
		f.respond(w, &req, body)
	case "/v1/chat/completions":
		f.chat(w, &req, body)
	default:
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
	}
}

// billedTier is the tier an answer names for the tier asked.
func billedTier(asked string) string {
	switch asked {
	case "priority", "flex", "scale":
		return asked
	}
	return "default"
}

func (f *Billed) respond(w http.ResponseWriter, req *billedRequest, body []byte) {
	f.mu.Lock()
	input := int64(len(body)) / 4
	if req.PreviousResponseID != "" {
		prev, ok := f.stored[req.PreviousResponseID]
		if !ok {
			f.mu.Unlock()
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":"Previous response with id '%s' not found.","type":"invalid_request_error","param":"previous_response_id","code":"previous_response_not_found"}}`, req.PreviousResponseID)
			return
		}
		input += prev
	}
	if len(req.Prompt) > 0 && string(req.Prompt) != "null" || len(req.Conversation) > 0 && string(req.Conversation) != "null" {
		input += f.HiddenInput
	}
	output, reasoning := f.Output, f.Reasoning
	if req.MaxOutputTokens > 0 {
		output = min(output, req.MaxOutputTokens)
	}
	items := f.toolItems(req)
	id := "resp_" + billedID()
	if req.Store == nil || *req.Store {
		f.stored[id] = input + output
	}
	f.mu.Unlock()

	text := `{"type":"message","id":"msg_` + billedID() + `","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Done.","annotations":[]}]}`
	usage := fmt.Sprintf(`{"input_tokens":%d,"input_tokens_details":{"cached_tokens":0},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":%d},"total_tokens":%d}`,
		input, output, reasoning, input+output)
	object := func(status, output, usage string) string {
		return fmt.Sprintf(`{"id":"%s","object":"response","created_at":1741476542,"status":"%s","model":"%s","output":[%s],"service_tier":"%s","usage":%s}`,
			id, status, req.Model, output, billedTier(req.ServiceTier), usage)
	}
	all := strings.Join(append(items, text), ",")
	if req.Background {
		f.mu.Lock()
		f.background[id] = object("completed", all, usage)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, object("queued", "", "null"))
		return
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, object("completed", all, usage))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	seq := 0
	event := func(name, data string) {
		fmt.Fprintf(w, "event: %s\ndata: {\"type\":\"%s\",\"sequence_number\":%d,%s}\n\n", name, name, seq, data)
		seq++
		_ = rc.Flush()
	}
	event("response.created", `"response":`+object("in_progress", "", "null"))
	for i, it := range append(items, text) {
		event("response.output_item.done", fmt.Sprintf(`"output_index":%d,"item":%s`, i, it))
	}
	event("response.output_text.delta", fmt.Sprintf(`"item_id":"msg_1","output_index":%d,"content_index":0,"delta":"Done."`, len(items)))
	event("response.completed", `"response":`+object("completed", all, usage))
}

// toolItems are the call items the request's built-in tools leave:
// Searches web searches (at most max_tool_calls), one image per image
// generation tool at its size and quality (1024x1024, high when auto).
// f.mu is held.
func (f *Billed) toolItems(req *billedRequest) []string {
	var items []string
	calls := int64(-1)
	if req.MaxToolCalls != nil {
		calls = *req.MaxToolCalls
	}
	for _, raw := range req.Tools {
		var t struct{ Type, Size, Quality string }
		_ = json.Unmarshal(raw, &t)
		n := int64(0)
		switch {
		case strings.HasPrefix(t.Type, "web_search"):
			n = f.Searches
		case t.Type == "image_generation":
			n = 1
		}
		for ; n > 0 && calls != 0; n-- {
			calls--
			if t.Type == "image_generation" {
				size, quality := t.Size, t.Quality
				if size == "" || size == "auto" {
					size = "1024x1024"
				}
				if quality == "" || quality == "auto" {
					quality = "high"
				}
				items = append(items, fmt.Sprintf(`{"type":"image_generation_call","id":"ig_%s","status":"completed","size":"%s","quality":"%s","output_format":"png","result":"aGk="}`,
					billedID(), size, quality))
				continue
			}
			items = append(items, `{"type":"web_search_call","id":"ws_`+billedID()+`","status":"completed","action":{"type":"search","query":"q"}}`)
		}
	}
	return items
}

// chat answers a chat completion; audio input parts count 100 audio tokens
// each, and a spoken answer's output is all audio.
func (f *Billed) chat(w http.ResponseWriter, req *billedRequest, body []byte) {
	f.mu.Lock()
	output := f.Output
	f.mu.Unlock()
	var audioIn int64
	for _, m := range req.Messages {
		audioIn += 100 * int64(strings.Count(string(m.Content), `"input_audio"`)/2) // type and member
	}
	input := int64(len(body))/4 + audioIn
	var audioOut int64
	for _, m := range req.Modalities {
		if m == "audio" {
			audioOut = output
		}
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"chatcmpl-%s","object":"chat.completion","created":1741569952,"model":"%s","choices":[{"index":0,"message":{"role":"assistant","content":"Done.","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],`+
		`"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":%d},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":%d,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"%s","system_fingerprint":"fp_fake"}`,
		billedID(), req.Model, input, output, input+output, audioIn, audioOut, billedTier(req.ServiceTier))
}

func billedID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Keep makes the fake hold a stored response id with tokens of context, as
// if it had answered it.
func (f *Billed) Keep(id string, tokens int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stored[id] = tokens
}
