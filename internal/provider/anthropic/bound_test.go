package anthropic

import (
	"testing"

	"github.com/modelgate/modelgate/internal/provider"
)

// OutputBound is the max_tokens the request is sent with.
func TestOutputBound(t *testing.T) {
	c, err := New(Options{Name: "a", DefaultMaxTokens: 2048})
	if err != nil {
		t.Fatal(err)
	}
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		name      string
		body      string
		maxOutput int64 // the catalog's
		want      int64
	}{
		{"client limit", `{"model":"m",` + msgs + `,"max_tokens":100}`, 0, 100},
		{"max_completion_tokens", `{"model":"m",` + msgs + `,"max_completion_tokens":300}`, 0, 300},
		{"thinking raises it", `{"model":"m",` + msgs + `,"max_tokens":1,"reasoning_effort":"high"}`, 0, 16385},
		{"thinking above the limit", `{"model":"m",` + msgs + `,"max_tokens":20000,"reasoning_effort":"high"}`, 0, 20000},
		{"low effort", `{"model":"m",` + msgs + `,"max_tokens":1,"reasoning_effort":"low"}`, 0, 1025},
		{"no thinking with a forced tool", `{"model":"m",` + msgs + `,"max_tokens":1,"reasoning_effort":"high",
			"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object"}}}}`, 0, 1},
		{"configured default", `{"model":"m",` + msgs + `}`, 64000, 2048},
		{"refused request", `{"model":"m",` + msgs + `,"n":2}`, 0, 0},
	}
	for _, tt := range tests {
		got := c.OutputBound(&provider.ChatRequest{UpstreamModel: "claude", Body: []byte(tt.body), MaxOutput: tt.maxOutput})
		if got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
	plain, _ := New(Options{Name: "b"})
	if got := plain.OutputBound(&provider.ChatRequest{Body: []byte(`{"model":"m",` + msgs + `}`), MaxOutput: 64000}); got != 64000 {
		t.Errorf("catalog limit: %d", got)
	}
}
