package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/modelgate/modelgate/internal/jsonx"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/anthropicwire"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
	"github.com/modelgate/modelgate/internal/redact"
	"github.com/modelgate/modelgate/internal/sse"
)

// ChatStream sends a streamed request and translates its events as they
// arrive.
func (c *Client) ChatStream(ctx context.Context, req *provider.ChatRequest) (provider.ChatStream, error) {
	tr, err := c.translate(req, true)
	if err != nil {
		return nil, err
	}
	k := c.start(ctx)
	resp, err := c.send(k, tr.body, true)
	if err != nil {
		k.Release()
		return nil, err
	}
	if !provider.IsEventStream(resp.Header.Get("Content-Type")) {
		defer k.Release()
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(k.Reader(resp.Body), c.maxError))
		if e, ok := errorIn(b); ok {
			return nil, eventError(c.name, c.secrets, e)
		}
		return nil, provider.BadResponse(c.name, fmt.Errorf("stream answered with Content-Type %q", resp.Header.Get("Content-Type")))
	}
	return c.newStream(k, resp.Body, req, tr.jsonTool), nil
}

func (c *Client) newStream(k *provider.Call, body io.ReadCloser, req *provider.ChatRequest, jsonTool string) *stream {
	return &stream{name: c.name, secrets: c.secrets, SSEBody: provider.NewSSEBody(k, body), now: c.now,
		model: req.PublicModel, includeUsage: req.IncludeUsage, jsonTool: jsonTool, blocks: map[int]int{}, thinking: map[int]string{},
		thought: reasoningCount{tok: c.tokenizer(req)}}
}

// stream translates Anthropic's SSE events into chunks one by one; it
// keeps only the current chunk, the index of each open tool call and the
// bounded count of the thinking delivered so far.
type stream struct {
	name    string
	secrets *redact.Redactor // redacts an error event (only)
	provider.SSEBody
	now          func() time.Time
	model        string
	includeUsage bool
	jsonTool     string

	id        string
	created   int64
	blocks    map[int]int    // content block index → tool call index; -1 for the json_schema tool
	thinking  map[int]string // open thinking block index → its signature so far
	tools     int
	jsonMode  bool // the json_schema tool was used
	usage     anthropicwire.Usage
	thought   reasoningCount
	hasUsage  bool
	finished  bool // a stop_reason was seen
	usageSent bool
	chunk     []byte
	err       error

	// ev is the current event, decoded into scratchDelta and
	// scratchBlock (see decode).
	ev           anthropicwire.StreamEvent
	scratchDelta anthropicwire.Delta
	scratchBlock anthropicwire.ResponseBlock
}

var (
	_ provider.ChatStream = (*stream)(nil)
	_ provider.Buffered   = (*stream)(nil)
)

// Next reads upstream events until one yields a chunk.
func (s *stream) Next() bool {
	if s.err != nil || s.Closed() {
		return false
	}
	for {
		ev, err := s.R.Next()
		if err != nil {
			return s.fail(err)
		}
		if ev.Type == anthropicwire.EventContentBlockStart && serverBlock(ev.Data) {
			continue
		}
		e := s.decode()
		if err := json.Unmarshal(ev.Data, e); err != nil {
			s.err = provider.BadResponse(s.name, fmt.Errorf("stream event %q: %w", ev.Type, err))
			return false
		}
		ch, done, err := s.translate(e)
		if err != nil {
			s.err = err
			return false
		}
		if ch != nil {
			return s.emit(ch)
		}
		if done {
			return s.end()
		}
	}
}

// decode readies the stream's event for decoding the next one into. The
// delta and the content block, one of which most events have, are decoded
// into the stream's own (zeroed) rather than new ones: an absent member
// then reads as a zero one, which translate treats alike (a delta or block
// of no known type is skipped). A citation keeps its storage from event to
// event. The message, usage and error stay nil when absent, as
// translate tells those apart.
func (s *stream) decode() *anthropicwire.StreamEvent {
	s.scratchDelta = anthropicwire.Delta{Citation: s.scratchDelta.Citation[:0]}
	s.scratchBlock = anthropicwire.ResponseBlock{}
	s.ev = anthropicwire.StreamEvent{Delta: &s.scratchDelta, ContentBlock: &s.scratchBlock}
	return &s.ev
}

// serverBlock reports whether data is a content_block_start whose block
// the translation does not deliver (a server tool's call or result, or a
// type yet unknown): one that translate would skip, so it is not decoded
// (anthropicwire keeps such a block whole, and a web search's results
// run to kilobytes). Data that is not valid JSON is left to the decoder
// to report.
func serverBlock(data []byte) bool {
	if !json.Valid(data) {
		return false
	}
	if t, _ := jsonx.Field(data, "type"); string(t) != `"`+anthropicwire.EventContentBlockStart+`"` {
		return false
	}
	b, _ := jsonx.Field(data, "content_block")
	if jsonx.Kind(b) != "object" {
		return false
	}
	t, _ := jsonx.Field(b, "type")
	switch string(t) {
	case `"text"`, `"thinking"`, `"redacted_thinking"`, `"tool_use"`:
		return false
	}
	return true
}

// translate turns one event into a chunk (nil for none); done is set by
// message_stop.
func (s *stream) translate(e *anthropicwire.StreamEvent) (*oaiwire.Chunk, bool, error) {
	switch e.Type {
	case "message_start":
		if e.Message == nil {
			return nil, false, provider.BadResponse(s.name, errors.New("message_start without message"))
		}
		s.id, s.created = "chatcmpl-"+e.Message.ID, s.now().Unix()
		s.usage = e.Message.Usage
		s.hasUsage = true
		return s.delta(oaiwire.Delta{Role: "assistant", Content: oaiwire.Ptr("")}), false, nil
	case "content_block_start":
		b := e.ContentBlock
		if b == nil {
			return nil, false, nil
		}
		switch b.Type {
		case "text":
			if b.Text != "" {
				return s.delta(oaiwire.Delta{Content: oaiwire.Ptr(b.Text)}), false, nil
			}
		case "thinking":
			s.thinking[e.Index] = b.Signature
			if b.Thinking != "" {
				s.thought.add(b.Thinking)
				return s.delta(oaiwire.Delta{ReasoningContent: oaiwire.Ptr(b.Thinking)}), false, nil
			}
		case "redacted_thinking":
			return s.delta(oaiwire.Delta{ThinkingBlocks: []oaiwire.ThinkingBlock{{Type: "redacted_thinking", Data: b.Data}}}), false, nil
		case "tool_use":
			if s.jsonTool != "" && b.Name == s.jsonTool {
				s.blocks[e.Index], s.jsonMode = -1, true
				return nil, false, nil
			}
			n := s.tools
			s.tools++
			s.blocks[e.Index] = n
			return s.delta(oaiwire.Delta{ToolCalls: []oaiwire.ToolCall{{Index: &n, ID: b.ID, Type: "function",
				Function: oaiwire.FunctionCall{Name: b.Name, Arguments: ""}}}}), false, nil
		}
	case "content_block_delta":
		d := e.Delta
		if d == nil {
			return nil, false, nil
		}
		switch d.Type {
		case "text_delta":
			return s.delta(oaiwire.Delta{Content: oaiwire.Ptr(d.Text)}), false, nil
		case "thinking_delta":
			s.thought.add(d.Thinking)
			return s.delta(oaiwire.Delta{ReasoningContent: oaiwire.Ptr(d.Thinking)}), false, nil
		case "signature_delta":
			if _, ok := s.thinking[e.Index]; ok {
				s.thinking[e.Index] += d.Signature
			}
		case "input_json_delta":
			n, ok := s.blocks[e.Index]
			if !ok || d.PartialJSON == "" {
				return nil, false, nil
			}
			if n < 0 {
				return s.delta(oaiwire.Delta{Content: oaiwire.Ptr(d.PartialJSON)}), false, nil
			}
			return s.delta(oaiwire.Delta{ToolCalls: []oaiwire.ToolCall{{Index: &n,
				Function: oaiwire.FunctionCall{Arguments: d.PartialJSON}}}}), false, nil
		}
	case "content_block_stop":
		// A thinking block ends with its signature: the thinking_blocks
		// delta without text closes the reasoning_content streamed for it.
		if sig, ok := s.thinking[e.Index]; ok {
			delete(s.thinking, e.Index)
			return s.delta(oaiwire.Delta{ThinkingBlocks: []oaiwire.ThinkingBlock{{Type: "thinking", Signature: sig}}}), false, nil
		}
	case "message_delta":
		s.usage.Merge(e.Usage)
		if e.Delta != nil && e.Delta.StopReason != "" {
			s.finished = true
			r := finishReason(string(e.Delta.StopReason), s.jsonMode && s.tools == 0)
			ch := s.delta(oaiwire.Delta{})
			ch.Choices[0].FinishReason = &r
			return ch, false, nil
		}
	case "message_stop":
		s.finished = true
		return nil, true, nil
	case "error":
		return nil, false, eventError(s.name, s.secrets, errorEvent(e.Error))
	}
	return nil, false, nil // ping, other blocks' content_block_stop, unknown events
}

// errorEvent is a stream's error event with its error member d (nil:
// none, which maps to an empty detail).
func errorEvent(d *anthropicwire.ErrorDetail) anthropicwire.ErrorBody {
	e := anthropicwire.ErrorBody{Type: anthropicwire.EventError}
	if d != nil {
		e.Error = *d
	}
	return e
}

func (s *stream) delta(d oaiwire.Delta) *oaiwire.Chunk {
	return &oaiwire.Chunk{ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: s.model,
		Choices: []oaiwire.ChunkChoice{{Index: 0, Delta: d}}}
}

func (s *stream) emit(ch *oaiwire.Chunk) bool {
	b, err := json.Marshal(ch)
	if err != nil {
		s.err = fmt.Errorf("anthropic %s: encode chunk: %w", s.name, err)
		return false
	}
	s.chunk = b
	return true
}

// end finishes a stream that stopped cleanly: one usage-only chunk when
// the client asked for it, then nothing.
func (s *stream) end() bool {
	if s.includeUsage && s.hasUsage && !s.usageSent {
		s.usageSent = true
		ch := &oaiwire.Chunk{ID: s.id, Object: "chat.completion.chunk", Created: s.created, Model: s.model,
			Choices: []oaiwire.ChunkChoice{}, Usage: oaiwire.NewUsage(s.thought.usage(s.usage))}
		return s.emit(ch)
	}
	s.Finish()
	return false
}

// fail records why reading stopped. A stream that ends after a stop_reason
// but without message_stop is accepted; one that ends before was cut off.
func (s *stream) fail(err error) bool {
	switch {
	case errors.Is(err, io.EOF) && s.finished:
		return s.end()
	case errors.Is(err, io.EOF):
		s.err = provider.BadResponse(s.name, errors.New("stream ended before it finished"))
	case errors.Is(err, sse.ErrEventTooLarge):
		s.err = provider.BadResponse(s.name, err)
	default:
		if e := provider.FromTransport(s.K.Ctx, s.name, err); e != nil {
			s.err = e
		} else {
			s.err = fmt.Errorf("anthropic %s: read stream: %w", s.name, err)
		}
	}
	return false
}

func (s *stream) Chunk() []byte { return s.chunk }
func (s *stream) Err() error    { return s.err }

// Usage is known once the stop_reason arrived (message_delta, which
// carries the output count); message_start's counts before it are
// partial. Reasoning tokens are the thinking_tokens reported, else the
// thinking delivered.
func (s *stream) Usage() (provider.Usage, bool) {
	if !s.hasUsage || !s.finished {
		return provider.Usage{}, false
	}
	return s.thought.usage(s.usage), true
}
