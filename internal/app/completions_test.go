package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/oapitest"
)

// withInstruct serves "instruct" from the fake OpenAI upstream as
// gpt-3.5-turbo-instruct, priced by the catalog ($1.50 in, $2 out per
// million tokens) through its upstream id.
func withInstruct(c *config.Config) {
	c.Providers[0].Models = append(c.Providers[0].Models, config.ModelRef{ID: "instruct", Upstream: "gpt-3.5-turbo-instruct"})
}

func legacyParams(model string, includeUsage bool) oai.CompletionNewParams {
	p := oai.CompletionNewParams{Model: oai.CompletionNewParamsModel(model), Prompt: oai.CompletionNewParamsPromptUnion{OfString: oai.String("Say this is a test")}}
	if includeUsage {
		p.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
	}
	return p
}

// readCompletionStream reads a completion stream with the SDK and returns
// the text and the chunks.
func readCompletionStream(t *testing.T, c oai.Client, params oai.CompletionNewParams) (text string, chunks []oai.Completion) {
	t.Helper()
	s := c.Completions.NewStreaming(context.Background(), params)
	var b strings.Builder
	for s.Next() {
		ch := s.Current()
		chunks = append(chunks, ch)
		if ch.Object != "text_completion" || ch.Model != string(params.Model) || !strings.HasPrefix(ch.ID, "cmpl-") {
			t.Errorf("chunk %s", ch.RawJSON())
		}
		if len(ch.Choices) > 0 && ch.Choices[0].FinishReason != "" {
			// Chunks before the last have finish_reason null, and with
			// include_usage OpenAI sends "usage":null in them: both are the
			// real wire format, which the spec's schema does not allow.
			oapitest.CheckComponent(t, "CreateCompletionResponse", []byte(strings.Replace(ch.RawJSON(), `,"usage":null`, "", 1)))
		}
		for _, c := range ch.Choices {
			b.WriteString(c.Text)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String(), chunks
}

// streamCost sends a streamed completion request and reads it to the end
// (the SDK closes the body at [DONE], before the trailers may have come),
// returning the X-Modelgate-Cost trailer.
func (g *gateway) streamCost(key, model string) string {
	g.t.Helper()
	resp, body := g.post("/v1/completions", "application/json", key,
		strings.NewReader(`{"model":"`+model+`","prompt":"Say this is a test","stream":true}`))
	if resp.StatusCode != 200 || !strings.HasSuffix(string(body), "data: [DONE]\n\n") {
		g.t.Fatalf("%d %s", resp.StatusCode, body)
	}
	return resp.Trailer.Get("X-Modelgate-Cost")
}

// completionUsageChunks counts chunks that carry usage.
func completionUsageChunks(chunks []oai.Completion) int {
	n := 0
	for _, ch := range chunks {
		if ch.JSON.Usage.Valid() {
			n++
		}
	}
	return n
}

// An OpenAI-compatible vendor gets the request passed through with only
// model patched; the answer comes back with the public model.
func TestCompletionsPassThrough(t *testing.T) {
	g := startGateway(t, withInstruct)
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	c := g.client(p.secret)
	params := legacyParams("instruct", false)
	params.MaxTokens = oai.Int(7)
	params.Stop = oai.CompletionNewParamsStopUnion{OfStringArray: []string{"\n\n\n"}}
	params.Suffix = oai.String("!")
	var raw *http.Response
	r, err := c.Completions.New(context.Background(), params, option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if r.Object != "text_completion" || r.Model != "instruct" || len(r.Choices) != 1 || r.Choices[0].Text != "\n\nThis is indeed a test." ||
		r.Choices[0].FinishReason != "stop" || r.Usage.PromptTokens != 5 || r.Usage.CompletionTokens != 8 {
		t.Errorf("response %s", r.RawJSON())
	}
	oapitest.CheckResponse(t, http.MethodPost, "/completions", 200, "application/json", []byte(r.RawJSON()))
	// 5 × $1.50/M + 8 × $2/M = 23.5 µ → 24 µ.
	if got := raw.Header.Get("X-Modelgate-Cost"); got != "0.000024" {
		t.Errorf("X-Modelgate-Cost = %q", got)
	}
	var sent map[string]any
	if err := json.Unmarshal(g.upstream.Last().Body, &sent); err != nil {
		t.Fatal(err)
	}
	if sent["model"] != "gpt-3.5-turbo-instruct" || sent["prompt"] != "Say this is a test" || sent["max_tokens"] != float64(7) ||
		sent["suffix"] != "!" || g.upstream.Last().Header.Get("Authorization") != "Bearer sk-upstream-secret" {
		t.Errorf("upstream got %s", g.upstream.Last().Body)
	}

	for _, includeUsage := range []bool{false, true} {
		text, chunks := readCompletionStream(t, c, legacyParams("instruct", includeUsage))
		if text != "\n\nThis is indeed a test." {
			t.Errorf("streamed text %q", text)
		}
		if want := map[bool]int{false: 0, true: 1}[includeUsage]; completionUsageChunks(chunks) != want {
			t.Errorf("include_usage %v: %d usage chunks", includeUsage, completionUsageChunks(chunks))
		}
		if !strings.Contains(string(g.upstream.Last().Body), `"include_usage":true`) {
			t.Errorf("upstream was not asked for usage: %s", g.upstream.Last().Body)
		}
	}
	if got := g.streamCost(p.secret, "instruct"); got != "0.000024" {
		t.Errorf("stream trailer X-Modelgate-Cost = %q", got)
	}

	// A model the catalog knows as a chat model is translated even on an
	// OpenAI-compatible vendor (OpenAI refuses chat models on /completions).
	other := g.client(g.keys["default"])
	r, err = other.Completions.New(context.Background(), legacyParams("gpt-4o-mini", false))
	if err != nil {
		t.Fatal(err)
	}
	oapitest.CheckResponse(t, http.MethodPost, "/completions", 200, "application/json", []byte(r.RawJSON()))
	if r.Object != "text_completion" || r.Model != "gpt-4o-mini" || r.ID != "cmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT" ||
		r.Choices[0].Text != "Hello! How can I assist you today?" || r.Usage.PromptTokens != 19 {
		t.Errorf("gpt-4o-mini: %s", r.RawJSON())
	}
	if msgs, ok := jsonField(g.upstream.Last().Body, "messages"); !ok ||
		string(msgs) != `[{"role":"user","content":"Say this is a test"}]` || g.upstream.Last().Model != "gpt-4o-mini-2024-07-18" {
		t.Errorf("upstream got %s", g.upstream.Last().Body)
	}

	recs := g.usage()
	var n int
	for _, r := range recs {
		if r.AccountID != p.accountID {
			continue
		}
		n++
		if r.Endpoint != "completions" || r.Model != "instruct" || r.UpstreamModel != "gpt-3.5-turbo-instruct" || r.Status != 200 ||
			r.PromptTokens != 5 || r.CompletionTokens != 8 || r.Cost != 24 || r.Estimated {
			t.Errorf("record %+v", r)
		}
	}
	if n != 4 {
		t.Errorf("%d records", n)
	}
	if b := audit(t, g.app.Store(), p.accountID); b != money.Unit-4*24 {
		t.Errorf("balance %v", b)
	}
}

// The demo answers legacy completions offline through the chat
// translation, deterministically and with the legacy default of 16 tokens.
func TestCompletionsDemo(t *testing.T) {
	g := startGateway(t)
	c := g.client(g.keys["default"])
	r, err := c.Completions.New(context.Background(), legacyParams("demo-instruct", false))
	if err != nil {
		t.Fatal(err)
	}
	oapitest.CheckResponse(t, http.MethodPost, "/completions", 200, "application/json", []byte(r.RawJSON()))
	ch := r.Choices[0]
	if r.Model != "demo-instruct" || !strings.HasPrefix(r.ID, "cmpl-") || !strings.Contains(ch.Text, "Say this is a test") ||
		ch.FinishReason != "length" || r.Usage.CompletionTokens != 16 {
		t.Errorf("response %s", r.RawJSON())
	}
	again, err := c.Completions.New(context.Background(), legacyParams("demo-instruct", false))
	if err != nil || again.Choices[0].Text != ch.Text {
		t.Errorf("not deterministic: %q vs %q (%v)", again.Choices[0].Text, ch.Text, err)
	}
	text, chunks := readCompletionStream(t, c, legacyParams("demo-instruct", true))
	if text != ch.Text || completionUsageChunks(chunks) != 1 {
		t.Errorf("streamed %q with %d usage chunks, want %q", text, completionUsageChunks(chunks), ch.Text)
	}
	// A model for another endpoint is refused as such.
	_, err = c.Completions.New(context.Background(), legacyParams("demo-embed", false))
	if e := apiError(t, err, 400, "invalid_request_error"); e.Param != "model" {
		t.Errorf("demo-embed: %+v", e)
	}
	for _, rec := range g.usage() {
		if rec.Endpoint != "completions" || rec.Cost != 0 {
			t.Errorf("record %+v", rec)
		}
	}
}

// A chat-only vendor (Anthropic) gets the prompt as one user message and
// its answer comes back as a text_completion; what a chat model cannot do
// is refused before anything is sent.
func TestCompletionsAnthropic(t *testing.T) {
	g, fake := startAnthropicGateway(t)
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	c := g.client(p.secret)
	ctx := context.Background()

	bad := []struct {
		name  string
		edit  func(*oai.CompletionNewParams)
		param string
	}{
		{"echo", func(p *oai.CompletionNewParams) { p.Echo = oai.Bool(true) }, "echo"},
		{"suffix", func(p *oai.CompletionNewParams) { p.Suffix = oai.String("end") }, "suffix"},
		{"logprobs", func(p *oai.CompletionNewParams) { p.Logprobs = oai.Int(2) }, "logprobs"},
		{"best_of", func(p *oai.CompletionNewParams) { p.BestOf = oai.Int(3) }, "best_of"},
		{"two prompts", func(p *oai.CompletionNewParams) {
			p.Prompt = oai.CompletionNewParamsPromptUnion{OfArrayOfStrings: []string{"a", "b"}}
		}, "prompt"},
		{"tokens", func(p *oai.CompletionNewParams) {
			p.Prompt = oai.CompletionNewParamsPromptUnion{OfArrayOfTokens: []int64{1212, 318}}
		}, "prompt"},
		{"n > 1 (the vendor's own limit)", func(p *oai.CompletionNewParams) { p.N = oai.Int(2) }, "n"},
	}
	for _, tc := range bad {
		params := legacyParams("claude-test", false)
		tc.edit(&params)
		_, err := c.Completions.New(ctx, params)
		if e := apiError(t, err, 400, "invalid_request_error"); e.Param != tc.param {
			t.Errorf("%s: param %q (%s)", tc.name, e.Param, e.Message)
		}
	}
	if n := len(fake.Received()); n != 0 {
		t.Fatalf("the upstream was called %d times for refused requests", n)
	}

	params := legacyParams("claude-test", false)
	params.Prompt = oai.CompletionNewParamsPromptUnion{OfArrayOfStrings: []string{"Say this is a test"}}
	params.Temperature, params.Stop, params.User = oai.Float(0.5), oai.CompletionNewParamsStopUnion{OfString: oai.String("END")}, oai.String("u-1")
	r, err := c.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	oapitest.CheckResponse(t, http.MethodPost, "/completions", 200, "application/json", []byte(r.RawJSON()))
	if r.ID != "cmpl-msg_01XFDUDYJgAACzvnptvVoYEL" || r.Object != "text_completion" || r.Model != "claude-test" ||
		r.Choices[0].Text != "Hello! How can I help you today?" || r.Choices[0].FinishReason != "stop" ||
		r.Usage.PromptTokens != 16 || r.Usage.CompletionTokens != 10 {
		t.Errorf("response %s", r.RawJSON())
	}
	var sent struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type, Text string
			} `json:"content"`
		} `json:"messages"`
		MaxTokens     int64    `json:"max_tokens"`
		Temperature   float64  `json:"temperature"`
		StopSequences []string `json:"stop_sequences"`
		Metadata      struct {
			UserID string `json:"user_id"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(fake.Last().Body, &sent); err != nil {
		t.Fatal(err)
	}
	if sent.Model != "claude-sonnet-4-5" || len(sent.Messages) != 1 || sent.Messages[0].Role != "user" ||
		len(sent.Messages[0].Content) != 1 || sent.Messages[0].Content[0].Text != "Say this is a test" || sent.MaxTokens != 16 ||
		sent.Temperature != 0.5 || len(sent.StopSequences) != 1 || sent.StopSequences[0] != "END" || sent.Metadata.UserID != "u-1" {
		t.Errorf("upstream body %s", fake.Last().Body)
	}

	for _, includeUsage := range []bool{false, true} {
		text, chunks := readCompletionStream(t, c, legacyParams("claude-test", includeUsage))
		if text != "Héllo 世界 👋, how can I help?" {
			t.Errorf("streamed text %q", text)
		}
		if want := map[bool]int{false: 0, true: 1}[includeUsage]; completionUsageChunks(chunks) != want {
			t.Errorf("include_usage %v: %d usage chunks", includeUsage, completionUsageChunks(chunks))
		}
	}
	// 125 prompt × $1/M + 15 completion × $2/M.
	if got := g.streamCost(p.secret, "claude-test"); got != "0.000155" {
		t.Errorf("stream trailer X-Modelgate-Cost = %q", got)
	}

	// The translation reserves the 16 tokens it asks for: a balance that
	// covers them serves the request, max_tokens beyond it does not.
	poor := g.newPayer("default", 200, 0, time.Time{})
	pc := g.client(poor.secret)
	if _, err := pc.Completions.New(ctx, legacyParams("claude-test", false)); err != nil {
		t.Errorf("a request within the balance: %v", err)
	}
	big := legacyParams("claude-test", false)
	big.MaxTokens = oai.Int(1000)
	_, err = pc.Completions.New(ctx, big)
	apiError(t, err, 429, "insufficient_quota")

	var costs []money.Micros
	for _, rec := range g.usage() {
		if rec.AccountID == p.accountID && rec.Status == 200 {
			costs = append(costs, rec.Cost)
		}
	}
	// 16 prompt × $1/M + 10 completion × $2/M = 36 µ; each stream 155 µ.
	slices.Sort(costs)
	if len(costs) != 4 || costs[0] != 36 || costs[1] != 155 || costs[3] != 155 {
		t.Errorf("costs %v", costs)
	}
	audit(t, g.app.Store(), p.accountID)
	audit(t, g.app.Store(), poor.accountID)
}
