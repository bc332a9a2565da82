package anthropicwire

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
)

// splitSSE splits a stream into its events' names and data (one data line
// each, as AppendEvent writes).
func splitSSE(t *testing.T, b []byte) (names []string, data [][]byte) {
	t.Helper()
	if !bytes.HasSuffix(b, []byte("\n\n")) {
		t.Fatalf("stream does not end with a blank line: %q", b)
	}
	for _, ev := range bytes.Split(bytes.TrimSuffix(b, []byte("\n\n")), []byte("\n\n")) {
		lines := bytes.Split(ev, []byte("\n"))
		if len(lines) != 2 || !bytes.HasPrefix(lines[0], []byte("event: ")) || !bytes.HasPrefix(lines[1], []byte("data: ")) {
			t.Fatalf("malformed event %q", ev)
		}
		names = append(names, string(lines[0][len("event: "):]))
		data = append(data, lines[1][len("data: "):])
	}
	return names, data
}

// TestEventsAccumulate encodes a stream with every event and delta type
// and feeds it to anthropic-sdk-go's Message.Accumulate.
func TestEventsAccumulate(t *testing.T) {
	start := Response{ID: "msg_1", Model: "m-public", Usage: Usage{InputTokens: 25, CacheReadInputTokens: 4, OutputTokens: 1}}
	citation := json.RawMessage(`{"type":"char_location","cited_text":"c","document_index":0,"document_title":"d","start_char_index":0,"end_char_index":1}`)
	events := []Event{
		MessageStartEvent{Message: start},
		PingEvent{},
		ContentBlockStartEvent{Index: 0, ContentBlock: ResponseBlock{Type: BlockThinking}},
		ContentBlockDeltaEvent{Index: 0, Delta: Delta{Type: DeltaThinking, Thinking: "hmm, "}},
		ContentBlockDeltaEvent{Index: 0, Delta: Delta{Type: DeltaThinking, Thinking: "\"quoted\""}},
		ContentBlockDeltaEvent{Index: 0, Delta: Delta{Type: DeltaSignature, Signature: "EqQB"}},
		ContentBlockStopEvent{Index: 0},
		ContentBlockStartEvent{Index: 1, ContentBlock: ResponseBlock{Type: BlockText}},
		ContentBlockDeltaEvent{Index: 1, Delta: Delta{Type: DeltaText, Text: "Hello "}},
		ContentBlockDeltaEvent{Index: 1, Delta: Delta{Type: DeltaCitations, Citation: citation}},
		ContentBlockDeltaEvent{Index: 1, Delta: Delta{Type: DeltaText, Text: "world\n"}},
		ContentBlockStopEvent{Index: 1},
		ContentBlockStartEvent{Index: 2, ContentBlock: ResponseBlock{Type: BlockToolUse, ID: "toolu_1", Name: "f"}},
		ContentBlockDeltaEvent{Index: 2, Delta: Delta{Type: DeltaInputJSON, PartialJSON: ""}},
		ContentBlockDeltaEvent{Index: 2, Delta: Delta{Type: DeltaInputJSON, PartialJSON: `{"a":`}},
		ContentBlockDeltaEvent{Index: 2, Delta: Delta{Type: DeltaInputJSON, PartialJSON: `[1,2]}`}},
		ContentBlockStopEvent{Index: 2},
		MessageDeltaEvent{StopReason: StopToolUse, Usage: DeltaUsage{OutputTokens: 77, OutputTokensDetails: &OutputTokensDetails{ThinkingTokens: 9}}},
		MessageStopEvent{},
	}
	var stream []byte
	for _, e := range events {
		stream = AppendEventOf(stream, e)
	}
	names, data := splitSSE(t, stream)
	var m sdk.Message
	for i, d := range data {
		if names[i] != events[i].EventName() {
			t.Fatalf("event %d named %q", i, names[i])
		}
		var ev sdk.MessageStreamEventUnion
		if err := json.Unmarshal(d, &ev); err != nil {
			t.Fatalf("event %d %s: %v", i, d, err)
		}
		if ev.Type != names[i] {
			t.Fatalf("event %d: type %q under name %q", i, ev.Type, names[i])
		}
		var own StreamEvent
		if err := json.Unmarshal(d, &own); err != nil || own.Type != names[i] {
			t.Fatalf("StreamEvent %d: %v %+v", i, err, own)
		}
		if err := m.Accumulate(ev); err != nil {
			t.Fatalf("accumulate event %d: %v", i, err)
		}
	}
	if m.ID != "msg_1" || m.Model != "m-public" || m.StopReason != sdk.StopReasonToolUse || len(m.Content) != 3 {
		t.Fatalf("message: %+v", m)
	}
	if c := m.Content[0]; c.Thinking != `hmm, "quoted"` || c.Signature != "EqQB" {
		t.Errorf("thinking: %+v", c)
	}
	if c := m.Content[1]; c.Text != "Hello world\n" || len(c.Citations) != 1 || c.Citations[0].CitedText != "c" {
		t.Errorf("text: %+v", c)
	}
	if c := m.Content[2]; c.ID != "toolu_1" || c.Name != "f" || string(c.Input) != `{"a":[1,2]}` {
		t.Errorf("tool_use: %+v %s", c, c.Input)
	}
	u := m.Usage
	if u.InputTokens != 25 || u.CacheReadInputTokens != 4 || u.OutputTokens != 77 || u.OutputTokensDetails.ThinkingTokens != 9 {
		t.Errorf("usage: %+v", u)
	}
}

// TestStreamEventDecodesVendor decodes events as Anthropic sends them.
func TestStreamEventDecodesVendor(t *testing.T) {
	for _, tc := range []struct {
		data  string
		check func(e StreamEvent) bool
	}{
		{`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-x","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}`,
			func(e StreamEvent) bool {
				return e.Message != nil && e.Message.Model == "claude-x" && e.Message.Usage.InputTokens == 25
			}},
		{`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}`,
			func(e StreamEvent) bool { return e.Index == 1 && e.ContentBlock.ID == "toolu_1" }},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"abc"}}`,
			func(e StreamEvent) bool { return e.Delta.Type == DeltaSignature && e.Delta.Signature == "abc" }},
		{`{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":15,"input_tokens":null}}`,
			func(e StreamEvent) bool {
				return e.Delta.StopReason == "max_tokens" && e.Usage.OutputTokens == 15 && e.Usage.InputTokens == nil
			}},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			func(e StreamEvent) bool { return e.Error != nil && e.Error.Type == ErrOverloaded }},
	} {
		var e StreamEvent
		if err := json.Unmarshal([]byte(tc.data), &e); err != nil || !tc.check(e) {
			t.Errorf("%s: %v %+v", tc.data, err, e)
		}
	}
}

func TestAppendEvent(t *testing.T) {
	got := AppendEvent([]byte("x"), "ping", []byte(`{"type":"ping"}`))
	if string(got) != "xevent: ping\ndata: {\"type\":\"ping\"}\n\n" {
		t.Fatalf("%q", got)
	}
	if s := string(AppendEventOf(nil, MessageDeltaEvent{Usage: DeltaUsage{OutputTokens: 3, InputTokens: i64(2)}})); !strings.Contains(s,
		`{"type":"message_delta","delta":{"stop_reason":null,"stop_sequence":null},"usage":{"output_tokens":3,"input_tokens":2}}`) {
		t.Fatalf("%s", s)
	}
}

// TestErrorBody checks the status mapping and that the body decodes into
// anthropic-sdk-go's ErrorResponse.
func TestErrorBody(t *testing.T) {
	for _, tc := range []struct {
		status int
		typ    string
	}{
		{400, ErrInvalidRequest}, {401, ErrAuthentication}, {402, ErrBilling}, {403, ErrPermission},
		{404, ErrNotFound}, {413, ErrRequestTooLarge}, {429, ErrRateLimit}, {500, ErrAPI}, {502, ErrAPI},
		{503, ErrOverloaded}, {504, ErrTimeout}, {529, ErrOverloaded}, {422, ErrInvalidRequest}, {409, ErrInvalidRequest},
	} {
		e := NewErrorBody(tc.status, "bad \"thing\"", "req_1")
		if e.Error.Type != tc.typ {
			t.Errorf("%d: type %q, want %q", tc.status, e.Error.Type, tc.typ)
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var r sdk.ErrorResponse
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if r.Type != "error" || r.RequestID != "req_1" || r.Error.Type != tc.typ || r.Error.Message != `bad "thing"` {
			t.Errorf("%d: decoded %s as %+v", tc.status, b, r)
		}
		if s := ErrorStatus(tc.typ); ErrorType(s) != tc.typ {
			t.Errorf("ErrorStatus(%q) = %d does not map back", tc.typ, s)
		}
	}
	if got := string(ErrorBody{Error: ErrorDetail{Type: ErrAPI, Message: "m"}}.AppendJSON(nil)); got != `{"type":"error","error":{"type":"api_error","message":"m"}}` {
		t.Errorf("without request id: %s", got)
	}
	if ErrorStatus("nope") != http.StatusInternalServerError {
		t.Error("unknown type status")
	}
}
