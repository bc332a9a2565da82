package main

// The mock upstream's Anthropic side: POST /v1/messages answered as
// Anthropic's Messages API does, with a Message or its event stream, the
// same 20 pieces of text as the chat mock, and as cheaply (pooled buffers,
// the invariant events prebuilt once).

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// messagesStreamEvents is how many events a streamed Message carries:
// message_start, content_block_start, ping, a content_block_delta per
// piece, content_block_stop, message_delta and message_stop.
const messagesStreamEvents = 3 + streamContentChunks + 3

// messagesRequest is the part of a Messages request body the mock looks
// at. system and each message's content may be a string or blocks; their
// JSON length stands in for their tokens.
type messagesRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// messagesMock holds the prebuilt parts of every Messages answer.
type messagesMock struct {
	text   []byte   // the whole answer's content block, for non-stream Messages
	output int      // output tokens of every answer
	deltas [][]byte // content_block_start, ping, the text deltas and content_block_stop, as whole events
	stop   []byte   // message_stop, as a whole event
}

func newMessagesMock(pieces []string) *messagesMock {
	m := &messagesMock{}
	var all []byte
	m.deltas = append(m.deltas,
		sseEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
		sseEvent("ping", `{"type": "ping"}`)) // Anthropic's own spacing
	for _, p := range pieces {
		all = append(all, p...)
		m.deltas = append(m.deltas, sseEvent("content_block_delta",
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+string(jsonString(p))+`}}`))
	}
	m.deltas = append(m.deltas, sseEvent("content_block_stop", `{"type":"content_block_stop","index":0}`))
	m.stop = sseEvent("message_stop", `{"type":"message_stop"}`)
	m.text = append(append([]byte(`[{"type":"text","text":`), jsonString(string(all))...), "}]"...)
	m.output = (len(all) + 3) / 4
	return m
}

func sseEvent(name, data string) []byte { return []byte("event: " + name + "\ndata: " + data + "\n\n") }

// messages serves POST /v1/messages. Like Anthropic it wants x-api-key and
// anthropic-version (401 without), and a model, max_tokens and messages
// (400 without).
func (u *upstream) messages(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Api-Key") == "" || r.Header.Get("Anthropic-Version") == "" {
		anthropicError(w, http.StatusUnauthorized, "authentication_error", "x-api-key and anthropic-version are required")
		return
	}
	in := bodyPool.Get().(*bytes.Buffer)
	in.Reset()
	defer bodyPool.Put(in)
	var req messagesRequest
	if _, err := in.ReadFrom(r.Body); err != nil {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "reading the body failed")
		return
	}
	if err := json.Unmarshal(in.Bytes(), &req); err != nil || req.Model == "" || req.MaxTokens < 1 || len(req.Messages) == 0 {
		anthropicError(w, http.StatusBadRequest, "invalid_request_error", "invalid request body: model, max_tokens and messages are required")
		return
	}
	input := (len(req.System) + 3) / 4
	for _, m := range req.Messages {
		input += (len(m.Content) + 3) / 4
	}
	msg := message{id: "msg_bench" + strconv.FormatUint(u.seq.Add(1), 10), model: jsonString(req.Model), input: input, output: u.msg.output}
	out := outPool.Get().(*[]byte)
	defer outPool.Put(out)
	if !req.Stream {
		*out = u.msg.appendMessage((*out)[:0], &msg)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*out)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(b []byte) bool {
		if _, err := w.Write(b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	if !send(msg.appendStart((*out)[:0])) {
		return
	}
	for _, e := range u.msg.deltas {
		if !send(e) {
			return
		}
	}
	if !send(msg.appendDelta((*out)[:0])) {
		return
	}
	send(u.msg.stop)
}

// anthropicError answers with Anthropic's error shape.
func anthropicError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"type":"error","error":{"type":"` + typ + `","message":` + string(jsonString(msg)) + `}}`))
}

// message is what varies from one Messages answer to the next.
type message struct {
	id            string
	model         []byte // JSON string, quotes included
	input, output int
}

func (m *message) appendHead(b []byte) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, m.id...)
	b = append(b, `","type":"message","role":"assistant","model":`...)
	return append(b, m.model...)
}

// appendUsage appends the usage object with output tokens out.
func (m *message) appendUsage(b []byte, out int) []byte {
	b = append(b, `"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(m.input), 10)
	b = append(b, `,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(out), 10)
	return append(b, '}')
}

// appendMessage appends a whole non-stream Message.
func (mm *messagesMock) appendMessage(b []byte, m *message) []byte {
	b = m.appendHead(b)
	b = append(b, `,"content":`...)
	b = append(b, mm.text...)
	b = append(b, `,"stop_reason":"end_turn","stop_sequence":null,`...)
	b = m.appendUsage(b, m.output)
	return append(b, "}\n"...)
}

// appendStart appends the message_start event (usage so far: the input,
// one output token).
func (m *message) appendStart(b []byte) []byte {
	b = append(b, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":"...)
	b = m.appendHead(b)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,`...)
	b = m.appendUsage(b, 1)
	return append(b, "}}\n\n"...)
}

// appendDelta appends the message_delta event: the stop reason and the
// cumulative usage, as Anthropic's API sends it.
func (m *message) appendDelta(b []byte) []byte {
	b = append(b, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},"...)
	b = m.appendUsage(b, m.output)
	return append(b, "}\n\n"...)
}
