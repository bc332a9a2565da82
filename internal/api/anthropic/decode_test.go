package anthropic

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/apierr"
)

// msgBody wraps members around a minimal valid request's model and
// max_tokens; messages must be among members.
func msgBody(members string) string {
	return `{"model":"claude-sonnet-4-5","max_tokens":1024,` + members + `}`
}

const hiMessages = `"messages":[{"role":"user","content":"hi"}]`

// toolTurn is an assistant turn calling get_weather, for the turn after it.
const toolTurn = `{"role":"user","content":"Weather in Paris?"},` +
	`{"role":"assistant","content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"city":"Paris"}}]}`

// bigImage is a base64 image block whose data decodes to n bytes.
func bigImage(n int) string {
	data := strings.Repeat("A", n/3*4) + []string{"", "AA==", "AAA="}[n%3]
	return `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + data + `"}}`
}

var badBodies = []struct {
	name, body string
	param      string // the Param of the 400
	msg        string // a substring of its message
}{
	{"not json", `{"model":`, "", "could not parse the JSON body"},
	{"array body", `[1,2]`, "", "must be a JSON object, but got an array"},
	{"string body", `"hi"`, "", "must be a JSON object, but got a string"},
	{"duplicate key", `{"model":"a","model":"b","max_tokens":1,` + hiMessages + `}`, "", "duplicate object key"},
	{"no model", `{"max_tokens":1,` + hiMessages + `}`, "model", "Missing required parameter: 'model'"},
	{"empty model", `{"model":"","max_tokens":1,` + hiMessages + `}`, "model", "must not be empty"},
	{"model number", `{"model":4,"max_tokens":1,` + hiMessages + `}`, "model", "expected a string, but got a number"},
	{"no max_tokens", `{"model":"m",` + hiMessages + `}`, "max_tokens", "Missing required parameter: 'max_tokens'"},
	{"null max_tokens", `{"model":"m","max_tokens":null,` + hiMessages + `}`, "max_tokens", "Missing required parameter"},
	{"zero max_tokens", `{"model":"m","max_tokens":0,` + hiMessages + `}`, "max_tokens", "at least 1, but got 0"},
	{"fractional max_tokens", `{"model":"m","max_tokens":1.5,` + hiMessages + `}`, "max_tokens", "expected an integer, but got the number 1.5"},
	{"string max_tokens", `{"model":"m","max_tokens":"10",` + hiMessages + `}`, "max_tokens", "expected an integer, but got a string"},
	{"no messages", msgBody(`"stream":false`), "messages", "Missing required parameter: 'messages'"},
	{"empty messages", msgBody(`"messages":[]`), "messages", "at least one message"},
	{"messages object", msgBody(`"messages":{"role":"user"}`), "messages", "expected an array, but got an object"},
	{"message string", msgBody(`"messages":["hi"]`), "messages.0", "expected an object, but got a string"},
	{"bad role", msgBody(`"messages":[{"role":"tool","content":"x"}]`), "messages.0.role", "'tool'. Supported values are: 'user', 'assistant', 'system'"},
	{"no role", msgBody(`"messages":[{"content":"x"}]`), "messages.0.role", "Missing required parameter"},
	{"no content", msgBody(`"messages":[{"role":"user"}]`), "messages.0.content", "Missing required parameter"},
	{"content number", msgBody(`"messages":[{"role":"user","content":42}]`), "messages.0.content", "expected a string or an array of content blocks, but got a number"},
	{"content object", msgBody(`"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]`), "messages.0.content", "but got an object"},
	{"block string", msgBody(`"messages":[{"role":"user","content":["hi"]}]`), "messages.0.content.0", "expected an object, but got a string"},
	{"block no type", msgBody(`"messages":[{"role":"user","content":[{"text":"hi"}]}]`), "messages.0.content.0.type", "Missing required parameter"},
	{"unknown block type", msgBody(`"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"text","text":"b"}]},{"role":"user","content":[{"type":"text","text":"c"},{"type":"video","url":"x"}]}]`),
		"messages.2.content.1.type", "'video'. Supported values are: 'text', 'image', 'document', 'search_result'"},
	{"block type number", msgBody(`"messages":[{"role":"user","content":[{"type":1}]}]`), "messages.0.content.0.type", "expected a string, but got a number"},
	{"text not string", msgBody(`"messages":[{"role":"user","content":[{"type":"text","text":["a"]}]}]`), "messages.0.content.0.text", "expected a string, but got an array"},
	{"text missing", msgBody(`"messages":[{"role":"user","content":[{"type":"text"}]}]`), "messages.0.content.0.text", "Missing required parameter"},
	{"key case", msgBody(`"messages":[{"role":"user","content":[{"type":"text","Text":"a","text":"b"}]}]`), "messages.0.content.0.Text", "did you mean 'text'"},
	{"top key case", msgBody(`"Stream":true,` + hiMessages), "Stream", "did you mean 'stream'"},
	{"stream yes", msgBody(`"stream":"yes",` + hiMessages), "stream", "Invalid type for 'stream': expected a boolean, but got a string"},
	{"stream 1", msgBody(`"stream":1,` + hiMessages), "stream", "expected a boolean, but got a number"},
	{"orphan tool_result", msgBody(`"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":"42"}]}]`),
		"messages.0.content.0.tool_use_id", "unexpected 'tool_use_id' found in 'tool_result' blocks: toolu_x"},
	{"tool_result wrong id", msgBody(`"messages":[` + toolTurn + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"sunny"},{"type":"tool_result","tool_use_id":"toolu_02","content":"rain"}]}]`),
		"messages.2.content.1.tool_use_id", "toolu_02. Each 'tool_result' block must have a corresponding 'tool_use' block in the previous message"},
	{"tool_result after a later turn", msgBody(`"messages":[` + toolTurn + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"sunny"}]},` +
		`{"role":"assistant","content":"Sunny."},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"again"}]}]`),
		"messages.4.content.0.tool_use_id", "toolu_01"},
	{"tool_use unanswered", msgBody(`"messages":[` + toolTurn + `,{"role":"user","content":"never mind"}]`),
		"messages.1.content.1.id", "messages.1: 'tool_use' ids were found without 'tool_result' blocks immediately after: toolu_01"},
	{"tool_result no id", msgBody(`"messages":[{"role":"user","content":[{"type":"tool_result","content":"42"}]}]`), "messages.0.content.0.tool_use_id", "Missing required parameter"},
	{"tool_result content number", msgBody(`"messages":[` + toolTurn + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":5}]}]`),
		"messages.2.content.0.content", "expected a string or an array of content blocks"},
	{"tool_result is_error string", msgBody(`"messages":[` + toolTurn + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","is_error":"yes"}]}]`),
		"messages.2.content.0.is_error", "expected a boolean"},
	{"tool_use input string", msgBody(`"messages":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":"{}"}]}]`),
		"messages.1.content.0.input", "expected an object, but got a string"},
	{"image too big", msgBody(`"messages":[{"role":"user","content":[{"type":"text","text":"look"},` + bigImage(6<<20) + `]}]`),
		"messages.0.content.1.source.data", "the image is 6.0 MB (6291456 bytes) once decoded, over the limit of 5 MB (5242880 bytes)"},
	{"image in tool result too big", msgBody(`"messages":[` + toolTurn + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":[` + bigImage(20<<20) + `]}]}]`),
		"messages.2.content.0.content.0.source.data", "20.0 MB"},
	{"image source type", msgBody(`"messages":[{"role":"user","content":[{"type":"image","source":{"type":"path","data":"x"}}]}]`),
		"messages.0.content.0.source.type", "'path'. Supported values are: 'base64', 'url', 'file'"},
	{"image no source", msgBody(`"messages":[{"role":"user","content":[{"type":"image"}]}]`), "messages.0.content.0.source", "Missing required parameter"},
	{"image no data", msgBody(`"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png"}}]}]`),
		"messages.0.content.0.source.data", "Missing required parameter"},
	{"temperature high", msgBody(`"temperature":1.5,` + hiMessages), "temperature", "between 0 and 1, but got 1.5"},
	{"temperature negative", msgBody(`"temperature":-0.1,` + hiMessages), "temperature", "between 0 and 1"},
	{"temperature string", msgBody(`"temperature":"0.5",` + hiMessages), "temperature", "expected a number, but got a string"},
	{"top_p high", msgBody(`"top_p":2,` + hiMessages), "top_p", "between 0 and 1"},
	{"top_k negative", msgBody(`"top_k":-1,` + hiMessages), "top_k", "at least 0"},
	{"stop_sequences string", msgBody(`"stop_sequences":"END",` + hiMessages), "stop_sequences", "expected an array, but got a string"},
	{"stop_sequences number", msgBody(`"stop_sequences":["END",3],` + hiMessages), "stop_sequences.1", "expected a string, but got a number"},
	{"tool no name", msgBody(`"tools":[{"description":"x","input_schema":{"type":"object"}}],` + hiMessages), "tools.0.name", "Missing required parameter"},
	{"tool empty name", msgBody(`"tools":[{"name":"","input_schema":{"type":"object"}}],` + hiMessages), "tools.0.name", "needs a name"},
	{"tool schema string", msgBody(`"tools":[{"name":"f","input_schema":"{}"}],` + hiMessages), "tools.0.input_schema", "must be a JSON Schema object, but got a string"},
	{"tool schema array", msgBody(`"tools":[{"name":"f","input_schema":{"type":"object"}},{"name":"g","input_schema":[]}],` + hiMessages), "tools.1.input_schema", "but got an array"},
	{"tool no schema", msgBody(`"tools":[{"name":"f"}],` + hiMessages), "tools.0.input_schema", "Missing required parameter"},
	{"tool string", msgBody(`"tools":["f"],` + hiMessages), "tools.0", "expected an object, but got a string"},
	{"tool_choice bad type", msgBody(`"tool_choice":{"type":"required"},` + hiMessages), "tool_choice.type", "'required'. Supported values are: 'auto', 'any', 'tool', 'none'"},
	{"tool_choice string", msgBody(`"tool_choice":"auto",` + hiMessages), "tool_choice", "expected an object, but got a string"},
	{"tool_choice tool no name", msgBody(`"tool_choice":{"type":"tool"},` + hiMessages), "tool_choice.name", "Missing required parameter"},
	{"thinking bad type", msgBody(`"thinking":{"type":"on"},` + hiMessages), "thinking.type", "Supported values are: 'enabled', 'disabled', 'adaptive'"},
	{"thinking no budget", msgBody(`"thinking":{"type":"enabled"},` + hiMessages), "thinking.budget_tokens", "Missing required parameter"},
	{"thinking small budget", msgBody(`"thinking":{"type":"enabled","budget_tokens":100},` + hiMessages), "thinking.budget_tokens", "at least 1024"},
	{"system number", msgBody(`"system":5,` + hiMessages), "system", "expected a string or an array of content blocks"},
	{"system image", msgBody(`"system":[{"type":"image","source":{"type":"url","url":"https://x/y.png"}}],` + hiMessages), "system.0.type", "text blocks only"},
	{"metadata user_id number", msgBody(`"metadata":{"user_id":5},` + hiMessages), "metadata.user_id", "expected a string"},
	{"output_config effort", msgBody(`"output_config":{"effort":"extreme"},` + hiMessages), "output_config.effort", "'extreme'"},
	{"output_config format", msgBody(`"output_config":{"format":{"type":"json_object"}},` + hiMessages), "output_config.format.type", "'json_object'"},
	{"cache_control ttl number", msgBody(`"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral","ttl":3600}}],` + hiMessages), "system.0.cache_control.ttl", "expected a string"},
	{"container number", msgBody(`"container":5,` + hiMessages), "container", "expected an object, but got a number"},
	{"mcp_servers object", msgBody(`"mcp_servers":{},` + hiMessages), "mcp_servers", "expected an array"},
	{"search_result source object", msgBody(`"messages":[{"role":"user","content":[{"type":"search_result","source":{"u":1},"title":"t","content":[]}]}]`),
		"messages.0.content.0.source", "expected a string, but got an object"},
}

func TestParseMessagesRefuses(t *testing.T) {
	for _, tc := range badBodies {
		t.Run(tc.name, func(t *testing.T) {
			p, e := parseMessages([]byte(tc.body))
			if e == nil {
				t.Fatalf("parseMessages accepted %s: %+v", tc.body, p)
			}
			if e.Status != http.StatusBadRequest || e.Type != apierr.TypeInvalidRequest {
				t.Errorf("status %d type %q, want 400 %s", e.Status, e.Type, apierr.TypeInvalidRequest)
			}
			if e.Param != tc.param {
				t.Errorf("param %q, want %q (%s)", e.Param, tc.param, e.Message)
			}
			if !strings.Contains(e.Message, tc.msg) {
				t.Errorf("message %q does not contain %q", e.Message, tc.msg)
			}
		})
	}
}

var goodBodies = []struct {
	name, body string
	stream     bool
	maxTokens  int64
}{
	{"minimal", msgBody(hiMessages), false, 1024},
	{"stream", msgBody(`"stream":true,` + hiMessages), true, 1024},
	{"stream null", msgBody(`"stream":null,` + hiMessages), false, 1024},
	{"tool round trip", msgBody(`"messages":[` + toolTurn + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":[{"type":"text","text":"sunny"}]},{"type":"text","text":"thanks"}]}],` +
		`"tools":[{"name":"get_weather","description":"Weather","input_schema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"city":{"type":"string"}}},"cache_control":{"type":"ephemeral","ttl":"1h"}}],` +
		`"tool_choice":{"type":"auto","disable_parallel_tool_use":true}`), false, 1024},
	{"image at the limit", msgBody(`"messages":[{"role":"user","content":[` + bigImage(5<<20) + `]}]`), false, 1024},
	{"claude code shape", `{"model":"claude-sonnet-4-5-20250929","max_tokens":32000,"stream":true,` +
		`"system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}},{"type":"text","text":"Be brief."}],` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"list files","cache_control":{"type":"ephemeral","ttl":"1h"}}]}],` +
		`"tools":[{"name":"Bash","description":"Run a command","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}},` +
		`{"type":"web_search_20250305","name":"web_search","max_uses":5}],` +
		`"metadata":{"user_id":"user_abc_account_123_session_456"},"thinking":{"type":"enabled","budget_tokens":31999},` +
		`"context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]},"output_config":{"effort":"high"},"temperature":1,"future_member":{"x":[1]}}`, true, 32000},
	{"system role message", msgBody(`"messages":[{"role":"system","content":"be nice","clear_at":"never"},{"role":"user","content":"hi"}]`), false, 1024},
	{"unknown members pass", msgBody(`"speed":"fast","messages":[{"role":"user","content":[{"type":"text","text":"a","unknown":1}]}]`), false, 1024},
	{"documents", msgBody(`"messages":[{"role":"user","content":[{"type":"document","source":{"type":"text","media_type":"text/plain","data":"doc"},"title":"T","citations":{"enabled":true}},` +
		`{"type":"document","source":{"type":"content","content":[{"type":"text","text":"a"}]}},{"type":"search_result","source":"https://x","title":"t","content":[{"type":"text","text":"r"}]}]}]`), false, 1024},
	{"thinking history", msgBody(`"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"redacted_thinking","data":"xyz"},{"type":"text","text":"a"}]}]`), false, 1024},
}

func TestParseMessagesAccepts(t *testing.T) {
	for _, tc := range goodBodies {
		t.Run(tc.name, func(t *testing.T) {
			p, e := parseMessages([]byte(tc.body))
			if e != nil {
				t.Fatalf("parseMessages refused: %v", e)
			}
			if p.Stream != tc.stream || p.MaxTokens != tc.maxTokens || p.Model == "" || p.Model != p.Req.Model {
				t.Errorf("parsed stream=%v max_tokens=%d model=%q, want %v %d", p.Stream, p.MaxTokens, p.Model, tc.stream, tc.maxTokens)
			}
			if got := tc.body[p.ModelAt.ValStart:p.ModelAt.ValEnd]; got != `"`+p.Model+`"` {
				t.Errorf("ModelAt points at %s", got)
			}
		})
	}
}

func TestParseCountTokens(t *testing.T) {
	p, e := parseCountTokens([]byte(`{"model":"claude-haiku-4-5","messages":[{"role":"user","content":"hi"}]}`))
	if e != nil {
		t.Fatalf("count_tokens without max_tokens refused: %v", e)
	}
	if p.MaxTokens != 0 || p.Model != "claude-haiku-4-5" {
		t.Errorf("parsed %+v", p)
	}
	for _, body := range []string{
		`{"model":"m"}`,
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","messages":[{"role":"bot","content":"hi"}]}`,
		`{"model":"m","max_tokens":"x","messages":[{"role":"user","content":"hi"}]}`,
	} {
		if _, e := parseCountTokens([]byte(body)); e == nil || e.Status != http.StatusBadRequest {
			t.Errorf("parseCountTokens(%s) = %v, want a 400", body, e)
		}
	}
}

func TestBase64Decoded(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{{"", 0}, {"QQ==", 1}, {"QUI=", 2}, {"QUJD", 3}, {"QQ", 1}, {"QUI", 2}, {"QUJDRA==", 4}} {
		if got := base64Decoded(tc.in); got != tc.want {
			t.Errorf("base64Decoded(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// claudeCodeRequest is a request in the shape Claude Code sends (system
// blocks with cache_control, a tool round trip with thinking, ten custom
// tools whose schemas carry $schema, metadata.user_id, thinking, stream).
func claudeCodeRequest(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/claude_code_request.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseClaudeCodeRequest(t *testing.T) {
	p, e := parseMessages(claudeCodeRequest(t))
	if e != nil {
		t.Fatal(e)
	}
	if !p.Stream || p.MaxTokens != 32000 || p.Model != "claude-sonnet-4-5-20250929" || len(p.Req.Tools) != 10 ||
		len(p.Req.Messages) != 3 || p.Req.Thinking.Type != "enabled" || len(p.Req.System.Blocks) != 2 {
		t.Errorf("parsed %+v", p)
	}
}

func BenchmarkParseMessages(b *testing.B) {
	body := claudeCodeRequest(b)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, e := parseMessages(body); e != nil {
			b.Fatal(e)
		}
	}
}

func BenchmarkParseMessagesImage(b *testing.B) {
	body := []byte(msgBody(`"messages":[{"role":"user","content":[` + bigImage(4<<20) + `]}]`))
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, e := parseMessages(body); e != nil {
			b.Fatal(e)
		}
	}
}
