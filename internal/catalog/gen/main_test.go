package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/money"
)

// TestBuiltinUpToDate fails when builtin.json differs from what the
// generator makes of the committed data and tables.
func TestBuiltinUpToDate(t *testing.T) {
	data, err := os.ReadFile("genai-prices.json")
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := generate(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "builtin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("internal/catalog/builtin.json is stale: run go generate ./internal/catalog and commit the result")
	}
}

func TestMicros(t *testing.T) {
	tests := []struct {
		in      string
		want    money.Micros
		rounded bool
		err     bool
	}{
		{in: "2.5", want: 2_500_000},
		{in: "0.075", want: 75_000},
		{in: "0.000001", want: 1},
		{in: "15", want: 15_000_000},
		{in: "0.18000000000000002", want: 180_000, rounded: true},
		{in: "0.0000005", want: 1, rounded: true}, // half rounds up
		{in: "0.00000049", want: 0, rounded: true},
		{in: "1.5e-7", want: 0, rounded: true},
		{in: "2e0", want: 2_000_000, rounded: true},
		{in: "-1", err: true},
		{in: "-1e-9", err: true},
	}
	for _, tt := range tests {
		st := &stats{}
		got, err := micros(json.Number(tt.in), st)
		if (err != nil) != tt.err || (!tt.err && (got != tt.want || (st.rounded == 1) != tt.rounded)) {
			t.Errorf("micros(%s) = %d, %v (rounded %d); want %d, error %v, rounded %v", tt.in, got, err, st.rounded, tt.want, tt.err, tt.rounded)
		}
	}
}

func TestPickPrices(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"plain", `{"input_mtok": 1}`, "1"},
		{"later start date wins", `[{"prices": {"input_mtok": 10}}, {"constraint": {"start_date": "2025-06-10"}, "prices": {"input_mtok": 2}}]`, "2"},
		{"future start date ignored", `[{"prices": {"input_mtok": 10}}, {"constraint": {"start_date": "2999-01-01"}, "prices": {"input_mtok": 2}}]`, "10"},
		{"standard price over off-peak discount", `[{"prices": {"input_mtok": 0.135}}, {"constraint": {"start_time": "00:30:00Z", "end_time": "16:30:00Z"}, "prices": {"input_mtok": 0.27}}]`, "0.27"},
		{"short window is the discount", `[{"prices": {"input_mtok": 0.27}}, {"constraint": {"start_time": "16:30:00Z", "end_time": "00:30:00Z"}, "prices": {"input_mtok": 0.135}}]`, "0.27"},
	}
	for _, tt := range tests {
		p, err := pickPrices([]byte(tt.raw))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if got, _, _ := baseNumber(p["input_mtok"]); got.String() != tt.want {
			t.Errorf("%s: input = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestDerive(t *testing.T) {
	tests := []struct {
		id   string
		want catalog.Model
	}{
		{"gpt-4o-mini", catalog.Model{Modality: catalog.Chat, MaxOutput: 16384, Tools: true, Vision: true, Tokenizer: "o200k"}},
		{"gpt-4-turbo", catalog.Model{Modality: catalog.Chat, MaxOutput: 4096, Tools: true, Vision: true, Tokenizer: "cl100k"}},
		{"o1-mini", catalog.Model{Modality: catalog.Chat, MaxOutput: 65536, Reasoning: true, Tokenizer: "o200k"}},
		{"claude-sonnet-4-0", catalog.Model{Modality: catalog.Chat, MaxOutput: 64000, Tools: true, Vision: true, Reasoning: true}},
		{"grok-4-fast-non-reasoning", catalog.Model{Modality: catalog.Chat, MaxOutput: 8192, Tools: true, Vision: true}},
		{"text-embedding-3-small", catalog.Model{Modality: catalog.Embedding, Tokenizer: "cl100k"}},
		{"mistral-embed", catalog.Model{Modality: catalog.Embedding}},
		{"gpt-3.5-turbo-instruct", catalog.Model{Modality: catalog.Completion, MaxOutput: 4096, Tokenizer: "cl100k"}},
		{"meta-llama/Llama-4-Scout-17B-16E-Instruct", catalog.Model{Modality: catalog.Chat, MaxOutput: 8192, Tools: true, Vision: true}},
	}
	for _, tt := range tests {
		m := catalog.Model{ID: tt.id}
		derive(&m)
		tt.want.ID, tt.want.Created = tt.id, m.Created
		if m.ContextWindow != 0 {
			tt.want.ContextWindow = m.ContextWindow
		}
		if m.ID != tt.want.ID || m.Modality != tt.want.Modality || m.MaxOutput != tt.want.MaxOutput || m.Tools != tt.want.Tools ||
			m.Vision != tt.want.Vision || m.Reasoning != tt.want.Reasoning || m.Tokenizer != tt.want.Tokenizer {
			t.Errorf("derive(%s) = %+v, want %+v", tt.id, m, tt.want)
		}
	}
	m := catalog.Model{ID: "glm-4-airx", ContextWindow: 8000}
	derive(&m)
	if m.MaxOutput != 8000 {
		t.Errorf("max output not capped at the context window: %d", m.MaxOutput)
	}
	if m := (catalog.Model{ID: "gpt-4o"}); func() bool { derive(&m); return m.Created != date("2024-05-13") }() {
		t.Errorf("gpt-4o created = %d", m.Created)
	}
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, id string
		want        bool
	}{
		{"gpt-4o*", "gpt-4o-mini", true},
		{"gpt-4o*", "gpt-4", false},
		{"*embed*", "gemini-embedding-001", true},
		{"claude-*-4*", "claude-sonnet-4-5", true},
		{"claude-*-4*", "claude-3-haiku", false},
		{"*llama-4*", "meta-llama/llama-4-scout", true},
		{"o1", "o1-mini", false},
		{"a*b*a", "ab", false},
		{"a*a", "a", false},
		{"a*b*a", "abba", true},
	}
	for _, tt := range tests {
		if got := match(tt.pattern, tt.id); got != tt.want {
			t.Errorf("match(%q, %q) = %v", tt.pattern, tt.id, got)
		}
	}
}
