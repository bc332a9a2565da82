package anthropic

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/modelgate/modelgate/internal/apierr"
)

// chatCompletion is a chat.completion as OpenAI writes it around message.
func chatCompletion(message, finish, usage string) string {
	return `{"id":"chatcmpl-9","object":"chat.completion","created":1,"model":"gpt-up","choices":[{"index":0,"message":` +
		message + `,"logprobs":null,"finish_reason":"` + finish + `"}],"usage":` + usage + `,"system_fingerprint":"fp"}`
}

const fullUsage = `{"prompt_tokens":120,"completion_tokens":80,"total_tokens":200,"prompt_tokens_details":{"cached_tokens":100,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":50}}`

func TestFromChat(t *testing.T) {
	cases := []struct {
		name, chat string
		stop       sdk.StopReason
		blocks     []wantBlock
		usage      [4]int64 // input, cache read, output, thinking
	}{
		{"text", chatCompletion(`{"role":"assistant","content":"Hi <there> & \"you\"","refusal":null,"annotations":[]}`, "stop",
			`{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}`),
			sdk.StopReasonEndTurn, []wantBlock{{typ: "text", text: `Hi <there> & "you"`}}, [4]int64{9, 0, 3, 0}},
		{"reasoning, text and tools", chatCompletion(`{"role":"assistant","content":"Let me look.","reasoning_content":"Two files.",
			"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\": \"a.go\"}"}},
			{"id":"call_2","type":"function","function":{"name":"list","arguments":""}}]}`, "tool_calls", fullUsage),
			sdk.StopReasonToolUse, []wantBlock{{typ: "thinking", text: "Two files."}, {typ: "text", text: "Let me look."},
				{typ: "tool_use", id: "call_1", name: "read", input: `{"path":"a.go"}`}, {typ: "tool_use", id: "call_2", name: "list", input: `{}`}},
			[4]int64{20, 100, 80, 50}},
		{"tools only, null content", chatCompletion(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_x","type":"function","function":{"name":"f","arguments":"{}"}}]}`,
			"tool_calls", `{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}`),
			sdk.StopReasonToolUse, []wantBlock{{typ: "tool_use", id: "call_x", name: "f", input: `{}`}}, [4]int64{1, 0, 1, 0}},
		{"legacy function_call", chatCompletion(`{"role":"assistant","content":null,"function_call":{"name":"g","arguments":"{\"a\":1}"}}`,
			"function_call", `{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}`),
			sdk.StopReasonToolUse, []wantBlock{{typ: "tool_use", name: "g", input: `{"a":1}`}}, [4]int64{1, 0, 1, 0}},
		{"length with cut arguments", chatCompletion(`{"role":"assistant","content":"x","tool_calls":[{"id":"call_c","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]}`,
			"length", `{"prompt_tokens":2,"completion_tokens":5,"total_tokens":7}`),
			sdk.StopReasonMaxTokens, []wantBlock{{typ: "text", text: "x"}, {typ: "tool_use", id: "call_c", name: "f", input: `{}`}}, [4]int64{2, 0, 5, 0}},
		{"content filter with refusal", chatCompletion(`{"role":"assistant","content":null,"refusal":"I can't help with that."}`,
			"content_filter", `{"prompt_tokens":2,"completion_tokens":5,"total_tokens":7}`),
			sdk.StopReasonRefusal, []wantBlock{{typ: "text", text: "I can't help with that."}}, [4]int64{2, 0, 5, 0}},
		{"content parts, no usage", chatCompletion(`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, "stop", `null`),
			sdk.StopReasonEndTurn, []wantBlock{{typ: "text", text: "ab"}}, [4]int64{0, 0, 0, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := fromChat([]byte(tc.chat), "claude-public")
			if err != nil {
				t.Fatal(err)
			}
			var m sdk.Message
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if m.Model != "claude-public" || m.Type != "message" || m.Role != "assistant" || !strings.HasPrefix(m.ID, "msg_") ||
				m.StopReason != tc.stop || m.JSON.StopSequence.Raw() != "null" {
				t.Errorf("message %s", b)
			}
			if len(m.Content) != len(tc.blocks) {
				t.Fatalf("%d blocks, want %d: %s", len(m.Content), len(tc.blocks), b)
			}
			for i, w := range tc.blocks {
				c := m.Content[i]
				got := wantBlock{typ: c.Type, id: c.ID, name: c.Name}
				switch c.Type {
				case "text":
					got.text = c.Text
				case "thinking":
					got.text = c.Thinking
					if !c.JSON.Signature.Valid() {
						t.Errorf("thinking block without a signature member: %s", b)
					}
				case "tool_use":
					got.input = string(c.Input)
					if w.id == "" && strings.HasPrefix(c.ID, "toolu_") {
						got.id = "" // generated
					}
				}
				if got != w {
					t.Errorf("block %d: %+v, want %+v", i, got, w)
				}
			}
			u := m.Usage
			if got := [4]int64{u.InputTokens, u.CacheReadInputTokens, u.OutputTokens, u.OutputTokensDetails.ThinkingTokens}; got != tc.usage {
				t.Errorf("usage %v, want %v", got, tc.usage)
			}
		})
	}
}

func TestFromChatIDsDiffer(t *testing.T) {
	chat := []byte(chatCompletion(`{"role":"assistant","content":"a"}`, "stop", "null"))
	a, _ := fromChat(chat, "m")
	b, _ := fromChat(chat, "m")
	var ma, mb sdk.Message
	_ = json.Unmarshal(a, &ma)
	_ = json.Unmarshal(b, &mb)
	if ma.ID == mb.ID {
		t.Errorf("two answers share the id %s", ma.ID)
	}
}

func TestFromChatBad(t *testing.T) {
	for _, chat := range []string{
		`{"choices":`,
		`{"choices":[]}`,
		chatCompletion(`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[1]"}}]}`, "tool_calls", "null"),
		chatCompletion(`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{oops"}}]}`, "stop", "null"),
	} {
		_, err := fromChat([]byte(chat), "m")
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Status != http.StatusBadGateway {
			t.Errorf("%s: got %v, want a 502", chat, err)
		}
	}
}

func TestStopReason(t *testing.T) {
	for finish, want := range map[string]string{"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use",
		"function_call": "tool_use", "content_filter": "refusal", "": "end_turn", "other": "end_turn"} {
		if got := stopReason(finish); got != want {
			t.Errorf("stopReason(%q) = %q, want %q", finish, got, want)
		}
	}
}
