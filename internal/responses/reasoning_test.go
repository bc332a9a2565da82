package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/oapitest"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

// wantBlocks are the thinking blocks of the answers below, as the next
// turn must send them back.
const wantBlocks = `[{"type":"thinking","thinking":"One two.","signature":"c2ln"},{"type":"redacted_thinking","data":"cmVk"},{"type":"thinking","thinking":"Three.","signature":"c2ln"}]`

// nextTurn sends the output items of a Response back as the input of the
// next request, with a tool's output, and returns the chat request.
func nextTurn(t *testing.T, output []responses.ResponseOutputItemUnion) *oaiwire.Request {
	t.Helper()
	items := []any{map[string]string{"role": "user", "content": "go"}}
	for _, o := range output {
		items = append(items, json.RawMessage(o.RawJSON()))
	}
	items = append(items, map[string]string{"type": "function_call_output", "call_id": "toolu_1", "output": "ok"})
	in, _ := json.Marshal(items)
	_, chat := translate(t, `{"model":"m","store":false,"include":["reasoning.encrypted_content"],"reasoning":{"effort":"low"},"input":`+string(in)+`}`)
	return chat
}

// checkReplayed checks the chat request of nextTurn gives the blocks back
// on the assistant turn that called the tool.
func checkReplayed(t *testing.T, chat *oaiwire.Request) {
	t.Helper()
	m := chat.Messages
	if len(m) != 3 || m[1].Role != "assistant" || len(m[1].ToolCalls) != 1 {
		t.Fatalf("messages %+v", m)
	}
	if b, _ := json.Marshal(m[1].ThinkingBlocks); string(b) != wantBlocks {
		t.Errorf("thinking blocks %s", b)
	}
}

func TestReasoningRoundTrip(t *testing.T) {
	chat := `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"reasoning_content":"One two.Three.","thinking_blocks":` + wantBlocks +
		`,"tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`
	for _, include := range []bool{true, false} {
		body := `{"model":"m","input":"go","tools":[{"type":"function","name":"f"}]`
		if include {
			body += `,"include":["reasoning.encrypted_content"]`
		}
		tr, _ := translate(t, body+`}`)
		a, err := tr.Answer([]byte(chat))
		if err != nil {
			t.Fatal(err)
		}
		b, err := a.JSON("resp_1", 1, 2, provider.Usage{})
		if err != nil {
			t.Fatal(err)
		}
		oapitest.CheckComponent(t, "Response", b)
		var r responses.Response
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		rs := r.Output[0]
		if rs.Type != "reasoning" || rs.Content[0].Text != "One two.Three." {
			t.Fatalf("output %s", b)
		}
		if !include {
			if rs.EncryptedContent != "" {
				t.Errorf("encrypted_content not asked for: %s", b)
			}
			continue
		}
		if !strings.HasPrefix(rs.EncryptedContent, envelopePrefix) {
			t.Fatalf("encrypted_content %q", rs.EncryptedContent)
		}
		checkReplayed(t, nextTurn(t, r.Output))
	}
}

func TestReasoningRoundTripStream(t *testing.T) {
	tr, _ := translate(t, `{"model":"m","input":"go","stream":true,"include":["reasoning.encrypted_content"],"tools":[{"type":"function","name":"f"}]}`)
	chunk := func(delta string) []byte {
		return []byte(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `}]}`)
	}
	in := [][]byte{
		chunk(`{"role":"assistant","content":""}`),
		chunk(`{"reasoning_content":"One "}`), chunk(`{"reasoning_content":"two."}`),
		chunk(`{"thinking_blocks":[{"type":"thinking","signature":"c2ln"}]}`),
		chunk(`{"thinking_blocks":[{"type":"redacted_thinking","data":"cmVk"}]}`),
		chunk(`{"reasoning_content":"Three."}`),
		chunk(`{"thinking_blocks":[{"type":"thinking","signature":"c2ln"}]}`),
		chunk(`{"tool_calls":[{"index":0,"id":"toolu_1","type":"function","function":{"name":"f","arguments":"{}"}}]}`),
	}
	evs := run(t, tr, in, func(s *Stream) []Event { return s.Finish(provider.Usage{}, 3) })
	var done responses.ResponseCompletedEvent
	if err := json.Unmarshal(evs[len(evs)-1].Data, &done); err != nil {
		t.Fatal(err)
	}
	o := done.Response.Output
	if len(o) != 2 || o[0].Type != "reasoning" || o[0].Content[0].Text != "One two.Three." || !strings.HasPrefix(o[0].EncryptedContent, envelopePrefix) {
		t.Fatalf("output %+v", o)
	}
	checkReplayed(t, nextTurn(t, o))
}

// Reasoning the gateway did not seal (OpenAI's, or none) is dropped.
func TestReasoningForeign(t *testing.T) {
	_, chat := translate(t, `{"model":"m","input":[{"role":"user","content":"go"},`+
		`{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAAABo-openai"},`+
		`{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"mgtb1.!!!"},`+
		`{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`)
	if len(chat.Messages) != 2 || chat.Messages[1].ThinkingBlocks != nil {
		t.Errorf("messages %+v", chat.Messages)
	}
}
