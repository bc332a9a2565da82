package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/apierr"
)

// chatCases are the golden translations: a Messages body in, the chat
// completions body expected out (compared as JSON values).
var chatCases = []struct {
	name string
	opts chatOptions
	in   string
	want string
}{
	{"string content", chatOptions{},
		`{"model":"gpt-4o","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"gpt-4o","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`},
	{"system string and blocks joined", chatOptions{},
		`{"model":"gpt-4o","max_tokens":100,"system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}},{"type":"text","text":"Be brief."}],
		  "messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b","cache_control":{"type":"ephemeral","ttl":"1h"}}]}]}`,
		`{"model":"gpt-4o","max_tokens":100,"messages":[{"role":"system","content":"You are Claude Code.\n\nBe brief."},
		  {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`},
	{"system role message in place", chatOptions{},
		`{"model":"gpt-4o","max_tokens":10,"system":"top","messages":[{"role":"user","content":"q"},{"role":"system","content":[{"type":"text","text":"mid"}],"clear_at":"never"},{"role":"user","content":"q2"}]}`,
		`{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"system","content":"top"},{"role":"user","content":"q"},{"role":"system","content":"mid"},{"role":"user","content":"q2"}]}`},
	{"images base64 and url", chatOptions{},
		`{"model":"gpt-4o","max_tokens":100,"messages":[{"role":"user","content":[{"type":"text","text":"compare"},
		  {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
		  {"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}}]}]}`,
		`{"model":"gpt-4o","max_tokens":100,"messages":[{"role":"user","content":[{"type":"text","text":"compare"},
		  {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},
		  {"type":"image_url","image_url":{"url":"https://example.com/cat.jpg"}}]}]}`},
	{"tool round trip with parallel calls", chatOptions{},
		`{"model":"gpt-4o","max_tokens":500,"messages":[{"role":"user","content":"Weather in Paris and Rome?"},
		  {"role":"assistant","content":[{"type":"thinking","thinking":"two calls","signature":"sig"},{"type":"text","text":"Checking both."},
		    {"type":"tool_use","id":"toolu_01","name":"get_weather","input":{ "city" : "Paris" }},
		    {"type":"tool_use","id":"toolu_02","name":"get_weather","input":{"city":"Rome"}}]},
		  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"sunny"},
		    {"type":"tool_result","tool_use_id":"toolu_02","content":[{"type":"text","text":"rain"},{"type":"text","text":"12C"}],"is_error":false},
		    {"type":"text","text":"Which is warmer?"}]}],
		 "tools":[{"name":"get_weather","description":"Current weather","input_schema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"cache_control":{"type":"ephemeral"}}],
		 "tool_choice":{"type":"auto"}}`,
		`{"model":"gpt-4o","max_tokens":500,"messages":[{"role":"user","content":"Weather in Paris and Rome?"},
		  {"role":"assistant","content":"Checking both.","tool_calls":[
		    {"id":"toolu_01","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
		    {"id":"toolu_02","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]},
		  {"role":"tool","tool_call_id":"toolu_01","content":"sunny"},
		  {"role":"tool","tool_call_id":"toolu_02","content":"rain\n12C"},
		  {"role":"user","content":[{"type":"text","text":"Which is warmer?"}]}],
		 "tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather","parameters":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],
		 "tool_choice":"auto"}`},
	{"tool calls only, error result, image in result", chatOptions{},
		`{"model":"gpt-4o","max_tokens":50,"messages":[{"role":"user","content":"shot"},
		  {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"screenshot","input":{}}]},
		  {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"partial"},
		    {"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/4A=="}}]}]}],
		 "tools":[{"name":"screenshot","input_schema":{"type":"object"}}]}`,
		`{"model":"gpt-4o","max_tokens":50,"messages":[{"role":"user","content":"shot"},
		  {"role":"assistant","content":null,"tool_calls":[{"id":"t1","type":"function","function":{"name":"screenshot","arguments":"{}"}}]},
		  {"role":"tool","tool_call_id":"t1","content":"partial"},
		  {"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/4A=="}}]}],
		 "tools":[{"type":"function","function":{"name":"screenshot","parameters":{"type":"object"}}}]}`},
	{"tool_choice any, no parallel", chatOptions{},
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{"type":"object"},"strict":true}],"tool_choice":{"type":"any","disable_parallel_tool_use":true}}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"},"strict":true}}],"tool_choice":"required","parallel_tool_calls":false}`},
	{"tool_choice tool", chatOptions{},
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"f"}}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":{"type":"function","function":{"name":"f"}}}`},
	{"tool_choice none", chatOptions{},
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"none"}}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"none"}`},
	{"tool_choice without tools dropped", chatOptions{},
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"auto","disable_parallel_tool_use":true}}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`},
	{"sampling, stop, user, dropped members", chatOptions{},
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"temperature":0.2,"top_p":0.9,"top_k":40,"stop_sequences":["END","\n\nHuman:"],
		  "metadata":{"user_id":"user_abc_session_1"},"service_tier":"auto","context_management":{"edits":[]},"cache_control":{"type":"ephemeral"},"inference_geo":"us",
		  "thinking":{"type":"enabled","budget_tokens":2048},"output_config":{"effort":"high"}}`,
		`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],"temperature":0.2,"top_p":0.9,"stop":["END","\n\nHuman:"],"user":"user_abc_session_1"}`},
	{"reasoning: small budget", chatOptions{Reasons: true},
		`{"model":"o4","max_tokens":5000,"messages":[{"role":"user","content":"x"}],"thinking":{"type":"enabled","budget_tokens":2048}}`,
		`{"model":"o4","max_completion_tokens":5000,"messages":[{"role":"user","content":"x"}],"reasoning_effort":"low"}`},
	{"reasoning: medium budget", chatOptions{Reasons: true},
		`{"model":"o4","max_tokens":20000,"messages":[{"role":"user","content":"x"}],"thinking":{"type":"enabled","budget_tokens":4096}}`,
		`{"model":"o4","max_completion_tokens":20000,"messages":[{"role":"user","content":"x"}],"reasoning_effort":"medium"}`},
	{"reasoning: large budget", chatOptions{Reasons: true},
		`{"model":"o4","max_tokens":32000,"messages":[{"role":"user","content":"x"}],"thinking":{"type":"enabled","budget_tokens":31999}}`,
		`{"model":"o4","max_completion_tokens":32000,"messages":[{"role":"user","content":"x"}],"reasoning_effort":"high"}`},
	{"reasoning: adaptive", chatOptions{Reasons: true},
		`{"model":"o4","max_tokens":10,"messages":[{"role":"user","content":"x"}],"thinking":{"type":"adaptive"}}`,
		`{"model":"o4","max_completion_tokens":10,"messages":[{"role":"user","content":"x"}],"reasoning_effort":"medium"}`},
	{"reasoning: disabled", chatOptions{Reasons: true},
		`{"model":"o4","max_tokens":10,"messages":[{"role":"user","content":"x"}],"thinking":{"type":"disabled"}}`,
		`{"model":"o4","max_completion_tokens":10,"messages":[{"role":"user","content":"x"}]}`},
	{"reasoning: effort wins over thinking", chatOptions{Reasons: true},
		`{"model":"o4","max_tokens":10,"messages":[{"role":"user","content":"x"}],"thinking":{"type":"enabled","budget_tokens":30000},"output_config":{"effort":"low"}}`,
		`{"model":"o4","max_completion_tokens":10,"messages":[{"role":"user","content":"x"}],"reasoning_effort":"low"}`},
	{"reasoning: max effort is high", chatOptions{Reasons: true},
		`{"model":"o4","max_tokens":10,"messages":[{"role":"user","content":"x"}],"output_config":{"effort":"max"}}`,
		`{"model":"o4","max_completion_tokens":10,"messages":[{"role":"user","content":"x"}],"reasoning_effort":"high"}`},
	{"structured output", chatOptions{},
		`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"x"}],"output_config":{"format":{"type":"json_schema","schema":{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":false}}}}`,
		`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"output","schema":{"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":false}}}}`},
	{"stream", chatOptions{Stream: true},
		`{"model":"m","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"x"}]}`,
		`{"model":"m","max_tokens":10,"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`},
	{"documents: text, pdf, content", chatOptions{},
		`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[
		  {"type":"document","source":{"type":"text","media_type":"text/plain","data":"plain doc"}},
		  {"type":"document","title":"report.pdf","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0x"},"citations":{"enabled":false}},
		  {"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0y"}},
		  {"type":"document","source":{"type":"content","content":[{"type":"text","text":"part 1"},{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}}]}]}`,
		`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"plain doc"},
		  {"type":"file","file":{"filename":"report.pdf","file_data":"data:application/pdf;base64,JVBERi0x"}},
		  {"type":"file","file":{"filename":"document.pdf","file_data":"data:application/pdf;base64,JVBERi0y"}},
		  {"type":"text","text":"part 1"},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`},
	{"assistant string, thinking-only turn dropped", chatOptions{},
		`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"redacted_thinking","data":"x"}]},
		  {"role":"user","content":"b"},{"role":"assistant","content":"prefill"}]}`,
		`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"assistant","content":"prefill"}]}`},
	{"count_tokens body has no max_tokens", chatOptions{},
		`{"model":"m","messages":[{"role":"user","content":"a"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"a"}]}`},
}

func TestToChatGolden(t *testing.T) {
	for _, tc := range chatCases {
		t.Run(tc.name, func(t *testing.T) {
			p, e := parseCountTokens([]byte(tc.in)) // count_tokens: max_tokens optional, else the same checks
			if e != nil {
				t.Fatalf("parse: %v", e)
			}
			got, e := toChat(p, tc.opts)
			if e != nil {
				t.Fatalf("toChat: %v", e)
			}
			if !jsonEqual(got, []byte(tc.want)) {
				t.Errorf("chat body\n got: %s\nwant: %s", got, compact(tc.want))
			}
			if err := chatOracle(got); err != nil {
				t.Error(err)
			}
		})
	}
}

// refusals are Messages bodies a chat vendor cannot carry: each is a 400
// naming the member.
var refusals = []struct {
	name, in, param, what string
}{
	{"server tool", `"tools":[{"name":"f","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search","max_uses":3}],` + hiMessages,
		"tools.1", "the server tool 'web_search' (type 'web_search_20250305')"},
	{"bash tool", `"tools":[{"type":"bash_20250124","name":"bash"}],` + hiMessages, "tools.0", "type 'bash_20250124'"},
	{"text editor tool", `"tools":[{"type":"text_editor_20250728","name":"str_replace_based_edit_tool"}],` + hiMessages, "tools.0", "text_editor_20250728"},
	{"container", `"container":"cntr_1",` + hiMessages, "container", "a container"},
	{"mcp_servers", `"mcp_servers":[{"type":"url","url":"https://mcp.example.com","name":"x"}],` + hiMessages, "mcp_servers", "MCP servers"},
	{"document citations", `"messages":[{"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"d"},"citations":{"enabled":true}}]}]`,
		"messages.0.content.0.citations", "a document with citations enabled"},
	{"search_result", `"messages":[{"role":"user","content":[{"type":"search_result","source":"https://x","title":"t","content":[{"type":"text","text":"r"}]}]}]`,
		"messages.0.content.0", "a search_result block"},
	{"search_result in tool result", `"messages":[` + toolTurn + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":[{"type":"search_result","source":"s","title":"t","content":[]}]}]}]`,
		"messages.2.content.0.content.0", "a search_result block in a tool result"},
	{"server_tool_use in history", `"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}}]}]`,
		"messages.1.content.0", "a server_tool_use block of the server tool 'web_search'"},
	{"web_search_tool_result in history", `"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}]}]`,
		"messages.1.content.0", "a web_search_tool_result block of a server tool"},
	{"mcp_tool_use in history", `"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"mcp_tool_use","id":"m","name":"q","server_name":"s","input":{}}]}]`,
		"messages.1.content.0", "mcp_tool_use"},
	{"container_upload", `"messages":[{"role":"user","content":[{"type":"container_upload","file_id":"file_1"}]}]`, "messages.0.content.0", "a container_upload block"},
	{"document file source", `"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"file_011"}}]}]`,
		"messages.0.content.0.source", "a document from the Files API"},
	{"document url source", `"messages":[{"role":"user","content":[{"type":"document","source":{"type":"url","url":"https://x/a.pdf"}}]}]`,
		"messages.0.content.0.source", "a document from a URL"},
	{"image file source", `"messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"file_011"}}]}]`,
		"messages.0.content.0.source", "an image from the Files API"},
	{"image in system message", `"messages":[{"role":"system","content":[{"type":"image","source":{"type":"url","url":"https://x"}}]},{"role":"user","content":"q"}]`,
		"messages.0.content.0", "an image block in a system message"},
}

func TestToChatRefuses(t *testing.T) {
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			p, e := parseMessages([]byte(msgBody(tc.in)))
			if e != nil {
				t.Fatalf("parse: %v", e)
			}
			_, e = toChat(p, chatOptions{Reasons: true, Stream: true})
			if e == nil {
				t.Fatal("toChat translated it")
			}
			if e.Status != http.StatusBadRequest || e.Type != apierr.TypeInvalidRequest || e.Param != tc.param {
				t.Errorf("got %d %s param %q, want 400 %s %q", e.Status, e.Type, e.Param, apierr.TypeInvalidRequest, tc.param)
			}
			want := "cannot be translated for the model 'claude-sonnet-4-5', which the gateway serves through chat completions"
			if !strings.Contains(e.Message, want) || !strings.Contains(e.Message, tc.what) || !strings.Contains(e.Message, "'"+tc.param+"'") {
				t.Errorf("message %q lacks %q or %q", e.Message, tc.what, want)
			}
		})
	}
}

// chatOracle is the strict check of a chat body against openai-go: it must
// decode into ChatCompletionNewParams and marshal back to the same JSON
// (openai-go's decoder drops what it does not know, so a lost member shows
// up as a difference). stream is not a member of the params (NewStreaming
// sets it) and nulls are what the params omit, so both are removed first.
func chatOracle(body []byte) error {
	var top map[string]any
	if err := json.Unmarshal(body, &top); err != nil {
		return fmt.Errorf("oracle: not an object: %w", err)
	}
	if s, ok := top["stream"]; ok {
		if s != true {
			return fmt.Errorf("oracle: stream is %v", s)
		}
		delete(top, "stream")
	}
	// openai-go v3.96 decodes {"type":"function","function":{...}} as its
	// allowed_tools variant and loses the name, though it marshals its own
	// named choice to exactly that shape: an object tool_choice is checked
	// against that marshalling instead.
	if tc, ok := top["tool_choice"].(map[string]any); ok {
		fn, _ := tc["function"].(map[string]any)
		name, _ := fn["name"].(string)
		named, _ := json.Marshal(oai.ChatCompletionToolChoiceOptionUnionParam{OfFunctionToolChoice: &oai.ChatCompletionNamedToolChoiceParam{
			Function: oai.ChatCompletionNamedToolChoiceFunctionParam{Name: name}}})
		var sdkShape any
		_ = json.Unmarshal(named, &sdkShape)
		if !reflect.DeepEqual(sdkShape, any(tc)) {
			return fmt.Errorf("oracle: tool_choice %v is not openai-go's named function choice %s", tc, named)
		}
		delete(top, "tool_choice")
	}
	want := dropNulls(top)
	clean, _ := json.Marshal(want)
	var p oai.ChatCompletionNewParams
	if err := json.Unmarshal(clean, &p); err != nil {
		return fmt.Errorf("oracle: ChatCompletionNewParams rejects the body: %w\n%s", err, clean)
	}
	back, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("oracle: re-marshal: %w", err)
	}
	var got any
	if err := json.Unmarshal(back, &got); err != nil {
		return err
	}
	if !reflect.DeepEqual(dropNulls(got), want) {
		return fmt.Errorf("oracle: the body does not survive ChatCompletionNewParams\n sent: %s\n  sdk: %s", clean, back)
	}
	return nil
}

func TestChatOracleIsStrict(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"bogus":1}`,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi","x":1}]}]}`,
		`{"model":"m","messages":[{"role":"tool","content":"hi"}],"top_k":3}`,
	} {
		if chatOracle([]byte(body)) == nil {
			t.Errorf("oracle accepted %s", body)
		}
	}
}

func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if e != nil {
				out[k] = dropNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = dropNulls(e)
		}
		return out
	}
	return v
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func compact(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestToChatClaudeCodeRequest(t *testing.T) {
	p, e := parseMessages(claudeCodeRequest(t))
	if e != nil {
		t.Fatal(e)
	}
	for _, o := range []chatOptions{{Stream: true}, {Reasons: true, Stream: true}} {
		got, e := toChat(p, o)
		if e != nil {
			t.Fatal(e)
		}
		if err := chatOracle(got); err != nil {
			t.Error(err)
		}
		var r struct {
			Messages []struct {
				Role       string `json:"role"`
				ToolCallID string `json:"tool_call_id"`
			} `json:"messages"`
			Tools           []json.RawMessage `json:"tools"`
			ReasoningEffort string            `json:"reasoning_effort"`
			User            string            `json:"user"`
		}
		if err := json.Unmarshal(got, &r); err != nil {
			t.Fatal(err)
		}
		var roles []string
		for _, m := range r.Messages {
			roles = append(roles, m.Role)
		}
		if strings.Join(roles, ",") != "system,user,assistant,tool,user" || r.Messages[3].ToolCallID != "toolu_01A09q90qw90lq917835lq9" ||
			len(r.Tools) != 10 || !strings.HasPrefix(r.User, "user_2f8e") {
			t.Errorf("roles %v, tool_call_id %q, %d tools, user %q", roles, r.Messages[3].ToolCallID, len(r.Tools), r.User)
		}
		if want := map[bool]string{false: "", true: "high"}[o.Reasons]; r.ReasoningEffort != want {
			t.Errorf("reasoning_effort %q, want %q", r.ReasoningEffort, want)
		}
	}
}

func BenchmarkToChat(b *testing.B) {
	p, e := parseMessages(claudeCodeRequest(b))
	if e != nil {
		b.Fatal(e)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, e := toChat(p, chatOptions{Stream: true}); e != nil {
			b.Fatal(e)
		}
	}
}
