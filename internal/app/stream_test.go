package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/provider/providertest"
)

func streamParams(model string, includeUsage bool) oai.ChatCompletionNewParams {
	p := oai.ChatCompletionNewParams{Model: model, Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("Hello")}}
	if includeUsage {
		p.StreamOptions = oai.ChatCompletionStreamOptionsParam{IncludeUsage: oai.Bool(true)}
	}
	return p
}

func TestStream(t *testing.T) {
	g := startGateway(t)
	c := g.client(g.keys["default"])
	for _, includeUsage := range []bool{false, true} {
		s := c.Chat.Completions.NewStreaming(context.Background(), streamParams("gpt-4o-mini", includeUsage))
		var acc oai.ChatCompletionAccumulator
		usageChunks := 0
		for s.Next() {
			ch := s.Current()
			acc.AddChunk(ch)
			if ch.JSON.Usage.Valid() {
				usageChunks++
			}
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		if got := acc.Choices[0].Message.Content; got != "Hello! How can I assist you today?" {
			t.Errorf("include_usage=%v: content %q", includeUsage, got)
		}
		if includeUsage && (acc.Usage.PromptTokens != 19 || acc.Usage.CompletionTokens != 10) {
			t.Errorf("usage not forwarded: %+v", acc.Usage)
		}
		if !includeUsage && usageChunks != 0 {
			t.Errorf("client did not ask for usage but got it in %d chunks", usageChunks)
		}
		// The gateway always asks the upstream for usage, to record it.
		var sent struct {
			StreamOptions struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
		}
		_ = json.Unmarshal(g.upstream.Last().Body, &sent)
		if !sent.StreamOptions.IncludeUsage {
			t.Errorf("upstream was not asked for usage: %s", g.upstream.Last().Body)
		}
	}
	for _, r := range g.usage() {
		if r.Model == "gpt-4o-mini" && (r.PromptTokens != 19 || r.CompletionTokens != 10 || !r.Stream || r.TTFT <= 0) {
			t.Errorf("stream usage record %+v", r)
		}
	}
}

// Without include_usage the client sees exactly the stream OpenAI would
// have sent it, byte for byte, except the model id.
func TestStreamGolden(t *testing.T) {
	g := startGateway(t)
	body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Hello"}]}`
	resp, got := g.post("/v1/chat/completions", "application/json", g.keys["default"], strings.NewReader(body))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	want := bytes.ReplaceAll(providertest.Fixture(t, "openai/chat_stream.sse"),
		[]byte(`"model":"gpt-4o-mini-2024-07-18"`), []byte(`"model":"gpt-4o-mini"`))
	if !bytes.Equal(got, want) {
		t.Errorf("stream differs from the golden stream:\n got %s\nwant %s", got, want)
	}
}

func TestStreamFailures(t *testing.T) {
	g := startGateway(t)
	c := g.client(g.keys["default"])
	cases := []struct {
		model  string
		status int    // when the failure comes before the first chunk
		code   string // error code (status error or error event)
		chunks bool   // some chunks arrive before the error
	}{
		{"err-400", 400, "string_above_max_length", false},
		{"err-503", 503, "upstream_unavailable", false},
		{"slow", 504, "upstream_timeout", false},
		{"unreachable", 503, "upstream_unavailable", false},
		{"stream-json", 502, "upstream_error", false},
		{"cut", 0, "bad_upstream_response", true},
		{"midstream-error", 0, "upstream_error", true},
		{"endless", 0, "upstream_timeout", true},
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			s := c.Chat.Completions.NewStreaming(context.Background(), streamParams(tc.model, false))
			n := 0
			for s.Next() {
				n++
			}
			err := s.Err()
			if tc.status != 0 {
				apiError(t, err, tc.status, tc.code)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.code) {
				t.Fatalf("stream error = %v, want an error event with %q", err, tc.code)
			}
			if tc.chunks && n == 0 {
				t.Error("no chunk arrived before the error")
			}
		})
	}
}

// A client that goes away mid-stream cancels the upstream request, and the
// usage record says so.
func TestClientDisconnectMidStream(t *testing.T) {
	g := startGateway(t)
	ctx, cancel := context.WithCancel(context.Background())
	body := `{"model":"endless","stream":true,"messages":[{"role":"user","content":"Hello"}]}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+g.keys["default"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(resp.Body)
	for i := 0; i < 3; i++ {
		if _, err := rd.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for g.upstream.Cancelled() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the upstream request was not cancelled after the client left")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var found bool
	for _, r := range g.usage() {
		if r.Model == "endless" {
			found = true
			if r.Status != 499 || r.ErrorCode != "client_closed_request" {
				t.Errorf("usage record of the abandoned stream: status %d, code %q", r.Status, r.ErrorCode)
			}
		}
	}
	if !found {
		t.Fatal("no usage record for the abandoned stream")
	}
}
