package anthropicwire

import (
	"bytes"
	"encoding/json"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
)

func i64(v int64) *int64 { return &v }

// fullResponse has one block of every kind the package models, and one
// kept raw.
func fullResponse() Response {
	return Response{
		ID: "msg_01", Model: "claude-public",
		Content: []ResponseBlock{
			{Type: BlockThinking, Thinking: "let me <think> & \"see\"", Signature: "sig=="},
			{Type: BlockRedactedThinking, Data: "opaque"},
			{Type: BlockText, Text: "Hello\n", Citations: json.RawMessage(`[{"type":"char_location","cited_text":"x","document_index":0,"document_title":null,"start_char_index":0,"end_char_index":1}]`)},
			{Type: BlockToolUse, ID: "toolu_1", Name: "get_weather", Input: json.RawMessage(`{"city":"Paris"}`)},
			{Type: BlockToolUse, ID: "toolu_2", Name: "noargs"},
			{Type: "server_tool_use", Raw: json.RawMessage(`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}}`)},
		},
		StopReason: StopToolUse,
		Usage: Usage{InputTokens: 10, CacheCreationInputTokens: 3, CacheReadInputTokens: 7, OutputTokens: 42,
			CacheCreation:       &CacheCreation{Ephemeral5mInputTokens: 1, Ephemeral1hInputTokens: 2},
			OutputTokensDetails: &OutputTokensDetails{ThinkingTokens: 30},
			ServerToolUse:       &ServerToolUse{WebSearchRequests: 1}, ServiceTier: "standard"},
	}
}

// TestResponseDecodesInSDK checks that a Response decodes into
// anthropic-sdk-go's Message with every member where the SDK expects it.
func TestResponseDecodesInSDK(t *testing.T) {
	r := fullResponse()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatalf("invalid JSON: %s", b)
	}
	var m sdk.Message
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.ID != "msg_01" || m.Type != "message" || m.Role != "assistant" || string(m.Model) != "claude-public" ||
		m.StopReason != sdk.StopReasonToolUse || m.StopSequence != "" {
		t.Fatalf("message header: %+v", m)
	}
	if len(m.Content) != 6 {
		t.Fatalf("content: %d blocks", len(m.Content))
	}
	c := m.Content
	if c[0].Type != "thinking" || c[0].Thinking != r.Content[0].Thinking || c[0].Signature != "sig==" {
		t.Errorf("thinking: %+v", c[0])
	}
	if c[1].Type != "redacted_thinking" || c[1].Data != "opaque" {
		t.Errorf("redacted: %+v", c[1])
	}
	if c[2].Type != "text" || c[2].Text != "Hello\n" || len(c[2].Citations) != 1 || c[2].Citations[0].CitedText != "x" {
		t.Errorf("text: %+v", c[2])
	}
	if tu := c[3].AsToolUse(); tu.ID != "toolu_1" || tu.Name != "get_weather" || string(tu.Input) != `{"city":"Paris"}` {
		t.Errorf("tool_use: %+v", tu)
	}
	if string(c[4].Input) != `{}` {
		t.Errorf("tool_use without input: %s", c[4].Input)
	}
	if st := c[5].AsServerToolUse(); st.ID != "srvtoolu_1" || st.Name != "web_search" {
		t.Errorf("server_tool_use: %+v", st)
	}
	u := m.Usage
	if u.InputTokens != 10 || u.CacheCreationInputTokens != 3 || u.CacheReadInputTokens != 7 || u.OutputTokens != 42 ||
		u.CacheCreation.Ephemeral5mInputTokens != 1 || u.CacheCreation.Ephemeral1hInputTokens != 2 ||
		u.OutputTokensDetails.ThinkingTokens != 30 || u.ServerToolUse.WebSearchRequests != 1 || u.ServiceTier != "standard" {
		t.Errorf("usage: %+v", u)
	}
}

// TestResponseRoundTrip checks that decoding an encoded Response and
// encoding it again gives the same bytes (raw blocks kept whole).
func TestResponseRoundTrip(t *testing.T) {
	b, err := json.Marshal(fullResponse())
	if err != nil {
		t.Fatal(err)
	}
	var r Response
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	b2, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatalf("round trip differs:\n%s\n%s", b, b2)
	}
}

// TestResponseDecodesVendorJSON decodes a Message as Anthropic documents
// it.
func TestResponseDecodesVendorJSON(t *testing.T) {
	const body = `{"id":"msg_013Zva2CMHLNnXjNJJKqJ2EF","type":"message","role":"assistant","model":"claude-sonnet-4-5",
	"content":[{"type":"text","text":"Hi","citations":null},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}],
	"stop_reason":"end_turn","stop_sequence":null,"container":null,
	"usage":{"input_tokens":2095,"output_tokens":503,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":null,"server_tool_use":null,"service_tier":"standard","output_tokens_details":{"thinking_tokens":12}}}`
	var r Response
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	if r.ID != "msg_013Zva2CMHLNnXjNJJKqJ2EF" || r.StopReason != "end_turn" || r.StopSequence != "" || len(r.Content) != 2 {
		t.Fatalf("%+v", r)
	}
	if r.Content[0].Text != "Hi" || r.Content[0].Citations != nil {
		t.Errorf("text block: %+v", r.Content[0])
	}
	if r.Content[1].Type != "web_search_tool_result" || !bytes.Contains(r.Content[1].Raw, []byte(`"tool_use_id":"srvtoolu_1"`)) {
		t.Errorf("raw block: %+v", r.Content[1])
	}
	if r.Usage.InputTokens != 2095 || r.Usage.OutputTokens != 503 || r.Usage.CacheCreation != nil ||
		r.Usage.OutputTokensDetails == nil || r.Usage.OutputTokensDetails.ThinkingTokens != 12 {
		t.Errorf("usage: %+v", r.Usage)
	}
}

func TestUsageMerge(t *testing.T) {
	u := Usage{InputTokens: 100, CacheReadInputTokens: 5, OutputTokens: 1}
	u.Merge(&DeltaUsage{OutputTokens: 50, CacheReadInputTokens: i64(9), OutputTokensDetails: &OutputTokensDetails{ThinkingTokens: 20}})
	want := Usage{InputTokens: 100, CacheReadInputTokens: 9, OutputTokens: 50, OutputTokensDetails: &OutputTokensDetails{ThinkingTokens: 20}}
	if u.InputTokens != want.InputTokens || u.CacheReadInputTokens != 9 || u.OutputTokens != 50 || u.OutputTokensDetails.ThinkingTokens != 20 {
		t.Fatalf("merged %+v", u)
	}
	u.Merge(nil)
	if u.OutputTokens != 50 {
		t.Fatal("nil merge changed usage")
	}
}

func TestBlockWithoutRawRefused(t *testing.T) {
	if _, err := json.Marshal(ResponseBlock{Type: "server_tool_use"}); err == nil {
		t.Fatal("a block of an unmodelled type without Raw encoded")
	}
}

// TestAppendString compares AppendString with encoding/json (HTML
// escaping off, as Anthropic writes).
func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote\back`, "ctl\x00\x01\x1f\b\f\n\r\t", "<a&b>", "é日本🙂",
		"bad\xffutf8\xc3", "line\u2028sep\u2029", "tab\tand\u007f"} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestThinkingTokensReported checks that decoded details tell a reported
// thinking count (even 0) from details without one, and that Merge keeps
// message_start's count over a delta's details without one.
func TestThinkingTokensReported(t *testing.T) {
	cases := []struct {
		usage string
		has   bool
		n     int64
	}{
		{`{"output_tokens":5,"output_tokens_details":{"thinking_tokens":3}}`, true, 3},
		{`{"output_tokens":5,"output_tokens_details":{"thinking_tokens":0}}`, true, 0},
		{`{"output_tokens":5,"output_tokens_details":{}}`, false, 0},
		{`{"output_tokens":5,"output_tokens_details":{"thinking_tokens":null}}`, false, 0},
		{`{"output_tokens":5,"output_tokens_details":null}`, false, 0},
		{`{"output_tokens":5}`, false, 0},
	}
	for _, tc := range cases {
		var u Usage
		if err := json.Unmarshal([]byte(tc.usage), &u); err != nil {
			t.Fatal(err)
		}
		if got := u.OutputTokensDetails.HasThinkingTokens(); got != tc.has || got && u.OutputTokensDetails.ThinkingTokens != tc.n {
			t.Errorf("%s: HasThinkingTokens %v (%+v), want %v %d", tc.usage, got, u.OutputTokensDetails, tc.has, tc.n)
		}
		var d DeltaUsage
		if err := json.Unmarshal([]byte(tc.usage), &d); err != nil {
			t.Fatal(err)
		}
		start := Usage{OutputTokens: 1, OutputTokensDetails: &OutputTokensDetails{ThinkingTokens: 1}}
		start.Merge(&d)
		want := int64(1)
		if tc.has {
			want = tc.n
		}
		if start.OutputTokensDetails.ThinkingTokens != want || start.OutputTokens != 5 {
			t.Errorf("%s: merged %+v, want thinking %d", tc.usage, start, want)
		}
	}
	if !(&OutputTokensDetails{}).HasThinkingTokens() {
		t.Error("details built in code have a count")
	}
}

// TestNullStringDecodes checks NullString reads what encoding/json reads
// for a string, on its fast path and off it.
func TestNullStringDecodes(t *testing.T) {
	for _, in := range []string{`null`, `"end_turn"`, `""`, `"a\"b"`, `"tab\there"`, `"\u00e9t\u00e9"`, `"été"`, "\"bad \xff utf8\"", `"\u2028"`} {
		var got NullString
		if err := json.Unmarshal([]byte(in), &got); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var want string
		if in != "null" {
			if err := json.Unmarshal([]byte(in), &want); err != nil {
				t.Fatal(err)
			}
		}
		if string(got) != want {
			t.Errorf("%s: got %q, want %q", in, got, want)
		}
	}
	var s NullString
	if err := s.UnmarshalJSON([]byte(`"a` + "\x01" + `"`)); err == nil {
		t.Errorf("a control character was accepted: %q", s)
	}
}

// TestDeltaUsageWithoutOutput checks Merge keeps the earlier output count
// when a decoded message_delta usage lacks output_tokens, and takes any
// count it has, 0 included.
func TestDeltaUsageWithoutOutput(t *testing.T) {
	for _, tc := range []struct {
		usage string
		want  int64
	}{
		{`{"output_tokens":9}`, 9},
		{`{"output_tokens":0}`, 0},
		{`{"input_tokens":4}`, 1},
		{`{"output_tokens":null}`, 1},
	} {
		var d DeltaUsage
		if err := json.Unmarshal([]byte(tc.usage), &d); err != nil {
			t.Fatal(err)
		}
		u := Usage{OutputTokens: 1}
		u.Merge(&d)
		if u.OutputTokens != tc.want {
			t.Errorf("%s: output %d, want %d", tc.usage, u.OutputTokens, tc.want)
		}
	}
	u := Usage{OutputTokens: 1}
	u.Merge(&DeltaUsage{})
	if u.OutputTokens != 0 {
		t.Errorf("a DeltaUsage built in code always has its output count: %d", u.OutputTokens)
	}
}
