package gemini

import (
	"testing"

	"github.com/modelgate/modelgate/internal/provider"
)

// OutputBound is the client's limit as sent plus the thinking budget.
func TestOutputBound(t *testing.T) {
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		name      string
		body      string
		maxOutput int64
		want      int64
	}{
		{"client limit", `{"model":"m",` + msgs + `,"max_tokens":100}`, 0, 100},
		{"clamped to the catalog", `{"model":"m",` + msgs + `,"max_tokens":100000}`, 65536, 65536},
		{"plus the thinking budget", `{"model":"m",` + msgs + `,"max_tokens":1,"reasoning_effort":"high"}`, 65536, 24577},
		{"no client limit", `{"model":"m",` + msgs + `,"reasoning_effort":"high"}`, 65536, 0},
	}
	for _, tt := range tests {
		got := c.OutputBound(&provider.ChatRequest{UpstreamModel: "gemini", Body: []byte(tt.body), MaxOutput: tt.maxOutput})
		if got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}
