package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/oapitest"
	"github.com/modelgate/modelgate/internal/store"
)

// Invalid requests get a 400 naming the parameter, and nothing goes
// upstream.
func TestCompletionsValidation(t *testing.T) {
	g := startGateway(t, withInstruct)
	key := g.keys["default"]
	cases := []struct {
		name, body, param string
	}{
		{"missing model", `{"prompt":"hi"}`, "model"},
		{"missing prompt", `{"model":"instruct"}`, "prompt"},
		{"empty prompt array", `{"model":"instruct","prompt":[]}`, "prompt"},
		{"mixed prompt array", `{"model":"instruct","prompt":["a",[1]]}`, "prompt[1]"},
		{"prompt object", `{"model":"instruct","prompt":{"text":"hi"}}`, "prompt"},
		{"max_tokens negative", `{"model":"instruct","prompt":"hi","max_tokens":-1}`, "max_tokens"},
		{"max_tokens float", `{"model":"instruct","prompt":"hi","max_tokens":2.5}`, "max_tokens"},
		{"n zero", `{"model":"instruct","prompt":"hi","n":0}`, "n"},
		{"n 129", `{"model":"instruct","prompt":"hi","n":129}`, "n"},
		{"temperature 3", `{"model":"instruct","prompt":"hi","temperature":3}`, "temperature"},
		{"top_p 2", `{"model":"instruct","prompt":"hi","top_p":2}`, "top_p"},
		{"stream string", `{"model":"instruct","prompt":"hi","stream":"yes"}`, "stream"},
		{"five stops", `{"model":"instruct","prompt":"hi","stop":["a","b","c","d","e"]}`, "stop"},
		{"stream_options without stream", `{"model":"instruct","prompt":"hi","stream_options":{"include_usage":true}}`, "stream_options"},
		{"best_of streamed", `{"model":"instruct","prompt":"hi","best_of":2,"stream":true}`, "best_of"},
		{"prompt beyond the context window", `{"model":"instruct","prompt":"` + strings.Repeat("hello ", 40000) + `"}`, "prompt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := g.post("/v1/completions", "application/json", key, strings.NewReader(tc.body))
			var e struct {
				Error struct{ Type, Param, Message string }
			}
			if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != 400 || e.Error.Param != tc.param || e.Error.Message == "" {
				t.Errorf("%d %s, want 400 on %s", resp.StatusCode, body, tc.param)
			}
			oapitest.CheckComponent(t, "ErrorResponse", body) // the spec lists no error answers for /completions
		})
	}
	// The SDK's own types: a token-array prompt passes validation and the
	// pass-through; an unknown model is a 404.
	c := g.client(key)
	if _, err := c.Completions.New(context.Background(), oai.CompletionNewParams{Model: "instruct",
		Prompt: oai.CompletionNewParamsPromptUnion{OfArrayOfTokenArrays: [][]int64{{1212, 318}, {257}}}}); err != nil {
		t.Errorf("token arrays: %v", err)
	}
	_, err := c.Completions.New(context.Background(), legacyParams("no-such-model", false))
	apiError(t, err, 404, "model_not_found")
	if n := len(g.upstream.Received()); n != 1 {
		t.Errorf("the upstream was called %d times, want once (the valid request)", n)
	}
}

// An upstream failure is not charged; a client that leaves mid-stream pays
// for what it was sent. Both paths: the harness's scenario models are chat
// models (translated), or declared completion models (passed through).
func TestCompletionsFailuresBilling(t *testing.T) {
	for _, passthrough := range []bool{false, true} {
		t.Run(map[bool]string{false: "translated", true: "passed through"}[passthrough], func(t *testing.T) {
			testCompletionsFailuresBilling(t, passthrough)
		})
	}
}

func testCompletionsFailuresBilling(t *testing.T, passthrough bool) {
	g := startGateway(t, func(c *config.Config) {
		completion := "completion"
		for i, m := range c.Models {
			if passthrough && (m.ID == "err-500" || m.ID == "midstream-error" || m.ID == "endless") {
				c.Models[i].Modality = &completion
			}
		}
	})
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	c := g.client(p.secret)
	_, err := c.Completions.New(context.Background(), legacyParams("err-500", false))
	apiError(t, err, 502, "upstream_error")
	s := c.Completions.NewStreaming(context.Background(), legacyParams("midstream-error", false))
	for s.Next() {
	}
	if s.Err() == nil {
		t.Error("a stream that failed upstream ended cleanly")
	}

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.URL+"/v1/completions",
		strings.NewReader(`{"model":"endless","prompt":"Say this is a test","stream":true}`))
	req.Header.Set("Authorization", "Bearer "+p.secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	rd := bufio.NewReader(resp.Body)
	for events := 0; events < 6; {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			events++
		}
	}
	cancel()
	resp.Body.Close()

	var left store.UsageRecord
	for _, r := range g.usage() {
		if r.AccountID != p.accountID {
			continue
		}
		switch r.Model {
		case "err-500":
			if r.Cost != 0 || r.Status == 200 {
				t.Errorf("failed request charged: %+v", r)
			}
		case "midstream-error":
			// Broken off after text reached the client: it pays for what
			// it was sent (the prompt and the delivered text), no more.
			if r.Cost <= 0 || r.Status == 200 || !r.Estimated || r.CompletionTokens < 1 || r.PromptTokens != 5 {
				t.Errorf("stream broken off upstream: %+v", r)
			}
		case "endless":
			left = r
		}
	}
	if left.Status != 499 || !left.Estimated || left.CompletionTokens < 3 || left.Cost <= 0 || left.PromptTokens != 5 {
		t.Errorf("record of the abandoned stream: %+v", left)
	}
	for _, r := range g.upstream.Received() {
		if _, chat := jsonField(r.Body, "messages"); chat == passthrough {
			t.Errorf("passthrough %v: upstream got %s", passthrough, r.Body)
		}
	}
	audit(t, g.app.Store(), p.accountID)
}

// jsonField is a top-level member of a JSON object.
func jsonField(body []byte, key string) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(body, &m)
	v, ok := m[key]
	return v, ok
}
