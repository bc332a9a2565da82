package anthropicwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/jsonx"
)

// Response is a Message object: the answer of POST /v1/messages, and the
// message of a stream's message_start event (where StopReason is null and
// Content empty). Anthropic's field names; checked against anthropic-sdk-go's
// Message in the tests.
type Response struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"` // always "message"
	Role         string          `json:"role"` // always "assistant"
	Model        string          `json:"model"`
	Content      []ResponseBlock `json:"content"`
	StopReason   NullString      `json:"stop_reason"`   // end_turn, max_tokens, stop_sequence, tool_use, pause_turn, refusal, ...
	StopSequence NullString      `json:"stop_sequence"` // the custom stop sequence that ended the answer
	Usage        Usage           `json:"usage"`
}

// Stop reasons the gateway produces (Anthropic may send others, such as
// pause_turn and model_context_window_exceeded).
const (
	StopEndTurn      = "end_turn"
	StopMaxTokens    = "max_tokens"
	StopStopSequence = "stop_sequence"
	StopToolUse      = "tool_use"
	StopRefusal      = "refusal"
)

// MarshalJSON is AppendJSON into a new slice.
func (r Response) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// AppendJSON appends the Message's JSON to dst: Content nil is [], an
// empty Type or Role is "message" or "assistant", an empty StopReason or
// StopSequence is null. Blocks' raw members are copied as they are.
func (r *Response) AppendJSON(dst []byte) []byte {
	typ, role := r.Type, r.Role
	if typ == "" {
		typ = "message"
	}
	if role == "" {
		role = "assistant"
	}
	dst = append(dst, `{"id":`...)
	dst = AppendString(dst, r.ID)
	dst = append(dst, `,"type":`...)
	dst = AppendString(dst, typ)
	dst = append(dst, `,"role":`...)
	dst = AppendString(dst, role)
	dst = append(dst, `,"model":`...)
	dst = AppendString(dst, r.Model)
	dst = append(dst, `,"content":[`...)
	for i := range r.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = r.Content[i].AppendJSON(dst)
	}
	dst = append(dst, `],"stop_reason":`...)
	dst = appendNull(dst, string(r.StopReason))
	dst = append(dst, `,"stop_sequence":`...)
	dst = appendNull(dst, string(r.StopSequence))
	dst = append(dst, `,"usage":`...)
	dst = r.Usage.AppendJSON(dst)
	return append(dst, '}')
}

// Content block types.
const (
	BlockText             = "text"
	BlockThinking         = "thinking"
	BlockRedactedThinking = "redacted_thinking"
	BlockToolUse          = "tool_use"
)

// ResponseBlock is one content block of a Response (and the content_block
// of content_block_start). The types the gateway reads or writes are
// decoded into fields: text (Text, Citations kept raw), thinking (Thinking,
// Signature), redacted_thinking (Data) and tool_use (ID, Name, Input). Any
// other type (server_tool_use, web_search_tool_result, ...) is kept whole
// in Raw and encoded back byte for byte.
type ResponseBlock struct {
	Type      string
	Text      string          // text
	Citations json.RawMessage // text: the citations array as received; nil omits it
	Thinking  string          // thinking
	Signature string          // thinking
	Data      string          // redacted_thinking
	ID        string          // tool_use
	Name      string          // tool_use
	Input     json.RawMessage // tool_use: the input object; empty encodes as {}
	// Raw is the whole block as received for a type not listed above;
	// when set it is what MarshalJSON writes.
	Raw json.RawMessage
}

// blockFields is ResponseBlock's decoding shape: the same fields (so a
// *ResponseBlock converts to it, and decoding needs no copy), with tags.
type blockFields struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Citations json.RawMessage `json:"citations"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Raw       json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a block; see ResponseBlock for what is kept. It
// decodes into b itself, which a stream's content_block_start already
// allocated.
func (b *ResponseBlock) UnmarshalJSON(data []byte) error {
	*b = ResponseBlock{}
	if err := json.Unmarshal(data, (*blockFields)(b)); err != nil {
		return fmt.Errorf("content block: %w", err)
	}
	switch b.Type {
	case BlockText, BlockThinking, BlockRedactedThinking, BlockToolUse:
		if bytes.Equal(b.Citations, []byte("null")) {
			b.Citations = nil
		}
	default:
		*b = ResponseBlock{Type: b.Type, Raw: append(json.RawMessage(nil), data...)}
	}
	return nil
}

// MarshalJSON encodes the block with exactly its type's members.
func (b ResponseBlock) MarshalJSON() ([]byte, error) {
	if b.Raw == nil {
		switch b.Type {
		case BlockText, BlockThinking, BlockRedactedThinking, BlockToolUse:
		default:
			return nil, fmt.Errorf("content block of type %q has no raw JSON", b.Type)
		}
	}
	return b.AppendJSON(nil), nil
}

// AppendJSON appends the block's JSON to dst: text {type, text[,
// citations]}, thinking {type, thinking, signature}, redacted_thinking
// {type, data}, tool_use {type, id, name, input}, else Raw (or {"type"} if
// Raw is empty). Raw JSON members (Citations, Input, Raw) must be valid
// JSON; they are copied as they are.
func (b *ResponseBlock) AppendJSON(dst []byte) []byte {
	if b.Raw != nil {
		return append(dst, b.Raw...)
	}
	dst = append(dst, `{"type":`...)
	dst = AppendString(dst, b.Type)
	switch b.Type {
	case BlockText:
		dst = append(dst, `,"text":`...)
		dst = AppendString(dst, b.Text)
		if len(b.Citations) > 0 {
			dst = append(dst, `,"citations":`...)
			dst = append(dst, b.Citations...)
		}
	case BlockThinking:
		dst = append(dst, `,"thinking":`...)
		dst = AppendString(dst, b.Thinking)
		dst = append(dst, `,"signature":`...)
		dst = AppendString(dst, b.Signature)
	case BlockRedactedThinking:
		dst = append(dst, `,"data":`...)
		dst = AppendString(dst, b.Data)
	case BlockToolUse:
		dst = append(dst, `,"id":`...)
		dst = AppendString(dst, b.ID)
		dst = append(dst, `,"name":`...)
		dst = AppendString(dst, b.Name)
		dst = append(dst, `,"input":`...)
		if len(bytes.TrimSpace(b.Input)) == 0 {
			dst = append(dst, '{', '}')
		} else {
			dst = append(dst, b.Input...)
		}
	}
	return append(dst, '}')
}

// Usage is a Message's usage. The prompt's whole size is InputTokens +
// CacheCreationInputTokens + CacheReadInputTokens (InputTokens counts only
// the tokens neither read from nor written to the cache).
type Usage struct {
	InputTokens              int64          `json:"input_tokens"`
	CacheCreationInputTokens int64          `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64          `json:"cache_read_input_tokens"`
	CacheCreation            *CacheCreation `json:"cache_creation,omitempty"`
	OutputTokens             int64          `json:"output_tokens"`
	// OutputTokensDetails breaks output_tokens down; ThinkingTokens is the
	// part spent thinking (current API versions send it).
	OutputTokensDetails *OutputTokensDetails `json:"output_tokens_details,omitempty"`
	ServerToolUse       *ServerToolUse       `json:"server_tool_use,omitempty"`
	ServiceTier         string               `json:"service_tier,omitempty"` // standard, priority, batch
}

// AppendJSON appends the usage's JSON to dst (optional members only when
// set).
func (u *Usage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = appendInt(dst, u.InputTokens)
	dst = append(dst, `,"cache_creation_input_tokens":`...)
	dst = appendInt(dst, u.CacheCreationInputTokens)
	dst = append(dst, `,"cache_read_input_tokens":`...)
	dst = appendInt(dst, u.CacheReadInputTokens)
	if c := u.CacheCreation; c != nil {
		dst = append(dst, `,"cache_creation":{"ephemeral_5m_input_tokens":`...)
		dst = appendInt(dst, c.Ephemeral5mInputTokens)
		dst = append(dst, `,"ephemeral_1h_input_tokens":`...)
		dst = appendInt(dst, c.Ephemeral1hInputTokens)
		dst = append(dst, '}')
	}
	dst = append(dst, `,"output_tokens":`...)
	dst = appendInt(dst, u.OutputTokens)
	dst = appendDetails(dst, u.OutputTokensDetails, u.ServerToolUse)
	if u.ServiceTier != "" {
		dst = append(dst, `,"service_tier":`...)
		dst = AppendString(dst, u.ServiceTier)
	}
	return append(dst, '}')
}

// appendDetails appends the optional output_tokens_details and
// server_tool_use members.
func appendDetails(dst []byte, d *OutputTokensDetails, s *ServerToolUse) []byte {
	if d != nil {
		dst = append(dst, `,"output_tokens_details":{"thinking_tokens":`...)
		dst = appendInt(dst, d.ThinkingTokens)
		dst = append(dst, '}')
	}
	if s != nil {
		dst = append(dst, `,"server_tool_use":{"web_search_requests":`...)
		dst = appendInt(dst, s.WebSearchRequests)
		if s.WebFetchRequests != 0 {
			dst = append(dst, `,"web_fetch_requests":`...)
			dst = appendInt(dst, s.WebFetchRequests)
		}
		dst = append(dst, '}')
	}
	return dst
}

// CacheCreation splits cache_creation_input_tokens by the cache entry's TTL.
type CacheCreation struct {
	Ephemeral5mInputTokens int64 `json:"ephemeral_5m_input_tokens"`
	Ephemeral1hInputTokens int64 `json:"ephemeral_1h_input_tokens"`
}

// OutputTokensDetails breaks output_tokens down by category.
type OutputTokensDetails struct {
	ThinkingTokens int64 `json:"thinking_tokens"`
	// noCount is set when decoded details lacked thinking_tokens (or had
	// it null): see HasThinkingTokens.
	noCount bool
}

// HasThinkingTokens reports whether d carries a thinking count: false for
// nil details and for decoded ones whose thinking_tokens was absent or
// null (an answer that reports no count, which is not a count of 0), true
// for details built in code.
func (d *OutputTokensDetails) HasThinkingTokens() bool { return d != nil && !d.noCount }

// UnmarshalJSON decodes the details, noting whether thinking_tokens was
// there (HasThinkingTokens).
func (d *OutputTokensDetails) UnmarshalJSON(b []byte) error {
	var f struct {
		ThinkingTokens *int64 `json:"thinking_tokens"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("output_tokens_details: %w", err)
	}
	*d = OutputTokensDetails{noCount: f.ThinkingTokens == nil}
	if f.ThinkingTokens != nil {
		d.ThinkingTokens = *f.ThinkingTokens
	}
	return nil
}

// ServerToolUse counts the server tools' requests (billed apart).
type ServerToolUse struct {
	WebSearchRequests int64 `json:"web_search_requests"`
	WebFetchRequests  int64 `json:"web_fetch_requests,omitempty"`
}

// DeltaUsage is message_delta's usage: cumulative counts, output_tokens
// always, the others only when they changed since message_start (nil:
// absent or null).
type DeltaUsage struct {
	InputTokens              *int64               `json:"input_tokens,omitempty"`
	CacheCreationInputTokens *int64               `json:"cache_creation_input_tokens,omitempty"`
	CacheReadInputTokens     *int64               `json:"cache_read_input_tokens,omitempty"`
	OutputTokens             int64                `json:"output_tokens"`
	OutputTokensDetails      *OutputTokensDetails `json:"output_tokens_details,omitempty"`
	ServerToolUse            *ServerToolUse       `json:"server_tool_use,omitempty"`
	// noOutput is set when decoded usage lacked output_tokens (or had it
	// null): Merge then keeps the earlier count.
	noOutput bool
}

// UnmarshalJSON decodes the usage, noting whether output_tokens was there
// (Anthropic always sends it; a usage without it is not a count of 0). It
// walks the members itself, as it runs once per stream: b must be valid
// JSON, as encoding/json passes it.
func (d *DeltaUsage) UnmarshalJSON(b []byte) error {
	*d = DeltaUsage{noOutput: true}
	var err error
	if e := jsonx.Each(b, func(k, v []byte) bool {
		switch string(k) {
		case "output_tokens":
			if !isNull(v) {
				d.OutputTokens, err = strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
				d.noOutput = err != nil
			}
		case "input_tokens":
			err = decodeInt(v, &d.InputTokens, "usage.input_tokens")
		case "cache_creation_input_tokens":
			err = decodeInt(v, &d.CacheCreationInputTokens, "usage.cache_creation_input_tokens")
		case "cache_read_input_tokens":
			err = decodeInt(v, &d.CacheReadInputTokens, "usage.cache_read_input_tokens")
		case "output_tokens_details":
			err = decodeSmall(v, &d.OutputTokensDetails, "usage.output_tokens_details")
		case "server_tool_use":
			err = decodeSmall(v, &d.ServerToolUse, "usage.server_tool_use")
		}
		return err == nil
	}); e != nil {
		return fmt.Errorf("anthropicwire: usage: %w", e)
	}
	if err != nil {
		return fmt.Errorf("anthropicwire: usage: %w", err)
	}
	return nil
}

// AppendJSON appends the usage's JSON to dst, output_tokens first.
func (d *DeltaUsage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"output_tokens":`...)
	dst = appendInt(dst, d.OutputTokens)
	for _, m := range [...]struct {
		key string
		v   *int64
	}{{`,"input_tokens":`, d.InputTokens}, {`,"cache_creation_input_tokens":`, d.CacheCreationInputTokens},
		{`,"cache_read_input_tokens":`, d.CacheReadInputTokens}} {
		if m.v != nil {
			dst = append(dst, m.key...)
			dst = appendInt(dst, *m.v)
		}
	}
	dst = appendDetails(dst, d.OutputTokensDetails, d.ServerToolUse)
	return append(dst, '}')
}

// Merge applies a message_delta's usage to u (message_start's): every
// count d reports replaces u's, since the stream's counts are cumulative
// (output_tokens only when a decoded d had it; output_tokens_details only
// when it has a thinking count).
func (u *Usage) Merge(d *DeltaUsage) {
	if d == nil {
		return
	}
	if !d.noOutput {
		u.OutputTokens = d.OutputTokens
	}
	if d.InputTokens != nil {
		u.InputTokens = *d.InputTokens
	}
	if d.CacheCreationInputTokens != nil {
		u.CacheCreationInputTokens = *d.CacheCreationInputTokens
	}
	if d.CacheReadInputTokens != nil {
		u.CacheReadInputTokens = *d.CacheReadInputTokens
	}
	if d.OutputTokensDetails.HasThinkingTokens() {
		u.OutputTokensDetails = d.OutputTokensDetails
	}
	if d.ServerToolUse != nil {
		u.ServerToolUse = d.ServerToolUse
	}
}

// NullString is a string member that is null when empty (stop_reason,
// stop_sequence).
type NullString string

// MarshalJSON writes null for "".
func (s NullString) MarshalJSON() ([]byte, error) {
	if s == "" {
		return []byte("null"), nil
	}
	return AppendString(nil, string(s)), nil
}

// UnmarshalJSON reads null as "". A string without escapes (every stop
// reason) is read without the decoder: one allocation, the string.
func (s *NullString) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*s = ""
		return nil
	}
	if v, ok := plainString(b); ok {
		*s = NullString(v)
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = NullString(v)
	return nil
}

// plainString is the contents of b when b is a JSON string that needs no
// unescaping: quoted, valid UTF-8, without a backslash, quote or control
// character inside.
func plainString(b []byte) ([]byte, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return nil, false
	}
	in := b[1 : len(b)-1]
	for _, c := range in {
		if c < 0x20 || c == '"' || c == '\\' {
			return nil, false
		}
	}
	return in, utf8.Valid(in)
}

// appendNull appends s as a JSON string, or null when empty.
func appendNull(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return AppendString(dst, s)
}

// appendInt appends n in decimal.
func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }
