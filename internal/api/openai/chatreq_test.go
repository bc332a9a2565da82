package openai

import (
	"encoding/json"
	"strings"
	"testing"
)

var chatCases = []struct {
	name  string
	body  string
	param string // "" with ok=false means no param; ok=true means valid
	ok    bool
}{
	{"minimal", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "", true},
	{"nulls allowed", `{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":null,"top_p":null,"n":null,"stop":null,"tools":null}`, "", true},
	{"all roles", `{"model":"m","messages":[{"role":"system","content":"s"},{"role":"developer","content":"d"},{"role":"user","content":"u"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"function","name":"f","content":"r"}]}`, "", true},
	{"content parts", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA==","detail":"high"}},{"type":"input_audio","input_audio":{"data":"AA==","format":"wav"}},{"type":"file","file":{"file_id":"f"}}]}]}`, "", true},
	{"full params", `{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":2,"top_p":0,"n":3,"max_tokens":1,"max_completion_tokens":5,
		"presence_penalty":-2,"frequency_penalty":2,"seed":-7,"logprobs":true,"top_logprobs":20,"user":"u","parallel_tool_calls":false,
		"stop":["a","b"],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}},{"type":"custom","custom":{"name":"c"}}],
		"tool_choice":{"type":"function","function":{"name":"f"}},"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object"}}},
		"logit_bias":{"50256":-100},"stream":true,"stream_options":{"include_usage":true},"unknown_field":{"deep":[1,2]}}`, "", true},
	{"legacy functions", `{"model":"m","messages":[{"role":"user","content":"hi"}],"functions":[{"name":"f"}],"function_call":{"name":"f"}}`, "", true},

	{"unknown part type", `{"model":"m","messages":[{"role":"user","content":[{"type":"video_url","video_url":{"url":"x"}}]}]}`, "messages[0].content[0].type", false},
	{"missing model", `{"messages":[{"role":"user","content":"hi"}]}`, "model", false},
	{"empty model", `{"model":"","messages":[{"role":"user","content":"hi"}]}`, "model", false},
	{"model number", `{"model":4,"messages":[{"role":"user","content":"hi"}]}`, "model", false},
	{"missing messages", `{"model":"m"}`, "messages", false},
	{"null messages", `{"model":"m","messages":null}`, "messages", false},
	{"empty messages", `{"model":"m","messages":[]}`, "messages", false},
	{"messages string", `{"model":"m","messages":"hi"}`, "messages", false},
	{"message not object", `{"model":"m","messages":["hi"]}`, "messages[0]", false},
	{"missing role", `{"model":"m","messages":[{"content":"hi"}]}`, "messages[0].role", false},
	{"unknown role", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"robot","content":"hi"}]}`, "messages[1].role", false},
	{"role number", `{"model":"m","messages":[{"role":1,"content":"hi"}]}`, "messages[0].role", false},
	{"user without content", `{"model":"m","messages":[{"role":"user"}]}`, "messages[0].content", false},
	{"content number", `{"model":"m","messages":[{"role":"user","content":5}]}`, "messages[0].content", false},
	{"empty parts", `{"model":"m","messages":[{"role":"user","content":[]}]}`, "messages[0].content", false},
	{"part without type", `{"model":"m","messages":[{"role":"user","content":[{"text":"hi"}]}]}`, "messages[0].content[0].type", false},
	{"text part without text", `{"model":"m","messages":[{"role":"user","content":[{"type":"text"}]}]}`, "messages[0].content[0].text", false},
	{"bad detail", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u","detail":"max"}}]}]}`, "messages[0].content[0].image_url.detail", false},
	{"tool call without id", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, "messages[0].tool_calls[0].id", false},
	{"function message without name", `{"model":"m","messages":[{"role":"function","content":"x"}]}`, "messages[0].name", false},
	{"temperature high", `{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":2.01}`, "temperature", false},
	{"temperature string", `{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":"1"}`, "temperature", false},
	{"top_p negative", `{"model":"m","messages":[{"role":"user","content":"hi"}],"top_p":-0.5}`, "top_p", false},
	{"n zero", `{"model":"m","messages":[{"role":"user","content":"hi"}],"n":0}`, "n", false},
	{"n huge", `{"model":"m","messages":[{"role":"user","content":"hi"}],"n":1000}`, "n", false},
	{"n fraction", `{"model":"m","messages":[{"role":"user","content":"hi"}],"n":1.5}`, "n", false},
	{"max_tokens zero", `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":0}`, "max_tokens", false},
	{"max_completion_tokens negative", `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":-1}`, "max_completion_tokens", false},
	{"penalty", `{"model":"m","messages":[{"role":"user","content":"hi"}],"presence_penalty":3}`, "presence_penalty", false},
	{"top_logprobs", `{"model":"m","messages":[{"role":"user","content":"hi"}],"top_logprobs":21}`, "top_logprobs", false},
	{"logit_bias", `{"model":"m","messages":[{"role":"user","content":"hi"}],"logit_bias":{"1":101}}`, "logit_bias.1", false},
	{"stream string", `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":"true"}`, "stream", false},
	{"stream_options without stream", `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream_options":{"include_usage":true}}`, "stream_options", false},
	{"include_usage string", `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":"yes"}}`, "stream_options.include_usage", false},
	{"stop number", `{"model":"m","messages":[{"role":"user","content":"hi"}],"stop":5}`, "stop", false},
	{"stop array of numbers", `{"model":"m","messages":[{"role":"user","content":"hi"}],"stop":["a",5]}`, "stop[1]", false},
	{"tools object", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":{}}`, "tools", false},
	{"tool without type", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"function":{"name":"f"}}]}`, "tools[0].type", false},
	{"tool without function", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function"}]}`, "tools[0].function", false},
	{"tool parameters array", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":[]}}]}`, "tools[0].function.parameters", false},
	{"tool_choice keyword", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tool_choice":"any"}`, "tool_choice", false},
	{"tool_choice unnamed", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"function","function":{}}}`, "tool_choice.function.name", false},
	{"tool_choice number", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tool_choice":1}`, "tool_choice", false},
	{"function_call unnamed", `{"model":"m","messages":[{"role":"user","content":"hi"}],"function_call":{}}`, "function_call.name", false},
	{"response_format type", `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"yaml"}}`, "response_format.type", false},
	{"response_format schema name", `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{}}}`, "response_format.json_schema.name", false},
	{"case variant key", `{"model":"m","messages":[{"role":"user","content":"hi"}],"Max_Tokens":1}`, "Max_Tokens", false},
	{"case variant only", `{"model":"m","messAges":[{"role":"user","content":"hi"}]}`, "messAges", false},
	{"case variant nested", `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"Include_Usage":true}}`, "stream_options.Include_Usage", false},
	{"case variant in message", `{"model":"m","messages":[{"role":"user","Content":"hi"}]}`, "messages[0].Content", false},
	{"case variant in tool", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"Name":"f"}}]}`, "tools[0].function.Name", false},
	{"malformed", `{"model":"m",`, "", false},
	{"array body", `[]`, "", false},
	{"duplicate key", `{"model":"a","model":"b","messages":[{"role":"user","content":"hi"}]}`, "", false},
	{"invalid utf8", "{\"model\":\"m\xff\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", "", false},
}

func TestParseChat(t *testing.T) {
	for _, tc := range chatCases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := parseChat([]byte(tc.body))
			if tc.ok {
				if err != nil {
					t.Fatalf("rejected a valid request: %v", err)
				}
				if p.Model != "m" {
					t.Errorf("model = %q", p.Model)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted an invalid request")
			}
			if err.Status != 400 || err.Code == "" || err.Type != "invalid_request_error" {
				t.Errorf("error %d %s %s", err.Status, err.Type, err.Code)
			}
			if err.Param != tc.param {
				t.Errorf("param = %q, want %q (message %q)", err.Param, tc.param, err.Message)
			}
			if err.Message == "" || !json.Valid(err.JSON()) {
				t.Errorf("bad error body %s", err.JSON())
			}
		})
	}
}

func TestParseChatStreamFlags(t *testing.T) {
	cases := []struct {
		body                 string
		stream, includeUsage bool
	}{
		{`{"model":"m","messages":[{"role":"user","content":"hi"}]}`, false, false},
		{`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":false}`, false, false},
		{`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`, true, false},
		{`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":false}}`, true, false},
		{`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`, true, true},
	}
	for _, tc := range cases {
		p, err := parseChat([]byte(tc.body))
		if err != nil || p.Stream != tc.stream || p.IncludeUsage != tc.includeUsage {
			t.Errorf("%s: %+v, %v", tc.body, p, err)
		}
	}
}

func FuzzParseChat(f *testing.F) {
	for _, tc := range chatCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := parseChat(body)
		if err != nil {
			if err.Status != 400 || !json.Valid(err.JSON()) {
				t.Fatalf("bad error for %q: %v", body, err)
			}
			return
		}
		if p.Model == "" || !json.Valid(body) || !strings.Contains(string(body), "messages") {
			t.Fatalf("accepted %q as %+v", body, p)
		}
	})
}
