package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/money"
)

// errorBody is the OpenAI error object as a client reads it.
type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// Every bad input gets a 400 naming the param, before any vendor is
// called, through a pass-through vendor and a translated one alike.
func TestEmbeddingsBadInput(t *testing.T) {
	g, gem := startEmbedGateway(t)
	many := `[` + strings.Repeat(`"a",`, 2048) + `"a"]`
	tests := []struct {
		name, body, param string
	}{
		{"missing input", `{"model":"M"}`, "input"},
		{"null input", `{"model":"M","input":null}`, "input"},
		{"empty string", `{"model":"M","input":""}`, "input"},
		{"empty array", `{"model":"M","input":[]}`, "input"},
		{"empty element", `{"model":"M","input":["a",""]}`, "input[1]"},
		{"empty token array", `{"model":"M","input":[[1],[]]}`, "input[1]"},
		{"mixed types", `{"model":"M","input":["a",1]}`, "input[1]"},
		{"mixed arrays", `{"model":"M","input":[[1],2]}`, "input[1]"},
		{"non-integer token", `{"model":"M","input":[1,2.5]}`, "input[1]"},
		{"negative token", `{"model":"M","input":[[3,-1]]}`, "input"},
		{"object input", `{"model":"M","input":{"text":"a"}}`, "input"},
		{"2049 inputs", `{"model":"M","input":` + many + `}`, "input"},
		{"bad encoding_format", `{"model":"M","input":"a","encoding_format":"int8"}`, "encoding_format"},
		{"zero dimensions", `{"model":"M","input":"a","dimensions":0}`, "dimensions"},
		{"string dimensions", `{"model":"M","input":"a","dimensions":"8"}`, "dimensions"},
		{"missing model", `{"input":"a"}`, "model"},
		{"model number", `{"model":7,"input":"a"}`, "model"},
		{"user number", `{"model":"M","input":"a","user":1}`, "user"},
	}
	for _, model := range []string{"text-embedding-3-small", "gemini-embedding-001", "demo-embed"} {
		for _, tt := range tests {
			t.Run(model+"/"+tt.name, func(t *testing.T) {
				resp, b := g.post("/v1/embeddings", "application/json", g.keys["default"], strings.NewReader(strings.ReplaceAll(tt.body, `"M"`, `"`+model+`"`)))
				var e errorBody
				if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != 400 || e.Error.Param == nil || *e.Error.Param != tt.param ||
					e.Error.Type != "invalid_request_error" {
					t.Fatalf("%d %s; want 400 on %s", resp.StatusCode, b, tt.param)
				}
			})
		}
	}
	// Refusals that depend on the model, also before any vendor call.
	long := `"` + strings.Repeat("hello ", 9000) + `"`
	refusals := []struct {
		name, body string
		status     int
		param      string
		code       string
	}{
		{"token ids to Gemini", `{"model":"gemini-embedding-001","input":[[1,2]]}`, 400, "input", "invalid_request_error"},
		{"tokens beyond the context window", `{"model":"text-embedding-3-small","input":[` + strings.Repeat("1,", 8192) + `1]}`, 400, "input", "context_length_exceeded"},
		{"text beyond the context window", `{"model":"text-embedding-3-small","input":["a",` + long + `]}`, 400, "input", "context_length_exceeded"},
		{"chat-only provider", `{"model":"claude-plain","input":"a"}`, 400, "model", "invalid_request_error"},
		{"demo chat model", `{"model":"demo-chat","input":"a"}`, 400, "model", "invalid_request_error"},
		{"demo too many dimensions", `{"model":"demo-embed","input":"a","dimensions":5000}`, 400, "dimensions", "invalid_request_error"},
		{"unknown model", `{"model":"no-such-embedder","input":"a"}`, 404, "model", "model_not_found"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := g.post("/v1/embeddings", "application/json", g.keys["default"], strings.NewReader(tt.body))
			var e errorBody
			_ = json.Unmarshal(b, &e)
			code := e.Error.Type
			if e.Error.Code != nil {
				code = *e.Error.Code
			}
			if resp.StatusCode != tt.status || e.Error.Param == nil || *e.Error.Param != tt.param || code != tt.code {
				t.Fatalf("%d %.300s; want %d %s on %s", resp.StatusCode, b, tt.status, tt.code, tt.param)
			}
		})
	}
	// A key whose group does not include the model does not see it.
	basic := g.client(g.keys["basic"])
	_, err := basic.Embeddings.New(context.Background(), oai.EmbeddingNewParams{Model: "text-embedding-3-small", Input: strs("a")})
	apiError(t, err, 404, "model_not_found")

	if n, m := len(g.upstream.Received()), len(gem.Received()); n != 0 || m != 0 {
		t.Errorf("vendors called for bad input: OpenAI %d, Gemini %d", n, m)
	}
	for _, r := range embedRecords(g.usage()) {
		if r.Status < 400 || r.Cost != 0 {
			t.Errorf("record %+v", r)
		}
	}
}

// Upstream failures cost nothing; a vendor that reports no usage is
// counted by the gateway.
func TestEmbeddingsUpstream(t *testing.T) {
	g, _ := startEmbedGateway(t)
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	c := g.client(p.secret)
	ctx := context.Background()
	for _, tt := range []struct {
		model  string
		status int
		code   string
	}{
		{"embed-429", 429, "rate_limit_exceeded"},
		{"embed-malformed", 502, "bad_upstream_response"},
		{"gemini-embed-429", 429, "rate_limit_exceeded"},
	} {
		_, err := c.Embeddings.New(ctx, oai.EmbeddingNewParams{Model: tt.model, Input: strs("a")})
		apiError(t, err, tt.status, tt.code)
	}
	r, err := c.Embeddings.New(ctx, oai.EmbeddingNewParams{Model: "embed-no-usage", Input: strs("hello world", "again")})
	if err != nil {
		t.Fatal(err)
	}
	counted := r.Usage.PromptTokens
	if counted == 0 || r.Usage.TotalTokens != counted || len(r.Data) != 2 {
		t.Errorf("usage %+v", r.Usage)
	}
	var charged int
	for _, rec := range embedRecords(g.usage()) {
		switch {
		case rec.Model == "embed-no-usage":
			charged++
			if !rec.Estimated || rec.PromptTokens != counted || rec.Cost != money.Micros(counted*embedPrice) {
				t.Errorf("record %+v", rec)
			}
		case rec.Model == "embed-malformed":
			// A 2xx answer the gateway cannot read was billed by the
			// vendor: the input ("a", one token) is charged.
			charged++
			if rec.Status != 502 || !rec.Estimated || rec.PromptTokens != 1 || rec.Cost != embedPrice {
				t.Errorf("unreadable answer: record %+v, want its input charged", rec)
			}
		case rec.Cost != 0 || rec.Status < 400:
			t.Errorf("failure charged: %+v", rec)
		}
	}
	if b := audit(t, g.app.Store(), p.accountID); charged != 2 || b != money.Unit-money.Micros(counted*embedPrice)-embedPrice {
		t.Errorf("balance %v, %d charged", b, charged)
	}
}

// The reservation is the byte bound of the texts; when the balance cannot
// cover that, the texts are counted, and only what cannot be paid is
// refused, without calling the vendor.
func TestEmbeddingsQuota(t *testing.T) {
	g, _ := startEmbedGateway(t)
	ctx := context.Background()
	broke := g.newPayer("default", 0, 0, time.Time{})
	bc := g.client(broke.secret)
	_, err := bc.Embeddings.New(ctx, oai.EmbeddingNewParams{Model: "text-embedding-3-small", Input: strs("a")})
	apiError(t, err, 429, "insufficient_quota")
	if n := len(g.upstream.Received()); n != 0 {
		t.Fatalf("upstream called %d times for a broke account", n)
	}
	// 5 tokens of credit: "hello world hello world" is 23 bytes but 4
	// cl100k tokens (the fake vendor counts 4 words).
	tight := g.newPayer("default", 5*embedPrice, 0, time.Time{})
	c := g.client(tight.secret)
	if _, err := c.Embeddings.New(ctx, oai.EmbeddingNewParams{Model: "text-embedding-3-small", Input: strs("hello world hello world")}); err != nil {
		t.Fatalf("a request the balance covers: %v", err)
	}
	// 1 token left: "hello world" is 2 tokens.
	_, err = c.Embeddings.New(ctx, oai.EmbeddingNewParams{Model: "text-embedding-3-small", Input: strs("hello world")})
	apiError(t, err, 429, "insufficient_quota")
	if n := len(g.upstream.Received()); n != 1 {
		t.Errorf("upstream called %d times, want 1", n)
	}
	// Free models need no balance.
	if _, err := bc.Embeddings.New(ctx, oai.EmbeddingNewParams{Model: "demo-embed", Input: strs("a")}); err != nil {
		t.Errorf("demo-embed with no balance: %v", err)
	}
	g.usage()
	if b := audit(t, g.app.Store(), tight.accountID); b != embedPrice {
		t.Errorf("balance %v, want %v", b, money.Micros(embedPrice))
	}
}
