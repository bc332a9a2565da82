package app_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/oapitest"
)

// The gateway's chat and model answers match the official OpenAPI
// description byte for byte as a client receives them, for a passed-through
// vendor and the demo provider.
func TestChatAnswersMatchSpec(t *testing.T) {
	g := startGateway(t)
	tests := []struct {
		name, method, path, body string
	}{
		{"chat passed through", http.MethodPost, "/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`},
		{"chat demo", http.MethodPost, "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"Hi"}]}`},
		{"chat demo tool call", http.MethodPost, "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"weather?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}],"tool_choice":"required"}`},
		{"models", http.MethodGet, "/v1/models", ""},
		{"model", http.MethodGet, "/v1/models/demo-chat", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = bytes.NewReader([]byte(tt.body))
			}
			req, _ := http.NewRequest(tt.method, g.URL+tt.path, body)
			req.Header.Set("Authorization", "Bearer "+g.keys["default"])
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			oapitest.CheckResponse(t, tt.method, tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		})
	}
}

// Every chunk of a chat stream matches the spec's chunk schema.
func TestChatChunksMatchSpec(t *testing.T) {
	g := startGateway(t)
	for _, model := range []string{"gpt-4o-mini", "demo-chat", "tool-model"} {
		t.Run(model, func(t *testing.T) {
			body := `{"model":"` + model + `","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hi"}],
				"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}`
			resp, b := g.post("/v1/chat/completions", "application/json", g.keys["default"], strings.NewReader(body))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			n := 0
			for _, line := range strings.Split(string(b), "\n") {
				data, ok := strings.CutPrefix(line, "data: ")
				if !ok || data == "[DONE]" {
					continue
				}
				n++
				oapitest.CheckComponent(t, "CreateChatCompletionStreamResponse", []byte(data))
			}
			if n < 2 {
				t.Errorf("only %d chunks:\n%s", n, b)
			}
		})
	}
}
