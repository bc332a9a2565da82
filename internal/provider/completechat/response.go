package completechat

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/internal/provider"
)

// textCompletion is OpenAI's text_completion object; streamed chunks have
// the same shape.
type textCompletion struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	Created           int64           `json:"created"`
	Model             string          `json:"model"`
	SystemFingerprint string          `json:"system_fingerprint,omitempty"`
	Choices           []textChoice    `json:"choices"`
	Usage             json.RawMessage `json:"usage,omitempty"`
}

type textChoice struct {
	Text         string    `json:"text"`
	Index        int       `json:"index"`
	Logprobs     *struct{} `json:"logprobs"` // always null: chat models give no legacy logprobs
	FinishReason *string   `json:"finish_reason"`
}

// chatAnswer is what the translation reads of a chat.completion or a
// chat.completion.chunk.
type chatAnswer struct {
	ID                string          `json:"id"`
	Created           int64           `json:"created"`
	SystemFingerprint string          `json:"system_fingerprint"`
	Usage             json.RawMessage `json:"usage"`
	Choices           []struct {
		Index        int       `json:"index"`
		Message      *chatText `json:"message"`
		Delta        *chatText `json:"delta"`
		FinishReason *string   `json:"finish_reason"`
	} `json:"choices"`
}

type chatText struct {
	Content *string `json:"content"`
	Refusal *string `json:"refusal"`
}

// text is the generated text; a refusal stands in for missing content.
func (t *chatText) text() string {
	switch {
	case t == nil:
		return ""
	case t.Content != nil && *t.Content != "":
		return *t.Content
	case t.Refusal != nil:
		return *t.Refusal
	}
	return ""
}

// Response translates a chat.completion into the text_completion the
// legacy API answers: choices[].message.content becomes choices[].text,
// logprobs is null, the usage is kept, and model is the public id.
func Response(chat []byte, public string) ([]byte, error) {
	var a chatAnswer
	if err := json.Unmarshal(chat, &a); err != nil {
		return nil, fmt.Errorf("chat completion: %w", err)
	}
	out := a.head(public)
	out.Choices = make([]textChoice, 0, len(a.Choices))
	for _, c := range a.Choices {
		f := finishReason(c.FinishReason)
		if f == nil {
			stop := "stop"
			f = &stop
		}
		out.Choices = append(out.Choices, textChoice{Text: c.Message.text(), Index: c.Index, FinishReason: f})
	}
	return json.Marshal(out)
}

// head is the text_completion's members other than choices.
func (a *chatAnswer) head(public string) textCompletion {
	out := textCompletion{ID: completionID(a.ID), Object: "text_completion", Created: a.Created, Model: public,
		SystemFingerprint: a.SystemFingerprint}
	if present(a.Usage) {
		out.Usage = a.Usage
	}
	return out
}

// completionID turns a chat completion id into a completion id (cmpl-...).
func completionID(id string) string {
	if rest, ok := strings.CutPrefix(id, "chatcmpl-"); ok {
		return "cmpl-" + rest
	}
	return "cmpl-" + id
}

// finishReason maps a chat finish reason onto the legacy API's stop,
// length and content_filter; a tool call (never asked for here) reads as
// stop. nil stays nil (a chunk before the end).
func finishReason(f *string) *string {
	if f == nil || *f == "" {
		return nil
	}
	switch *f {
	case "stop", "length", "content_filter":
		return f
	}
	stop := "stop"
	return &stop
}

// stream translates a chat stream chunk by chunk; it keeps only the
// current chunk.
type stream struct {
	in     provider.ChatStream
	public string
	chunk  []byte
	err    error
}

var (
	_ provider.CompletionStream = (*stream)(nil)
	_ provider.Buffered         = (*stream)(nil)
)

func newStream(in provider.ChatStream, public string) *stream {
	return &stream{in: in, public: public}
}

// Next reads chat chunks until one translates to something the client
// needs: new text, a finish reason, or the usage. Chunks that carry only
// the assistant role are skipped.
func (s *stream) Next() bool {
	if s.err != nil {
		return false
	}
	for s.in.Next() {
		chunk, ok, err := s.translate(s.in.Chunk())
		if err != nil {
			s.err = provider.BadResponse("completechat", err)
			return false
		}
		if ok {
			s.chunk = chunk
			return true
		}
	}
	return false
}

func (s *stream) translate(chunk []byte) ([]byte, bool, error) {
	var a chatAnswer
	if err := json.Unmarshal(chunk, &a); err != nil {
		return nil, false, fmt.Errorf("chat chunk: %w", err)
	}
	out := a.head(s.public)
	out.Choices = make([]textChoice, 0, len(a.Choices))
	for _, c := range a.Choices {
		text, f := c.Delta.text(), finishReason(c.FinishReason)
		if text == "" && f == nil {
			continue
		}
		out.Choices = append(out.Choices, textChoice{Text: text, Index: c.Index, FinishReason: f})
	}
	if len(out.Choices) == 0 && out.Usage == nil {
		return nil, false, nil
	}
	b, err := json.Marshal(out)
	return b, true, err
}

func (s *stream) Chunk() []byte                 { return s.chunk }
func (s *stream) Usage() (provider.Usage, bool) { return s.in.Usage() }
func (s *stream) Close() error                  { return s.in.Close() }

// Err is the translation's failure, else the chat stream's.
func (s *stream) Err() error {
	if s.err != nil {
		return s.err
	}
	return s.in.Err()
}

// Buffered reports whether the chat stream has its next chunk in memory.
func (s *stream) Buffered() bool {
	b, ok := s.in.(provider.Buffered)
	return ok && b.Buffered()
}
