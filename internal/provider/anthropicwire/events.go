package anthropicwire

import (
	"encoding/json"
	"unicode/utf8"
)

// Stream event names: each event is sent as "event: NAME" with a data
// line whose JSON has the same "type".
const (
	EventMessageStart      = "message_start"
	EventContentBlockStart = "content_block_start"
	EventContentBlockDelta = "content_block_delta"
	EventContentBlockStop  = "content_block_stop"
	EventMessageDelta      = "message_delta"
	EventMessageStop       = "message_stop"
	EventPing              = "ping"
	EventError             = "error"
)

// Delta types of content_block_delta.
const (
	DeltaText      = "text_delta"
	DeltaInputJSON = "input_json_delta"
	DeltaThinking  = "thinking_delta"
	DeltaSignature = "signature_delta"
	DeltaCitations = "citations_delta"
)

// Event is one stream event that can encode itself.
type Event interface {
	EventName() string            // the event's name and type
	AppendJSON(dst []byte) []byte // appends the event's data JSON
}

// StreamEvent decodes any stream event's data: Type says which of the
// other members are set (message for message_start; index and
// content_block for content_block_start; index and delta for
// content_block_delta; index for content_block_stop; delta and usage for
// message_delta; error for error).
type StreamEvent struct {
	Type         string         `json:"type"`
	Message      *Response      `json:"message"`
	Index        int            `json:"index"`
	ContentBlock *ResponseBlock `json:"content_block"`
	Delta        *Delta         `json:"delta"`
	Usage        *DeltaUsage    `json:"usage"`
	Error        *ErrorDetail   `json:"error"`
}

// Delta is a content_block_delta's delta, by Type: text_delta (Text),
// input_json_delta (PartialJSON, a piece of the tool input's JSON text),
// thinking_delta (Thinking), signature_delta (Signature) or citations_delta
// (Citation, kept raw). Decoding a message_delta's delta fills StopReason
// and StopSequence instead; AppendJSON does not write them.
type Delta struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	PartialJSON  string          `json:"partial_json"`
	Thinking     string          `json:"thinking"`
	Signature    string          `json:"signature"`
	Citation     json.RawMessage `json:"citation"`
	StopReason   NullString      `json:"stop_reason"`
	StopSequence NullString      `json:"stop_sequence"`
}

// AppendJSON appends the delta's JSON with its type's members only.
func (d *Delta) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":`...)
	dst = AppendString(dst, d.Type)
	switch d.Type {
	case DeltaText:
		dst = append(dst, `,"text":`...)
		dst = AppendString(dst, d.Text)
	case DeltaInputJSON:
		dst = append(dst, `,"partial_json":`...)
		dst = AppendString(dst, d.PartialJSON)
	case DeltaThinking:
		dst = append(dst, `,"thinking":`...)
		dst = AppendString(dst, d.Thinking)
	case DeltaSignature:
		dst = append(dst, `,"signature":`...)
		dst = AppendString(dst, d.Signature)
	case DeltaCitations:
		dst = append(dst, `,"citation":`...)
		if len(d.Citation) == 0 {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, d.Citation...)
		}
	}
	return append(dst, '}')
}

// MessageStartEvent opens a stream with the Message so far (no content,
// stop_reason null, the input counts).
type MessageStartEvent struct{ Message Response }

// ContentBlockStartEvent opens content block Index with its initial state
// (text "", thinking "", tool_use with input {}).
type ContentBlockStartEvent struct {
	Index        int
	ContentBlock ResponseBlock
}

// ContentBlockDeltaEvent adds Delta to block Index.
type ContentBlockDeltaEvent struct {
	Index int
	Delta Delta
}

// ContentBlockStopEvent closes block Index.
type ContentBlockStopEvent struct{ Index int }

// MessageDeltaEvent carries the stop reason and the cumulative usage.
type MessageDeltaEvent struct {
	StopReason   string // "" encodes as null
	StopSequence string // "" encodes as null
	Usage        DeltaUsage
}

// MessageStopEvent ends a stream.
type MessageStopEvent struct{}

// PingEvent keeps a stream alive.
type PingEvent struct{}

// EventName is "message_start".
func (MessageStartEvent) EventName() string { return EventMessageStart }

// EventName is "content_block_start".
func (ContentBlockStartEvent) EventName() string { return EventContentBlockStart }

// EventName is "content_block_delta".
func (ContentBlockDeltaEvent) EventName() string { return EventContentBlockDelta }

// EventName is "content_block_stop".
func (ContentBlockStopEvent) EventName() string { return EventContentBlockStop }

// EventName is "message_delta".
func (MessageDeltaEvent) EventName() string { return EventMessageDelta }

// EventName is "message_stop".
func (MessageStopEvent) EventName() string { return EventMessageStop }

// EventName is "ping".
func (PingEvent) EventName() string { return EventPing }

// AppendJSON appends {"type":"message_start","message":{...}}.
func (e MessageStartEvent) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":"message_start","message":`...)
	dst = e.Message.AppendJSON(dst)
	return append(dst, '}')
}

// AppendJSON appends {"type":"content_block_start","index":N,"content_block":{...}}.
func (e ContentBlockStartEvent) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":"content_block_start","index":`...)
	dst = appendInt(dst, int64(e.Index))
	dst = append(dst, `,"content_block":`...)
	dst = e.ContentBlock.AppendJSON(dst)
	return append(dst, '}')
}

// AppendJSON appends {"type":"content_block_delta","index":N,"delta":{...}}.
func (e ContentBlockDeltaEvent) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":"content_block_delta","index":`...)
	dst = appendInt(dst, int64(e.Index))
	dst = append(dst, `,"delta":`...)
	dst = e.Delta.AppendJSON(dst)
	return append(dst, '}')
}

// AppendJSON appends {"type":"content_block_stop","index":N}.
func (e ContentBlockStopEvent) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":"content_block_stop","index":`...)
	dst = appendInt(dst, int64(e.Index))
	return append(dst, '}')
}

// AppendJSON appends {"type":"message_delta","delta":{"stop_reason",
// "stop_sequence"},"usage":{...}}.
func (e MessageDeltaEvent) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":"message_delta","delta":{"stop_reason":`...)
	dst = appendNull(dst, e.StopReason)
	dst = append(dst, `,"stop_sequence":`...)
	dst = appendNull(dst, e.StopSequence)
	dst = append(dst, `},"usage":`...)
	dst = e.Usage.AppendJSON(dst)
	return append(dst, '}')
}

// AppendJSON appends {"type":"message_stop"}.
func (MessageStopEvent) AppendJSON(dst []byte) []byte {
	return append(dst, `{"type":"message_stop"}`...)
}

// AppendJSON appends {"type":"ping"}.
func (PingEvent) AppendJSON(dst []byte) []byte { return append(dst, `{"type":"ping"}`...) }

// AppendEvent appends one SSE event, "event: NAME\ndata: DATA\n\n". data
// must be a single line (JSON as this package and encoding/json write it
// is).
func AppendEvent(dst []byte, name string, data []byte) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, name...)
	dst = append(dst, "\ndata: "...)
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}

// AppendEventOf appends e as one SSE event: its name, then its JSON.
func AppendEventOf(dst []byte, e Event) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, e.EventName()...)
	dst = append(dst, "\ndata: "...)
	dst = e.AppendJSON(dst)
	return append(dst, '\n', '\n')
}

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string, as Anthropic writes them: '"',
// '\\' and control characters escaped, <, > and & literal, U+2028 and
// U+2029 escaped (as encoding/json does), invalid UTF-8 replaced by
// U+FFFD.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
