package gemini

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/provider"
	"github.com/modelgate/modelgate/internal/provider/oaiwire"
)

// imageTypes are the image media types Gemini reads.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true, "image/heic": true, "image/heif": true}

// maxCandidates is the largest candidateCount Gemini accepts.
const maxCandidates = 8

// thinkingBudgets maps reasoning_effort to a thinking budget in tokens.
var thinkingBudgets = map[string]int64{"none": 0, "minimal": 512, "low": 1024, "medium": 8192, "high": 24576}

// translate builds the Gemini request for an OpenAI one. Errors are
// *apierr.Error for the client (400 for what Gemini cannot take).
func (c *Client) translate(ctx context.Context, in *oaiwire.Request, maxOutput int64) (*genRequest, error) {
	out := &genRequest{}
	var images imageQueue
	if err := c.messages(in.Messages, out, &images); err != nil {
		return nil, err
	}
	if err := tools(in, out); err != nil {
		return nil, err
	}
	gc, err := generation(in, maxOutput)
	if err != nil {
		return nil, err
	}
	out.GenerationConfig = gc
	// Image URLs are downloaded last, once the rest of the request is
	// known to be acceptable.
	if err := c.fetchImages(ctx, &images); err != nil {
		return nil, err
	}
	return out, nil
}

// messages fills contents and systemInstruction. System and developer
// messages, wherever they appear, join the system instruction; consecutive
// turns of one role merge, since Gemini wants user and model to alternate.
// Image URLs join q, to be downloaded together.
func (c *Client) messages(msgs []oaiwire.Message, out *genRequest, q *imageQueue) error {
	names := map[string]string{} // tool_call_id → function name
	add := func(role string, parts []part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out.Contents); n > 0 && out.Contents[n-1].Role == role {
			out.Contents[n-1].Parts = append(out.Contents[n-1].Parts, parts...)
			return
		}
		out.Contents = append(out.Contents, content{Role: role, Parts: parts})
	}
	for i, m := range msgs {
		switch m.Role {
		case "system", "developer":
			for _, p := range m.Content.Parts {
				if p.Type != "text" {
					return apierr.Invalid("messages", "Gemini takes only text in %s messages, not %q parts.", m.Role, p.Type)
				}
			}
			if t := m.Content.String(); t != "" {
				if out.SystemInstruction == nil {
					out.SystemInstruction = &content{}
				}
				out.SystemInstruction.Parts = append(out.SystemInstruction.Parts, part{Text: t})
			}
		case "user":
			parts, err := c.userParts(m.Content, i, q)
			if err != nil {
				return err
			}
			add("user", parts)
		case "assistant":
			parts, err := assistantParts(m, names)
			if err != nil {
				return err
			}
			add("model", parts)
		case "tool", "function":
			name := names[m.ToolCallID]
			if name == "" {
				name = m.Name
			}
			if name == "" {
				return apierr.Invalid("messages", "A tool message's tool_call_id %q matches no earlier assistant tool call.", m.ToolCallID)
			}
			add("user", []part{{FunctionResponse: &functionResponse{Name: name, Response: toolResult(m.Content.String())}}})
		default:
			return apierr.Invalid("messages", "Unknown message role %q.", m.Role)
		}
	}
	if len(out.Contents) == 0 {
		return apierr.Invalid("messages", "Gemini needs at least one user or assistant message with content.")
	}
	return nil
}

// toolResult is a tool message as a functionResponse.response object: the
// content itself when it is a JSON object, else {"output": content}.
func toolResult(s string) json.RawMessage {
	t := bytes.TrimSpace([]byte(s))
	if len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return t
	}
	b, _ := json.Marshal(map[string]string{"output": s})
	return b
}

// userParts turns user content (of message i) into text and inline image
// parts; the data of image URLs arrives later, through q.
func (c *Client) userParts(ct oaiwire.Content, i int, q *imageQueue) ([]part, error) {
	if ct.Text != nil {
		if *ct.Text == "" {
			return nil, nil
		}
		return []part{{Text: *ct.Text}}, nil
	}
	var parts []part
	for j, p := range ct.Parts {
		switch p.Type {
		case "text":
			if p.Text != "" {
				parts = append(parts, part{Text: p.Text})
			}
		case "image_url":
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return nil, apierr.Invalid("messages", "An image_url part needs a url.")
			}
			b, err := c.image(p.ImageURL.URL, fmt.Sprintf("messages[%d].content[%d].image_url.url", i, j), q)
			if err != nil {
				return nil, err
			}
			parts = append(parts, part{InlineData: b})
		default:
			return nil, apierr.Invalid("messages", "Gemini models through this gateway do not take %q content parts.", p.Type)
		}
	}
	return parts, nil
}

// image resolves an image URL to inline data: data: URLs are split, http(s)
// URLs queued on q for the fetcher (param names the URL in the request).
func (c *Client) image(u, param string, q *imageQueue) (*blob, error) {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		mt, isB64 := strings.CutSuffix(meta, ";base64")
		if !ok || !isB64 || !strings.HasPrefix(mt, "image/") {
			return nil, apierr.Invalid("messages", "An image data URL must look like data:image/<type>;base64,<data>.")
		}
		if !imageTypes[mt] {
			return nil, apierr.Invalid("messages", "Gemini takes PNG, JPEG, WebP, HEIC and HEIF images, not %q.", mt)
		}
		if _, err := base64.StdEncoding.DecodeString(data); err != nil {
			return nil, apierr.Invalid("messages", "An image data URL holds invalid base64.")
		}
		return &blob{MIMEType: mt, Data: data}, nil
	}
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return nil, apierr.Invalid("messages", "An image URL must be an http(s) or data: URL.")
	}
	if c.fetcher == nil {
		return nil, apierr.Invalid("messages", "This Gemini provider cannot fetch image URLs; send the image as a data: URL.")
	}
	return q.add(u, param), nil
}

// assistantParts turns an assistant message into model parts and records
// its tool call ids. A thoughtSignature carried in a tool call's
// extra_content or id goes back on its functionCall part. Reasoning text the client echoes back is
// dropped: Gemini reads nothing from unsigned thought text. Gemini ids are
// not sent back: calls and responses pair up by order and name.
func assistantParts(m oaiwire.Message, names map[string]string) ([]part, error) {
	var parts []part
	if t := m.Content.String(); t != "" {
		parts = append(parts, part{Text: t})
	}
	calls := m.ToolCalls
	if m.FunctionCall != nil {
		calls = append(calls, oaiwire.ToolCall{Function: *m.FunctionCall})
	}
	for _, tc := range calls {
		args := bytes.TrimSpace([]byte(tc.Function.Arguments))
		if len(args) == 0 {
			args = []byte("{}")
		}
		if args[0] != '{' || !json.Valid(args) {
			return nil, apierr.Invalid("messages", "Tool call %q has arguments that are not a JSON object.", tc.ID)
		}
		if tc.ID != "" {
			names[tc.ID] = tc.Function.Name
		}
		parts = append(parts, part{FunctionCall: &functionCall{Name: tc.Function.Name, Args: args}, ThoughtSignature: thoughtSignature(tc)})
	}
	return parts, nil
}

// WebSearch reports that Gemini has a web search of its own, Google Search
// grounding (web_search_options turns it on), which it bills by query.
func (c *Client) WebSearch() bool { return true }

// tools fills tools and toolConfig (web_search_options: the google_search
// tool).
func tools(in *oaiwire.Request, out *genRequest) error {
	defs := in.AllTools()
	if len(defs) > 0 {
		t := tool{}
		for _, d := range defs {
			fd := functionDeclaration{Name: d.Name, Description: d.Description}
			if len(d.Parameters) > 0 && !bytes.Equal(bytes.TrimSpace(d.Parameters), []byte("null")) {
				p, err := cleanSchema(d.Parameters)
				if err != nil {
					return apierr.Invalid("tools", "Function %q parameters: not a JSON schema object Gemini can take (%v).", d.Name, err)
				}
				fd.Parameters = p
			}
			t.FunctionDeclarations = append(t.FunctionDeclarations, fd)
		}
		out.Tools = []tool{t}
	}
	if in.WebSearchOptions != nil {
		// Google Search grounding; its options (context size, location)
		// have no Gemini counterpart.
		out.Tools = append(out.Tools, tool{GoogleSearch: &struct{}{}})
	}
	choice, err := in.Choice()
	if err != nil {
		return apierr.Invalid("tool_choice", "%s", err)
	}
	if len(defs) == 0 || choice.Mode == "" {
		return nil
	}
	fc := functionCallingConfig{}
	switch choice.Mode {
	case "auto":
		fc.Mode = "AUTO"
	case "none":
		fc.Mode = "NONE"
	case "required":
		fc.Mode = "ANY"
	case "function":
		fc.Mode, fc.AllowedFunctionNames = "ANY", []string{choice.Name}
	}
	out.ToolConfig = &toolConfig{FunctionCallingConfig: fc}
	return nil
}

// generation builds generationConfig, nil when nothing is set.
func generation(in *oaiwire.Request, maxOutput int64) (*generationConfig, error) {
	g := generationConfig{Temperature: in.Temperature, TopP: in.TopP, StopSequences: in.Stop,
		Seed: in.Seed, PresencePenalty: in.PresencePenalty, FrequencyPenalty: in.FrequencyPenalty}
	if n := in.MaxOutput(); n > 0 {
		if maxOutput > 0 && n > maxOutput {
			n = maxOutput
		}
		g.MaxOutputTokens = &n
	}
	if in.N != nil && *in.N != 1 {
		if *in.N < 1 || *in.N > maxCandidates {
			return nil, apierr.Invalid("n", "Gemini models return 1 to %d choices; n=%d.", maxCandidates, *in.N)
		}
		g.CandidateCount = in.N
	}
	if rf := in.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_object":
			g.ResponseMIMEType = "application/json"
		case "json_schema":
			g.ResponseMIMEType = "application/json"
			if rf.JSONSchema != nil && len(rf.JSONSchema.Schema) > 0 {
				s, err := cleanSchema(rf.JSONSchema.Schema)
				if err != nil {
					return nil, apierr.Invalid("response_format", "json_schema: not a JSON schema object Gemini can take (%v).", err)
				}
				g.ResponseSchema = s
			}
		}
	}
	if e := in.ReasoningEffort; e != "" {
		b, ok := thinkingBudgets[e]
		if !ok {
			return nil, apierr.Invalid("reasoning_effort", "reasoning_effort %q: want none, minimal, low, medium or high.", e)
		}
		g.ThinkingConfig = &thinkingConfig{ThinkingBudget: &b, IncludeThoughts: b > 0}
	}
	if g.isZero() {
		return nil, nil
	}
	return &g, nil
}

func (g *generationConfig) isZero() bool {
	b, _ := json.Marshal(g)
	return string(b) == "{}"
}

// OutputBound is the client's output limit as sent (clamped to the
// catalog's), plus the thinking budget reasoning_effort asks for, which
// Gemini may spend on top; 0 when the client set no limit (Gemini's
// default, the model's own limit, applies).
func (c *Client) OutputBound(req *provider.ChatRequest) int64 {
	in, err := oaiwire.ParseRequest(req.Body)
	if err != nil {
		return 0
	}
	n := in.MaxOutput()
	if n <= 0 {
		return 0
	}
	if req.MaxOutput > 0 {
		n = min(n, req.MaxOutput)
	}
	return n + thinkingBudgets[in.ReasoningEffort]
}
