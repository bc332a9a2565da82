package contract

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/jsonx"
)

// benchBodies are typical requests: the chat body the handler benchmark
// uses, a tool conversation, and a Responses request with tools.
var benchBodies = []struct {
	name string
	body Body
	json string
}{
	{"chat", ChatCompletions, `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"` + strings.Repeat("You are a helpful assistant. ", 12) +
		`"},{"role":"user","content":"` + strings.Repeat("Tell me about the weather in Paris. ", 20) + `"}],"temperature":0.7,"max_tokens":256,"stream":true}`},
	{"chat_tools", ChatCompletions, `{"model":"gpt-4o","messages":[{"role":"user","content":[{"type":"text","text":"What is the weather?"},{"type":"image_url","image_url":{"url":"https://example.com/a.png","detail":"low"}}]},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"sunny"}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],` +
		`"tool_choice":"auto","metadata":{"user":"u1"},"reasoning_effort":"low","stream_options":{"include_usage":true},"stream":true}`},
	{"responses", Responses, `{"model":"gpt-4o","instructions":"Be brief.","input":[{"role":"user","content":[{"type":"input_text","text":"What is the weather?"}]},` +
		`{"type":"function_call","call_id":"c1","name":"get_weather","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"sunny"}],` +
		`"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"},"strict":false}],"reasoning":{"effort":"low"},"max_output_tokens":200}`},
}

func BenchmarkValidate(b *testing.B) {
	for _, bb := range benchBodies {
		body := []byte(bb.json)
		if err := jsonx.Check(body, 128); err != nil {
			b.Fatal(err)
		}
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := Validate(bb.body, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
