package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/oapitest"
	"github.com/modelgate/modelgate/internal/provider"
)

// codexTools are tools as Codex CLI sends them: a namespace of functions,
// a freeform (custom) tool with a grammar, a plain function, local_shell.
const codexTools = `"tools":[` +
	`{"type":"function","name":"shell","description":"Runs a shell command.","strict":false,"parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}}},"required":["command"]}},` +
	`{"type":"custom","name":"apply_patch","description":"Edit files.","format":{"type":"grammar","syntax":"lark","definition":"start: begin_patch"}},` +
	`{"type":"namespace","name":"multi_agent_v1","description":"Agents.","tools":[` +
	`{"type":"function","name":"spawn_agent","description":"Start one.","strict":false,"parameters":{"type":"object","properties":{}}},` +
	`{"type":"custom","name":"note","description":"A note."}]},` +
	`{"type":"local_shell"}]`

func TestCodexToolsTranslate(t *testing.T) {
	_, chat := translate(t, `{"model":"m","input":"hi",`+codexTools+`,"tool_choice":"auto","store":false,"include":["reasoning.encrypted_content"]}`)
	want := []struct{ name, desc, params string }{
		{"shell", "Runs a shell command.", `"command"`},
		{"apply_patch", "Edit files.\n\nThe input must follow this lark grammar:\nstart: begin_patch", `"required":["input"]`},
		{"multi_agent_v1__spawn_agent", "Agents.\n\nStart one.", `{"type":"object","properties":{}}`},
		{"multi_agent_v1__note", "A note.", `"input"`},
		{"local_shell", localShellDescription, `"command"`},
	}
	if len(chat.Tools) != len(want) {
		t.Fatalf("tools %+v", chat.Tools)
	}
	for i, w := range want {
		f := chat.Tools[i].Function
		if chat.Tools[i].Type != "function" || f.Name != w.name || f.Description != w.desc || !strings.Contains(string(f.Parameters), w.params) {
			t.Errorf("tool %d: %s %q %s", i, f.Name, f.Description, f.Parameters)
		}
	}
}

func TestFlatName(t *testing.T) {
	long := strings.Repeat("x", 70)
	cases := []struct{ ns, name, want string }{
		{"multi_agent_v1", "spawn_agent", "multi_agent_v1__spawn_agent"},
		{"mcp.github", "list", "mcp_github__list_"},
		{long, "a", ""},
	}
	for _, tc := range cases {
		got := flatName(tc.ns, tc.name)
		if len(got) > maxChatName || tc.want != "" && !strings.HasPrefix(got, tc.want) {
			t.Errorf("flatName(%q, %q) = %q", tc.ns, tc.name, got)
		}
	}
	if flatName(long, "a") == flatName(long, "b") || flatName("a.b", "c") == flatName("a_b", "c") {
		t.Error("distinct tools share a name")
	}
}

func TestCodexToolsRefused(t *testing.T) {
	cases := []struct{ name, tools, param, says string }{
		{"image generation", `[{"type":"image_generation","output_format":"png"}]`, "tools[0].type", "image_generation"},
		{"tool search", `[{"type":"function","name":"f"},{"type":"tool_search","execution":"client"}]`, "tools[1].type", "tool_search"},
		{"namespace without tools", `[{"type":"namespace","name":"n","description":"d","tools":[]}]`, "tools[0].tools", "at least one"},
		{"namespace member type", `[{"type":"namespace","name":"n","description":"d","tools":[{"type":"web_search"}]}]`, "tools[0].tools[0].type", "function and custom"},
		{"custom without name", `[{"type":"custom"}]`, "tools[0].name", "Missing"},
		{"same name twice", `[{"type":"function","name":"n__f"},{"type":"namespace","name":"n","description":"d","tools":[{"type":"function","name":"f"}]}]`, "tools[1].tools[0]", "already used"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, e := Parse([]byte(`{"model":"m","input":"x","tools":` + tc.tools + `}`))
			if e == nil {
				_, e = r.Translate()
			}
			if e == nil || e.Status != 400 || e.Param != tc.param || !strings.Contains(e.Message, tc.says) {
				t.Fatalf("got %+v; want param %q saying %q", e, tc.param, tc.says)
			}
		})
	}
}

// The calls of a turn come back as input: each becomes the chat call of
// the function that stands for its tool, and each output a tool message.
func TestCodexInputCalls(t *testing.T) {
	body := `{"model":"m",` + codexTools + `,"input":[{"role":"user","content":"go"},` +
		`{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"x"},` +
		`{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}},` +
		`{"type":"function_call","call_id":"c1","namespace":"multi_agent_v1","name":"spawn_agent","arguments":"{}"},` +
		`{"type":"custom_tool_call","call_id":"c2","name":"apply_patch","input":"*** Begin Patch"},` +
		`{"type":"local_shell_call","id":"lsh_1","call_id":"c3","status":"completed","action":{"type":"exec","command":["ls","-l"],"env":{},"working_directory":"/tmp"}},` +
		`{"type":"function_call_output","call_id":"c1","output":"spawned"},` +
		`{"type":"custom_tool_call_output","call_id":"c2","output":"Done!"},` +
		`{"type":"local_shell_call_output","id":"c3","output":"total 0"}]}`
	_, chat := translate(t, body)
	m := chat.Messages
	if len(m) != 5 || m[1].Role != "assistant" || len(m[1].ToolCalls) != 3 {
		t.Fatalf("messages %+v", m)
	}
	want := []struct{ id, name, args string }{
		{"c1", "multi_agent_v1__spawn_agent", `{}`},
		{"c2", "apply_patch", `{"input":"*** Begin Patch"}`},
		{"c3", "local_shell", `{"command":["ls","-l"],"workdir":"/tmp"}`},
	}
	for i, w := range want {
		tc := m[1].ToolCalls[i]
		if tc.ID != w.id || tc.Function.Name != w.name || tc.Function.Arguments != w.args {
			t.Errorf("call %d: %+v", i, tc)
		}
	}
	for i, w := range []struct{ id, text string }{{"c1", "spawned"}, {"c2", "Done!"}, {"c3", "total 0"}} {
		if msg := m[2+i]; msg.Role != "tool" || msg.ToolCallID != w.id || msg.Content.String() != w.text {
			t.Errorf("output %d: %+v", i, msg)
		}
	}
}

// codexChat is a chat answer that calls every kind of tool.
const codexChat = `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
	`{"id":"call_1","type":"function","function":{"name":"multi_agent_v1__spawn_agent","arguments":"{\"task\":\"x\"}"}},` +
	`{"id":"call_2","type":"function","function":{"name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n\"}"}},` +
	`{"id":"call_3","type":"function","function":{"name":"local_shell","arguments":"{\"command\":[\"ls\"],\"timeout_ms\":500}"}},` +
	`{"id":"call_4","type":"function","function":{"name":"shell","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`

// checkCodexOutput checks the output items of codexChat.
func checkCodexOutput(t *testing.T, o []responses.ResponseOutputItemUnion) {
	t.Helper()
	if len(o) != 4 {
		t.Fatalf("output %+v", o)
	}
	if f := o[0]; f.Type != "function_call" || f.Name != "spawn_agent" || f.Namespace != "multi_agent_v1" || f.CallID != "call_1" ||
		f.Arguments.OfString != `{"task":"x"}` || !strings.HasPrefix(f.ID, "fc_") {
		t.Errorf("namespaced call %+v", f)
	}
	if c := o[1]; c.Type != "custom_tool_call" || c.Name != "apply_patch" || c.Input != "*** Begin Patch\n" || c.CallID != "call_2" ||
		!strings.HasPrefix(c.ID, "ctc_") {
		t.Errorf("custom call %+v", c)
	}
	if s := o[2]; s.Type != "local_shell_call" || s.CallID != "call_3" || len(s.Action.Command) != 1 || s.Action.Command[0] != "ls" ||
		s.Action.TimeoutMs != 500 {
		t.Errorf("shell call %+v", s)
	}
	if f := o[3]; f.Type != "function_call" || f.Name != "shell" || f.Namespace != "" {
		t.Errorf("plain call %+v", f)
	}
}

func TestCodexAnswer(t *testing.T) {
	tr, _ := translate(t, `{"model":"m","input":"hi",`+codexTools+`}`)
	a, err := tr.Answer([]byte(codexChat))
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
	checkCodexOutput(t, r.Output)
	if len(r.Tools) != 4 || r.Tools[2].Type != "namespace" || r.Tools[1].Type != "custom" {
		t.Errorf("tools echo %s", b)
	}
}

func TestCodexStream(t *testing.T) {
	tr, _ := translate(t, `{"model":"m","input":"hi","stream":true,`+codexTools+`}`)
	idx := func(i int) string { return string(rune('0' + i)) }
	var in [][]byte
	in = append(in, []byte(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`))
	for i, c := range []struct{ id, name string }{{"call_1", "multi_agent_v1__spawn_agent"}, {"call_2", "apply_patch"}, {"call_3", "local_shell"}, {"call_4", "shell"}} {
		in = append(in, []byte(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":`+idx(i)+`,"id":"`+c.id+`","type":"function","function":{"name":"`+c.name+`","arguments":""}}]}}]}`))
	}
	for i, args := range []string{`{\"task\":`, `\"x\"}`} {
		_ = i
		in = append(in, []byte(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"`+args+`"}}]}}]}`))
	}
	in = append(in, []byte(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"input\":\"*** Begin"}}]}}]}`),
		[]byte(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":" Patch\\n\"}"}}]}}]}`),
		[]byte(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"function":{"arguments":"{\"command\":[\"ls\"],\"timeout_ms\":500}"}}]}}]}`),
		[]byte(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`))
	evs := run(t, tr, in, func(s *Stream) []Event { return s.Finish(provider.Usage{}, 3) })
	got := types(evs)
	for _, want := range []string{"custom_tool_call_input.delta custom_tool_call_input.done", "function_call_arguments.done"} {
		if !strings.Contains(got, want) {
			t.Errorf("events %s lack %s", got, want)
		}
	}
	// Only the plain and namespaced functions stream their arguments.
	if n := strings.Count(got, "function_call_arguments.delta"); n != 3 {
		t.Errorf("%d argument deltas: %s", n, got)
	}
	var done responses.ResponseCompletedEvent
	if err := json.Unmarshal(evs[len(evs)-1].Data, &done); err != nil {
		t.Fatal(err)
	}
	checkCodexOutput(t, done.Response.Output)
}

// The tools the client runs itself cost nothing at the vendor: a
// pass-through request with Codex's tools asks only for its web search.
func TestCodexToolsAsk(t *testing.T) {
	r, e := Parse([]byte(`{"model":"gpt-5","input":"hi",` + codexTools[:len(codexTools)-1] + `,{"type":"web_search"}]}`))
	if e != nil {
		t.Fatal(e)
	}
	a := r.Ask(0)
	if len(a.Tools) != 1 || a.Tools[0].Type != "web_search" || a.Tools[0].Param != "tools[4].type" {
		t.Errorf("ask %+v", a)
	}
}
