package main

// The mock upstream: a stand-in for an OpenAI-compatible vendor that does
// what a real server must (read and parse the request body, answer with a
// realistic chat.completion or chat.completion.chunk stream) and nothing
// slower, so that the measured cost is the proxies' and not its own. It
// also answers Anthropic's Messages API (messages.go) and serves paced
// streams, a gap between chunks (paced.go).

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// streamContentChunks is how many content chunks a stream carries; every
// stream also has a finish chunk, so a client that did not ask for usage
// sees streamContentChunks+1 data events before [DONE].
const streamContentChunks = 20

// streamEvents is the number of data events (before [DONE]) a client
// without stream_options.include_usage must receive.
const streamEvents = streamContentChunks + 1

// completionWords make up the answer: 20 pieces, ~200 bytes together.
var completionWords = [streamContentChunks]string{
	"Sure! ", "Here is ", "a short ", "summary ", "of the ", "request: ", "the gateway ",
	"forwards ", "each call ", "to the ", "upstream, ", "patches the ", "model name, ",
	"records usage ", "and streams ", "every chunk ", "back without ", "buffering, ",
	"so latency ", "stays low.",
}

// chatRequest is the part of a request body the mock looks at.
type chatRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

var (
	bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	outPool  = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}
)

// upstream serves POST /v1/chat/completions and POST /v1/messages.
type upstream struct {
	seq     atomic.Uint64
	content []byte // the whole answer as a JSON string, for non-stream responses
	chunks  [streamContentChunks][]byte
	msg     *messagesMock
	pace    pacing // of the streams served at pacedPath
}

func newUpstream() *upstream {
	u := &upstream{pace: pacing{chunks: 20, gap: 500 * time.Millisecond}}
	var all []byte
	for i, w := range completionWords {
		all = append(all, w...)
		u.chunks[i] = jsonString(w)
	}
	u.content = jsonString(string(all))
	u.msg = newMessagesMock(completionWords[:])
	return u
}

func (u *upstream) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", u.chat)
	mux.HandleFunc("POST /v1/messages", u.messages)
	mux.HandleFunc("POST "+pacedPath, u.paced(u.pace))
	return mux
}

func jsonString(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

func (u *upstream) chat(w http.ResponseWriter, r *http.Request) {
	req, c, ok := u.readChat(w, r)
	if !ok {
		return
	}
	out := outPool.Get().(*[]byte)
	defer outPool.Put(out)
	if !req.Stream {
		*out = u.appendCompletion((*out)[:0], &c)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*out)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	usage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	send := func(b []byte) bool {
		if _, err := w.Write(b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	// Content chunks 0..19, then the finish chunk (-1), then usage if asked.
	for i := 0; i <= len(u.chunks); i++ {
		n := i
		if i == len(u.chunks) {
			n = -1
		}
		*out = u.appendChunk((*out)[:0], &c, n, usage)
		if !send(*out) {
			return
		}
	}
	if usage {
		*out = u.appendUsageChunk((*out)[:0], &c)
		if !send(*out) {
			return
		}
	}
	send([]byte("data: [DONE]\n\n"))
}

// readChat reads and checks a chat request and returns it with the
// completion that answers it; it answers 400 itself and returns false when
// the request is not one.
func (u *upstream) readChat(w http.ResponseWriter, r *http.Request) (chatRequest, completion, bool) {
	in := bodyPool.Get().(*bytes.Buffer)
	in.Reset()
	defer bodyPool.Put(in)
	var req chatRequest
	if _, err := in.ReadFrom(r.Body); err != nil {
		badRequest(w, "reading the body failed")
		return req, completion{}, false
	}
	if err := json.Unmarshal(in.Bytes(), &req); err != nil || req.Model == "" || len(req.Messages) == 0 {
		badRequest(w, "invalid request body")
		return req, completion{}, false
	}
	promptTokens := 0
	for _, m := range req.Messages {
		promptTokens += (len(m.Content) + 3) / 4
	}
	return req, completion{
		id:      "chatcmpl-bench" + strconv.FormatUint(u.seq.Add(1), 10),
		created: time.Now().Unix(),
		model:   jsonString(req.Model),
		prompt:  promptTokens,
		answer:  (len(u.content) + 1) / 4,
	}, true
}

func badRequest(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write([]byte(`{"error":{"message":` + string(jsonString(msg)) + `,"type":"invalid_request_error"}}`))
}

// completion is what varies from one response to the next.
type completion struct {
	id             string
	created        int64
	model          []byte // JSON string, quotes included
	prompt, answer int
}

func (c *completion) appendHead(b []byte, object string) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, c.id...)
	b = append(b, `","object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, c.created, 10)
	b = append(b, `,"model":`...)
	b = append(b, c.model...)
	return append(b, `,"system_fingerprint":"fp_bench"`...)
}

func (c *completion) appendUsage(b []byte) []byte {
	b = append(b, `"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(c.prompt), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(c.answer), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(c.prompt+c.answer), 10)
	return append(b, `,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`...)
}

// appendCompletion appends a whole non-stream chat.completion.
func (u *upstream) appendCompletion(b []byte, c *completion) []byte {
	b = c.appendHead(b, "chat.completion")
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	b = append(b, u.content...)
	b = append(b, `,"refusal":null},"logprobs":null,"finish_reason":"stop"}],`...)
	b = c.appendUsage(b)
	return append(b, "}\n"...)
}

// appendChunk appends one "data: {chunk}\n\n" event: content piece i (the
// pieces repeat past the 20th, for paced streams), or the finish chunk
// when i < 0. Like OpenAI, chunks carry "usage":null when
// the client asked for a usage chunk.
func (u *upstream) appendChunk(b []byte, c *completion, i int, usage bool) []byte {
	b = append(b, "data: "...)
	b = c.appendHead(b, "chat.completion.chunk")
	switch {
	case i == 0:
		b = append(b, `,"choices":[{"index":0,"delta":{"role":"assistant","content":`...)
		b = append(b, u.chunks[i]...)
		b = append(b, `,"refusal":null},"logprobs":null,"finish_reason":null}]`...)
	case i > 0:
		b = append(b, `,"choices":[{"index":0,"delta":{"content":`...)
		b = append(b, u.chunks[i%len(u.chunks)]...)
		b = append(b, `},"logprobs":null,"finish_reason":null}]`...)
	default:
		b = append(b, `,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]`...)
	}
	if usage {
		b = append(b, `,"usage":null`...)
	}
	return append(b, "}\n\n"...)
}

// appendUsageChunk appends the usage-only chunk (choices: []).
func (u *upstream) appendUsageChunk(b []byte, c *completion) []byte {
	b = append(b, "data: "...)
	b = c.appendHead(b, "chat.completion.chunk")
	b = append(b, `,"choices":[],`...)
	b = c.appendUsage(b)
	return append(b, "}\n\n"...)
}
