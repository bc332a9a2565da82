package oapitest

import (
	"net/http"
	"testing"
)

// The checker must accept what OpenAI answers and reject what it does not,
// or it proves nothing.
func TestCheck(t *testing.T) {
	tests := []struct {
		name, method, path string
		status             int
		body               string
		ok                 bool
	}{
		{"embedding list", http.MethodPost, "/embeddings", 200,
			`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-0.2]}],"model":"m","usage":{"prompt_tokens":2,"total_tokens":2}}`, true},
		{"embedding without usage", http.MethodPost, "/v1/embeddings", 200,
			`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1]}],"model":"m"}`, false},
		{"embedding index as string", http.MethodPost, "/embeddings", 200,
			`{"object":"list","data":[{"object":"embedding","index":"0","embedding":[0.1]}],"model":"m","usage":{"prompt_tokens":2,"total_tokens":2}}`, false},
		{"chat completion", http.MethodPost, "/chat/completions", 200,
			`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi","refusal":null},"finish_reason":"stop","logprobs":null}]}`, true},
		{"chat with a bad finish reason", http.MethodPost, "/chat/completions", 200,
			`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi","refusal":null},"finish_reason":"done","logprobs":null}]}`, false},
		{"images", http.MethodPost, "/images/generations", 200, `{"created":1,"data":[{"b64_json":"AAAA"}]}`, true},
		{"unknown path", http.MethodPost, "/nope", 200, `{}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.method, tt.path, tt.status, "application/json", []byte(tt.body))
			if (err == nil) != tt.ok {
				t.Errorf("Check = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

func TestComponent(t *testing.T) {
	chunk := `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}`
	if err := Component("CreateChatCompletionStreamResponse", []byte(chunk)); err != nil {
		t.Errorf("a valid chunk: %v", err)
	}
	bad := `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[]}`
	if Component("CreateChatCompletionStreamResponse", []byte(bad)) == nil {
		t.Error("a chunk with the wrong object was accepted")
	}
	if Component("NoSuchSchema", []byte(chunk)) == nil {
		t.Error("an unknown schema name was accepted")
	}
}
