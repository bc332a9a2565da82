// Package demo is the built-in offline provider: deterministic answers, no
// network, several stream chunks, and a tool call when tools are offered.
// It makes the zero-configuration start useful and gives tests a provider
// that needs no fake server.
package demo

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/provider"
)

// Models are the ids the demo provider serves: chat models, and one model
// for each other endpoint (embeddings, legacy completions, images, audio
// transcription), two for videos (portrait and landscape).
var Models = []string{"demo-chat", "demo-echo", "demo-embed", "demo-instruct", "demo-image", "demo-transcribe",
	VideoPortrait, VideoLandscape}

// OwnedBy is the vendor label of every demo model, so /v1/models shows
// clearly that they are not real models.
const OwnedBy = "demo"

// Provider answers chat requests offline.
type Provider struct {
	// VideoDelay is how long a video job takes to succeed; 0 means
	// DefaultVideoDelay. Set it before use.
	VideoDelay time.Duration

	now func() time.Time
}

var _ provider.Chatter = (*Provider)(nil)

// New returns a demo provider; now may be nil for time.Now.
func New(now func() time.Time) *Provider {
	if now == nil {
		now = time.Now
	}
	return &Provider{now: now}
}

// Known reports whether id is one of the demo models.
func Known(id string) bool {
	for _, m := range Models {
		if m == id {
			return true
		}
	}
	return false
}

// request is the part of a chat request the demo reads.
type request struct {
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	N                   *int            `json:"n"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
}

// answer is what the demo decided to say, before wire formatting.
type answer struct {
	id           string
	words        []string  // the text, split into stream pieces
	tool         *toolCall // set instead of words for a tool call
	finish       string
	n            int
	promptTokens int64
}

type toolCall struct {
	id, name, args string
}

func (p *Provider) decide(req *provider.ChatRequest) (*answer, error) {
	var r request
	if err := json.Unmarshal(req.Body, &r); err != nil {
		return nil, fmt.Errorf("demo: decode request: %w", err)
	}
	sum := sha256.Sum256(req.Body)
	a := &answer{id: "chatcmpl-demo" + hex.EncodeToString(sum[:10]), finish: "stop", n: 1,
		promptTokens: int64(len(req.Body)+3) / 4}
	if r.N != nil && *r.N > 1 {
		a.n = *r.N
	}
	if tc := pickTool(&r, sum); tc != nil && req.PublicModel != "demo-echo" {
		a.tool, a.finish = tc, "tool_calls"
		return a, nil
	}
	a.words = strings.SplitAfter(reply(&r, req.PublicModel), " ")
	limit := 0
	if r.MaxTokens != nil {
		limit = *r.MaxTokens
	}
	if r.MaxCompletionTokens != nil {
		limit = *r.MaxCompletionTokens
	}
	if limit > 0 && limit < len(a.words) {
		a.words, a.finish = a.words[:limit], "length"
	}
	return a, nil
}

// reply is the demo's deterministic text.
func reply(r *request, model string) string {
	if len(r.Messages) == 0 {
		return "Hello from the modelgate demo."
	}
	last := r.Messages[len(r.Messages)-1]
	if last.Role == "tool" {
		name := "the tool"
		for _, m := range r.Messages {
			for _, tc := range m.ToolCalls {
				if tc.ID == last.ToolCallID {
					name = tc.Function.Name
				}
			}
		}
		return fmt.Sprintf("The %s tool returned: %s", name, clip(text(last.Content), 300))
	}
	said := ""
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			said = clip(text(r.Messages[i].Content), 300)
			break
		}
	}
	if model == "demo-echo" {
		if said == "" {
			return "(nothing to echo)"
		}
		return said
	}
	return fmt.Sprintf("Hello from the modelgate demo model! You said: %q. "+
		"This answer was generated offline; point modelgate at a real provider to talk to a real model.", said)
}

// text flattens string or content-part content to its text.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		switch p.Type {
		case "text":
			b.WriteString(p.Text)
		case "image_url":
			b.WriteString("[image]")
		}
	}
	return b.String()
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
