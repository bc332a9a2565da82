package tokenize

import (
	"strings"
	"testing"
)

// cookbookBody holds the example messages of the OpenAI cookbook "How to
// count tokens with tiktoken", whose published counts are 129 prompt tokens
// for gpt-4/gpt-3.5-turbo (cl100k) and 124 for gpt-4o/gpt-4o-mini (o200k),
// matching the API's reported usage.
const cookbookBody = `{"model":"gpt-4o","messages":[
 {"role":"system","content":"You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
 {"role":"system","name":"example_user","content":"New synergies will help drive top-line growth."},
 {"role":"system","name":"example_assistant","content":"Things working well together will increase revenue."},
 {"role":"system","name":"example_user","content":"Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."},
 {"role":"system","name":"example_assistant","content":"Let's talk later when we're less busy about how to do better."},
 {"role":"user","content":"This late pivot means we don't have time to boil the ocean for the client deliverable."}
]}`

func TestChatPrompt(t *testing.T) {
	o := sharedSet.For("o200k")
	c := func(s string) int { return o.Count([]byte(s)) }
	tool := `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}`

	tests := []struct {
		name string
		enc  string
		body string
		want int
	}{
		{"cookbook gpt-4o", "o200k", cookbookBody, 124},
		{"cookbook gpt-4", "cl100k", cookbookBody, 129},
		{"string content", "o200k",
			`{"messages":[{"role":"user","content":"hello world"}]}`,
			3 + c("user") + 2 + 3},
		{"escaped string", "o200k",
			`{"messages":[{"role":"user","content":"hello\u0020world"}]}`,
			3 + c("user") + 2 + 3},
		{"name", "o200k",
			`{"messages":[{"role":"user","name":"bob","content":"hello world"}]}`,
			3 + c("user") + c("bob") + 1 + 2 + 3},
		{"null content", "o200k",
			`{"messages":[{"role":"assistant","content":null}]}`,
			3 + c("assistant") + 3},
		{"parts", "o200k",
			`{"messages":[{"role":"user","content":[
			  {"type":"text","text":"hello world"},
			  {"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA","detail":"high"}},
			  {"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}},
			  {"type":"text","text":"What is this?"}]}]}`,
			3 + c("user") + 2 + 85 + c("What is this?") + 3},
		{"tools", "o200k",
			`{"messages":[{"role":"user","content":"hi"}],"tools":[` + tool + `]}`,
			3 + c("user") + c("hi") + c(tool) + 3},
		{"tools pretty-printed", "o200k",
			`{"messages":[{"role":"user","content":"hi"}],"tools":[ {"type": "function",
			 "function": {"name": "get_weather", "parameters": {"type": "object",
			 "properties": {"city": {"type": "string"}}}}} ]}`,
			3 + c("user") + c("hi") + c(tool) + 3},
		{"tool call and result", "o200k",
			`{"messages":[
			  {"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
			  {"role":"tool","tool_call_id":"c1","content":"42"}]}`,
			3 + c("assistant") + c(`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]`) +
				3 + c("tool") + c("c1") + c("42") + 3},
		{"empty messages", "o200k", `{"messages":[]}`, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sharedSet.For(tt.enc).ChatPrompt([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ChatPrompt = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestChatPromptErrors(t *testing.T) {
	for _, body := range []string{
		``,
		`not json`,
		`{"model":"x"}`,
		`{"messages":{}}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":1}]}]}`,
	} {
		if n, err := sharedSet.For("o200k").ChatPrompt([]byte(body)); err == nil {
			t.Errorf("ChatPrompt(%q) = %d, nil; want an error", body, n)
		}
	}
}

func TestChatPromptHuge(t *testing.T) {
	text := strings.Repeat("All work and no play makes Jack a dull boy. ", 5000)
	body := `{"messages":[{"role":"user","content":"` + text + `"}]}`
	o := sharedSet.For("o200k")
	got, err := o.ChatPrompt([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 + o.Count([]byte("user")) + o.Count([]byte(text)) + 3; got != want {
		t.Errorf("ChatPrompt = %d, want %d", got, want)
	}
}
