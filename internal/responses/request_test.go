package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

// translate parses and translates body, failing the test on an error.
func translate(t *testing.T, body string) (*Translation, *oaiwire.Request) {
	t.Helper()
	r, e := Parse([]byte(body))
	if e != nil {
		t.Fatalf("Parse: %v", e)
	}
	tr, e := r.Translate()
	if e != nil {
		t.Fatalf("Translate: %v", e)
	}
	var chat oaiwire.Request
	if err := json.Unmarshal(tr.Chat, &chat); err != nil {
		t.Fatalf("chat body %s: %v", tr.Chat, err)
	}
	return tr, &chat
}

func TestTranslateRequest(t *testing.T) {
	cases := []struct {
		name, body string
		want       string // the chat body, exactly
	}{
		{"string input", `{"model":"m","input":"hi"}`,
			`{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{"instructions and params", `{"model":"m","input":"hi","instructions":"Be brief.","max_output_tokens":50,"temperature":0.2,"top_p":0.9,"user":"u1","metadata":{"a":"b"},"store":false,"include":["reasoning.encrypted_content"]}`,
			`{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}],"max_completion_tokens":50,"temperature":0.2,"top_p":0.9,"user":"u1"}`},
		{"stream asks for usage", `{"model":"m","input":"hi","stream":true}`,
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`},
		{"message parts", `{"model":"m","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]},{"role":"user","content":[{"type":"input_text","text":"what is"},{"type":"input_image","image_url":"https://x/cat.png","detail":"low"}]}]}`,
			`{"model":"m","messages":[{"role":"developer","content":"rules"},{"role":"user","content":[{"type":"text","text":"what is"},{"type":"image_url","image_url":{"url":"https://x/cat.png","detail":"low"}}]}]}`},
		{"assistant output replayed", `{"model":"m","input":[{"role":"user","content":"a"},{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"b","annotations":[]}]},{"role":"user","content":"c"}]}`,
			`{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`},
		{"function call turn", `{"model":"m","input":[{"role":"user","content":"w?"},{"type":"reasoning","id":"rs_1","summary":[]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Checking."}]},{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"x\":1}"},{"type":"function_call","call_id":"call_2","name":"g","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":"one"},{"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"tw"},{"type":"input_text","text":"o"}]}]}`,
			`{"model":"m","messages":[{"role":"user","content":"w?"},{"role":"assistant","content":"Checking.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},{"id":"call_2","type":"function","function":{"name":"g","arguments":"{}"}}]},{"role":"tool","content":"one","tool_call_id":"call_1"},{"role":"tool","content":"two","tool_call_id":"call_2"}]}`},
		{"tools and choice", `{"model":"m","input":"hi","tools":[{"type":"function","name":"f","description":"d","parameters":{"type":"object"},"strict":true},{"type":"function","name":"g"}],"tool_choice":{"type":"function","name":"g"},"parallel_tool_calls":false}`,
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"},"strict":true}},{"type":"function","function":{"name":"g"}}],"tool_choice":{"function":{"name":"g"},"type":"function"},"parallel_tool_calls":false}`},
		{"allowed tools narrow", `{"model":"m","input":"hi","tools":[{"type":"function","name":"f"},{"type":"function","name":"g"}],"tool_choice":{"type":"allowed_tools","mode":"required","tools":[{"type":"function","name":"g"}]}}`,
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"g"}}],"tool_choice":"required"}`},
		{"choice without tools dropped", `{"model":"m","input":"hi","tool_choice":"auto","parallel_tool_calls":true}`,
			`{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{"json schema", `{"model":"m","input":"hi","text":{"format":{"type":"json_schema","name":"r","schema":{"type":"object"},"strict":true,"description":"x"},"verbosity":"low"}}`,
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"r","description":"x","schema":{"type":"object"},"strict":true}}}`},
		{"json object and reasoning", `{"model":"m","input":"hi","text":{"format":{"type":"json_object"}},"reasoning":{"effort":"high","summary":"auto"}}`,
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"},"reasoning_effort":"high"}`},
		{"text format", `{"model":"m","input":"hi","text":{"format":{"type":"text"}}}`,
			`{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{"file and audio", `{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_data":"data:application/pdf;base64,AAAA","filename":"a.pdf"},{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]}]}`,
			`{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_data":"data:application/pdf;base64,AAAA","filename":"a.pdf"}},{"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr, _ := translate(t, tc.body)
			if string(tr.Chat) != tc.want {
				t.Errorf("chat body\n got %s\nwant %s", tr.Chat, tc.want)
			}
		})
	}
}

func TestRefused(t *testing.T) {
	cases := []struct{ name, body, param, says string }{
		{"not json", `{"model":`, "", "parse"},
		{"array body", `[1]`, "", "JSON object"},
		{"no model", `{"input":"x"}`, "model", "Missing"},
		{"model type", `{"model":1,"input":"x"}`, "model", "expected a string"},
		{"max tokens type", `{"model":"m","input":"x","max_output_tokens":1.5}`, "max_output_tokens", "integer"},
		{"max tokens range", `{"model":"m","input":"x","max_output_tokens":0}`, "max_output_tokens", "at least 1"},
		{"top_p", `{"model":"m","input":"x","top_p":1.5}`, "top_p", "between"},
		{"input type", `{"model":"m","input":5}`, "input", "string or an array"},
		{"stream options without stream", `{"model":"m","input":"x","stream_options":{}}`, "stream_options", "only allowed"},
		{"case", `{"model":"m","input":"x","Tools":[]}`, "Tools", "did you mean 'tools'"},
		{"background", `{"model":"m","input":"x","background":true}`, "background", "does not store"},
		{"previous", `{"model":"m","input":"x","previous_response_id":"resp_1"}`, "previous_response_id", "whole conversation"},
		{"conversation", `{"model":"m","input":"x","conversation":"conv_1"}`, "conversation", "not supported"},
		{"store", `{"model":"m","input":"x","store":true}`, "store", "store: false"},
		{"prompt", `{"model":"m","prompt":{"id":"pmpt_1"}}`, "prompt", "templates"},
		{"missing input", `{"model":"m"}`, "input", "Missing"},
		{"empty input", `{"model":"m","input":[]}`, "input", "empty"},
		{"item not object", `{"model":"m","input":["x"]}`, "input[0]", "object"},
		{"item reference", `{"model":"m","input":[{"type":"item_reference","id":"x"}]}`, "input[0]", "stores no items"},
		{"computer output", `{"model":"m","input":[{"type":"computer_call_output","call_id":"c"}]}`, "input[0].type", "not supported"},
		{"no type", `{"model":"m","input":[{"content":"x"}]}`, "input[0].type", "Missing"},
		{"role", `{"model":"m","input":[{"role":"tool","content":"x"}]}`, "input[0].role", "Supported values"},
		{"no content", `{"model":"m","input":[{"role":"user"}]}`, "input[0].content", "Missing"},
		{"part type", `{"model":"m","input":[{"role":"user","content":[{"type":"video"}]}]}`, "input[0].content[0].type", "Supported values"},
		{"image in system", `{"model":"m","input":[{"role":"system","content":[{"type":"input_image","image_url":"https://x"}]}]}`, "input[0].content[0].type", "text only"},
		{"image by file id", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","file_id":"file_1"}]}]}`, "input[0].content[0].file_id", "Files API"},
		{"image detail", `{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"https://x","detail":"max"}]}]}`, "input[0].content[0].detail", "Supported"},
		{"file by id", `{"model":"m","input":[{"role":"user","content":[{"type":"input_file","file_id":"file_1"}]}]}`, "input[0].content[0]", "Files API"},
		{"text part type", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":5}]}]}`, "input[0].content[0].text", "expected a string"},
		{"assistant image", `{"model":"m","input":[{"role":"assistant","content":[{"type":"input_image","image_url":"x"}]}]}`, "input[0].content[0].type", "output_text and refusal"},
		{"call without id", `{"model":"m","input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "input[0].call_id", "Missing"},
		{"call without arguments", `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f"}]}`, "input[0].arguments", "Missing"},
		{"output without id", `{"model":"m","input":[{"type":"function_call_output","output":"x"}]}`, "input[0].call_id", "Missing"},
		{"output image", `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_image","image_url":"x"}]}]}`, "input[0].output[0].type", "text only"},
		{"output type", `{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":5}]}`, "input[0].output", "expected"},
		{"file search", `{"model":"m","input":"x","tools":[{"type":"file_search","vector_store_ids":["v"]}]}`, "tools[0].type", "Built-in tools"},
		{"tool without name", `{"model":"m","input":"x","tools":[{"type":"function"}]}`, "tools[0].name", "Missing"},
		{"tool params type", `{"model":"m","input":"x","tools":[{"type":"function","name":"f","parameters":[]}]}`, "tools[0].parameters", "object"},
		{"tool choice value", `{"model":"m","input":"x","tool_choice":"any"}`, "tool_choice", "Supported values"},
		{"tool choice type", `{"model":"m","input":"x","tool_choice":5}`, "tool_choice", "string or an object"},
		{"unknown function", `{"model":"m","input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}}`, "tool_choice", "not found"},
		{"hosted choice", `{"model":"m","input":"x","tool_choice":{"type":"file_search"}}`, "tool_choice.type", "function tools only"},
		{"allowed mode", `{"model":"m","input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"allowed_tools","mode":"none","tools":[]}}`, "tool_choice.mode", "Supported"},
		{"allowed unknown", `{"model":"m","input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"allowed_tools","mode":"auto","tools":[{"type":"function","name":"g"}]}}`, "tool_choice.tools[0]", "not one of"},
		{"format type", `{"model":"m","input":"x","text":{"format":{"type":"xml"}}}`, "text.format.type", "Supported"},
		{"format not object", `{"model":"m","input":"x","text":{"format":"json"}}`, "text.format", "object"},
		{"schema missing", `{"model":"m","input":"x","text":{"format":{"type":"json_schema","name":"r"}}}`, "text.format.schema", "Missing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, e := Parse([]byte(tc.body))
			if e == nil {
				_, e = r.Translate()
			}
			if e == nil {
				t.Fatal("accepted")
			}
			if e.Status != 400 || e.Param != tc.param || !strings.Contains(e.Message, tc.says) {
				t.Errorf("got %d param %q: %s; want param %q saying %q", e.Status, e.Param, e.Message, tc.param, tc.says)
			}
		})
	}
}

// A pass-through request needs only Parse: it keeps what it does not know.
func TestParsePassThrough(t *testing.T) {
	r, e := Parse([]byte(`{"model":"gpt-4o","input":[{"type":"item_reference","id":"x"}],"stream":true,"max_output_tokens":99,"tools":[{"type":"web_search"}],"store":true,"previous_response_id":"resp_1","future_param":{"x":1}}`))
	if e != nil || r.Model != "gpt-4o" || !r.Stream || r.MaxOutputTokens != 99 {
		t.Fatalf("got %+v, %v", r, e)
	}
}

func FuzzTranslate(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","input":"hi"}`,
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a"}]},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"x"}],"tools":[{"type":"function","name":"f"}],"tool_choice":"auto"}`,
		`{"model":"m","input":"x","text":{"format":{"type":"json_schema","name":"r","schema":{}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, e := Parse(body)
		if e != nil {
			if e.Status != 400 {
				t.Fatalf("status %d", e.Status)
			}
			return
		}
		tr, e := r.Translate()
		if e != nil {
			return
		}
		if !json.Valid(tr.Chat) {
			t.Fatalf("invalid chat body %s", tr.Chat)
		}
	})
}
