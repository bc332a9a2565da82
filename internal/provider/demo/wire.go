package demo

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/modelgate/modelgate/internal/provider"
)

type wireToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireMessage struct {
	Role      string         `json:"role,omitempty"`
	Content   *string        `json:"content"`
	Refusal   *string        `json:"refusal"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

type wireChoice struct {
	Index        int          `json:"index"`
	Message      *wireMessage `json:"message,omitempty"`
	Delta        *wireDelta   `json:"delta,omitempty"`
	Logprobs     *struct{}    `json:"logprobs"`
	FinishReason *string      `json:"finish_reason"`
}

type wireDelta struct {
	Role      string         `json:"role,omitempty"`
	Content   *string        `json:"content,omitempty"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

type wireUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

type wireCompletion struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint string       `json:"system_fingerprint"`
	Choices           []wireChoice `json:"choices"`
	Usage             *wireUsage   `json:"usage,omitempty"`
}

func (a *answer) usage() provider.Usage {
	var out int64
	if a.tool != nil {
		out = int64(len(a.tool.args)+3) / 4
	} else {
		out = int64(len(a.words))
	}
	out *= int64(a.n)
	return provider.Usage{PromptTokens: a.promptTokens, CompletionTokens: out, TotalTokens: a.promptTokens + out}
}

func wireUsageOf(u provider.Usage) *wireUsage {
	return &wireUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
}

// Chat answers in one piece.
func (p *Provider) Chat(ctx context.Context, req *provider.ChatRequest) (*provider.ChatResponse, error) {
	a, err := p.decide(req)
	if err != nil {
		return nil, err
	}
	u := a.usage()
	c := wireCompletion{ID: a.id, Object: "chat.completion", Created: p.now().Unix(), Model: req.PublicModel,
		SystemFingerprint: "fp_demo", Usage: wireUsageOf(u)}
	for i := range a.n {
		m := &wireMessage{Role: "assistant"}
		if a.tool != nil {
			tc := wireToolCall{ID: a.tool.id, Type: "function"}
			tc.Function.Name, tc.Function.Arguments = a.tool.name, a.tool.args
			m.ToolCalls = []wireToolCall{tc}
		} else {
			s := strings.Join(a.words, "")
			m.Content = &s
		}
		c.Choices = append(c.Choices, wireChoice{Index: i, Message: m, FinishReason: &a.finish})
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	return &provider.ChatResponse{Body: b, Usage: u, HasUsage: true}, nil
}

// ChatStream answers in several chunks: the role, the text word by word (or
// the tool call's arguments piece by piece), the finish reason, and the
// usage chunk when the client asked for it.
func (p *Provider) ChatStream(ctx context.Context, req *provider.ChatRequest) (provider.ChatStream, error) {
	a, err := p.decide(req)
	if err != nil {
		return nil, err
	}
	created := p.now().Unix()
	chunk := func(choices []wireChoice, u *wireUsage) []byte {
		b, _ := json.Marshal(wireCompletion{ID: a.id, Object: "chat.completion.chunk", Created: created,
			Model: req.PublicModel, SystemFingerprint: "fp_demo", Choices: choices, Usage: u})
		return b
	}
	var chunks [][]byte
	for i := range a.n {
		chunks = append(chunks, a.pieces(i, chunk)...)
	}
	u := a.usage()
	if req.IncludeUsage {
		chunks = append(chunks, chunk([]wireChoice{}, wireUsageOf(u)))
	}
	return &stream{ctx: ctx, chunks: chunks, usage: u}, nil
}

// pieces renders choice i as a sequence of chunks.
func (a *answer) pieces(i int, chunk func([]wireChoice, *wireUsage) []byte) [][]byte {
	one := func(d *wireDelta, finish *string) []byte {
		return chunk([]wireChoice{{Index: i, Delta: d, FinishReason: finish}}, nil)
	}
	empty := ""
	var out [][]byte
	if a.tool != nil {
		zero := 0
		tc := wireToolCall{Index: &zero, ID: a.tool.id, Type: "function"}
		tc.Function.Name = a.tool.name
		out = append(out, one(&wireDelta{Role: "assistant", ToolCalls: []wireToolCall{tc}}, nil))
		for _, part := range splitN(a.tool.args, 4) {
			d := wireToolCall{Index: &zero}
			d.Function.Arguments = part
			out = append(out, one(&wireDelta{ToolCalls: []wireToolCall{d}}, nil))
		}
	} else {
		out = append(out, one(&wireDelta{Role: "assistant", Content: &empty}, nil))
		for _, w := range a.words {
			out = append(out, one(&wireDelta{Content: &w}, nil))
		}
	}
	return append(out, one(&wireDelta{}, &a.finish))
}

// splitN cuts s into at most n pieces of similar length, on byte
// boundaries that keep UTF-8 intact.
func splitN(s string, n int) []string {
	if len(s) == 0 {
		return []string{""}
	}
	size := (len(s) + n - 1) / n
	var out []string
	for len(s) > 0 {
		end := min(size, len(s))
		for end < len(s) && !utf8Start(s[end]) {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

type stream struct {
	ctx    context.Context
	chunks [][]byte
	i      int
	cur    []byte
	usage  provider.Usage
	err    error
}

func (s *stream) Next() bool {
	if s.err != nil || s.i >= len(s.chunks) {
		return false
	}
	if err := s.ctx.Err(); err != nil {
		s.err = provider.FromTransport(s.ctx, "demo", err)
		return false
	}
	s.cur = s.chunks[s.i]
	s.i++
	return true
}

func (s *stream) Chunk() []byte                 { return s.cur }
func (s *stream) Usage() (provider.Usage, bool) { return s.usage, true }
func (s *stream) Err() error                    { return s.err }
func (s *stream) Close() error                  { return nil }
