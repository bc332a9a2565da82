package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/provider"
)

// TestStreamMissingMembers checks that events without their delta or
// content block (absent or null) yield nothing, and that nothing of an
// earlier event's delta or block (the stream decodes every event into the
// same ones) leaks into them.
func TestStreamMissingMembers(t *testing.T) {
	events := []string{
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`,
		`{"type":"content_block_delta","index":0}`,
		`{"type":"content_block_delta","index":0,"delta":null}`,
		`{"type":"content_block_start","index":1}`,
		`{"type":"content_block_start","index":2,"content_block":null}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"1}"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","usage":{"output_tokens":5}}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":7}}`,
		`{"type":"message_stop"}`,
	}
	var sse strings.Builder
	for _, e := range events {
		sse.WriteString("event: x\ndata: " + e + "\n\n")
	}
	c := testClient(t)
	s := c.newStream(c.start(context.Background()), io.NopCloser(strings.NewReader(sse.String())),
		&provider.ChatRequest{PublicModel: "p", UpstreamModel: "m"}, "")
	defer s.Close()
	type call struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	var got []string
	for s.Next() {
		var ch struct {
			Choices []struct {
				Delta struct {
					Role      string `json:"role"`
					ToolCalls []call `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(s.Chunk(), &ch); err != nil {
			t.Fatal(err)
		}
		d := ch.Choices[0]
		switch {
		case d.FinishReason != nil:
			got = append(got, "finish "+*d.FinishReason)
		case d.Delta.Role != "":
			got = append(got, "role "+d.Delta.Role)
		case len(d.Delta.ToolCalls) == 1:
			tc := d.Delta.ToolCalls[0]
			got = append(got, "call "+tc.ID+" "+tc.Function.Name+" "+tc.Function.Arguments)
		default:
			got = append(got, "other "+string(s.Chunk()))
		}
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	want := []string{"role assistant", "call toolu_1 f ", `call   {"a":`, "call   1}", "finish tool_calls"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("chunks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if u, ok := s.Usage(); !ok || u.PromptTokens != 10 || u.CompletionTokens != 7 {
		t.Errorf("usage %+v %v", u, ok)
	}
}

// TestServerBlock checks which content_block_start events go undecoded:
// only valid ones whose block the translation skips anyway.
func TestServerBlock(t *testing.T) {
	cases := []struct {
		data string
		want bool
	}{
		{`{"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"s","content":[]}}`, true},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"s","name":"web_search","input":{}}}`, true},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"future_block"}}`, true},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`, false},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`, false},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"x"}}`, false},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}`, false},
		{`{"type":"content_block_start","index":0,"content_block":null}`, false},
		{`{"type":"content_block_start","index":0}`, false},
		{`{"type":"content_block_delta","index":0,"content_block":{"type":"server_tool_use"}}`, false},
		{`{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use"}`, false}, // not JSON: the decoder reports it
	}
	for _, tc := range cases {
		if got := serverBlock([]byte(tc.data)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.data, got, tc.want)
		}
	}
}
