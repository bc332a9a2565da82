package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/oapitest"
)

// apiErr is the error body the tests read.
type apiErr struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// checkError fails unless b is an error body with the status, param and
// code wanted ("" param: null) whose message contains msg.
func checkError(t *testing.T, resp *http.Response, b []byte, status int, param, code, msg string) {
	t.Helper()
	var e apiErr
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("not an error body (%d): %s", resp.StatusCode, b)
	}
	gotParam, gotCode := "", ""
	if e.Error.Param != nil {
		gotParam = *e.Error.Param
	}
	if e.Error.Code != nil {
		gotCode = *e.Error.Code
	}
	if resp.StatusCode != status || gotParam != param || gotCode != code || !strings.Contains(e.Error.Message, msg) {
		t.Fatalf("got %d param=%q code=%q %q\nwant %d param=%q code=%q containing %q", resp.StatusCode, gotParam, gotCode,
			e.Error.Message, status, param, code, msg)
	}
}

// Bad generation requests get a 400 naming the parameter, and no vendor
// is called.
func TestImageGenerateBadInput(t *testing.T) {
	g := startImageGateway(t)
	tests := []struct {
		name, body  string
		status      int
		param, code string
		msg         string
	}{
		{"size not allowed", `{"model":"dall-e-2","prompt":"x","size":"1024x1023"}`, 400, "size", "invalid_request_error",
			"Supported values for the model 'dall-e-2' are: '256x256', '512x512', '1024x1024'"},
		{"size of another model", `{"model":"dall-e-3","prompt":"x","size":"512x512"}`, 400, "size", "invalid_request_error", "'1792x1024'"},
		{"auto for dall-e", `{"model":"dall-e-2","prompt":"x","size":"auto"}`, 400, "size", "invalid_request_error", "'256x256'"},
		{"size not WxH", `{"model":"demo-image","prompt":"x","size":"large"}`, 400, "size", "invalid_request_error", "WIDTHxHEIGHT"},
		{"demo size", `{"model":"demo-image","prompt":"x","size":"1792x1024"}`, 400, "size", "invalid_request_error", "'256x256'"},
		{"n zero", `{"model":"dall-e-2","prompt":"x","n":0}`, 400, "n", "integer_below_min_value", "Expected a value >= 1"},
		{"n eleven", `{"model":"dall-e-2","prompt":"x","n":11}`, 400, "n", "integer_above_max_value", "Expected a value <= 10"},
		{"n not an integer", `{"model":"dall-e-2","prompt":"x","n":1.5}`, 400, "n", "invalid_type", "integer"},
		{"dall-e-3 one image", `{"model":"dall-e-3","prompt":"x","n":2}`, 400, "n", "invalid_request_error", "only supports n=1"},
		{"imagen four images", `{"model":"imagen-3.0-generate-002","prompt":"x","n":5}`, 400, "n", "invalid_request_error", "at most 4"},
		{"empty prompt", `{"model":"dall-e-2","prompt":"  "}`, 400, "prompt", "invalid_request_error", "must not be empty"},
		{"no prompt", `{"model":"dall-e-2"}`, 400, "prompt", "missing_required_parameter", "Missing required parameter"},
		{"prompt not a string", `{"model":"dall-e-2","prompt":7}`, 400, "prompt", "invalid_type", "expected a string"},
		{"no model", `{"prompt":"x"}`, 400, "model", "invalid_request_error", "must provide a model"},
		{"response_format", `{"model":"dall-e-2","prompt":"x","response_format":"png"}`, 400, "response_format", "invalid_value", "'url' and 'b64_json'"},
		{"quality of another model", `{"model":"dall-e-2","prompt":"x","quality":"hd"}`, 400, "quality", "invalid_request_error", "'standard', 'auto'"},
		{"dall-e quality for gpt-image", `{"model":"gpt-image-1","prompt":"x","quality":"standard"}`, 400, "quality", "invalid_request_error", "'low', 'medium', 'high', 'auto'"},
		{"style", `{"model":"dall-e-3","prompt":"x","style":"bright"}`, 400, "style", "invalid_value", "'vivid' and 'natural'"},
		{"stream", `{"model":"gpt-image-1","prompt":"x","stream":true}`, 400, "stream", "invalid_request_error", "not supported"},
		{"case-changed key", `{"model":"dall-e-2","prompt":"x","Size":"1x1"}`, 400, "Size", "unknown_parameter", "did you mean 'size'"},
		{"chat model", `{"model":"gpt-4o-mini","prompt":"x"}`, 400, "model", "invalid_request_error", "does not support image generation"},
		{"gemini chat model", `{"model":"gemini-test","prompt":"x"}`, 400, "model", "invalid_request_error", "does not support image generation"},
		{"demo chat model", `{"model":"demo-chat","prompt":"x"}`, 400, "model", "invalid_request_error", "does not support image generation"},
		{"unknown model", `{"model":"dall-e-9","prompt":"x"}`, 404, "model", "model_not_found", "does not exist"},
		{"not JSON", `{"model":`, 400, "", "invalid_request_error", "could not parse"},
		{"unpriced", `{"model":"unpriced-image","prompt":"x"}`, 503, "", "model_not_priced", "no price"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, gem := len(g.upstream.Received()), len(g.gemini.Received())
			resp, b := g.post("/v1/images/generations", "application/json", g.keys["default"], strings.NewReader(tt.body))
			checkError(t, resp, b, tt.status, tt.param, tt.code, tt.msg)
			if len(g.upstream.Received()) != before || len(g.gemini.Received()) != gem {
				t.Fatal("a vendor was called for a bad request")
			}
			oapitest.CheckComponent(t, "ErrorResponse", b)
		})
	}
	// Only the "basic" group's models: dall-e-2 is not one of them.
	resp, b := g.post("/v1/images/generations", "application/json", g.keys["basic"], strings.NewReader(`{"model":"dall-e-2","prompt":"x"}`))
	checkError(t, resp, b, 404, "model", "model_not_found", "does not exist")
}

// Images are charged per image returned at the size and quality's price,
// or from the vendor's usage for models billed by token; a failed or
// refused generation costs nothing, and every request leaves a usage
// record.
func TestImageBilling(t *testing.T) {
	g := startImageGateway(t)
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	post := func(body string) (*http.Response, []byte) {
		return g.post("/v1/images/generations", "application/json", p.secret, strings.NewReader(body))
	}
	steps := []struct {
		body   string
		status int
		cost   money.Micros
	}{
		{`{"model":"dall-e-3","prompt":"x","size":"1792x1024","quality":"hd"}`, 200, 120_000},
		{`{"model":"dall-e-2","prompt":"x","n":2,"size":"256x256"}`, 200, 32_000},
		// Billed by token: the recorded answer's usage (10 text and 40 image
		// tokens in, 1,056 out) at $5, $10 and $40 per million.
		{`{"model":"gpt-image-1","prompt":"x","size":"1024x1024","quality":"low"}`, 200, 10*5 + 40*10 + 1056*40},
		{`{"model":"broken-image","prompt":"x"}`, 502, 0},                      // the vendor failed: released
		{`{"model":"imagen-filtered","prompt":"x","n":2}`, 400, 0},             // every image filtered
		{`{"model":"demo-image","prompt":"x","size":"256x256","n":3}`, 200, 0}, // free
	}
	var total money.Micros
	for _, s := range steps {
		resp, b := post(s.body)
		if resp.StatusCode != s.status {
			t.Fatalf("%s: %d %s", s.body, resp.StatusCode, b)
		}
		if s.status == 200 && resp.Header.Get("X-Modelgate-Cost") != s.cost.String() {
			t.Errorf("%s: cost header %s, want %s", s.body, resp.Header.Get("X-Modelgate-Cost"), s.cost)
		}
		total += s.cost
	}
	// A balance too small for n images is refused before the vendor is called.
	poor := g.newPayer("default", 150_000, 0, time.Time{})
	before := len(g.upstream.Received())
	resp, b := g.post("/v1/images/generations", "application/json", poor.secret,
		strings.NewReader(`{"model":"dall-e-3","prompt":"x","quality":"hd","size":"1024x1792"}`))
	if resp.StatusCode != 200 {
		t.Fatalf("one image fits: %d %s", resp.StatusCode, b)
	}
	resp, b = g.post("/v1/images/generations", "application/json", poor.secret,
		strings.NewReader(`{"model":"dall-e-2","prompt":"x","n":10}`))
	checkError(t, resp, b, 429, "", "insufficient_quota", "or lower n")
	if got := len(g.upstream.Received()) - before; got != 1 {
		t.Fatalf("the vendor was called %d times, want 1", got)
	}

	recs := g.usage()
	var spent money.Micros
	n, tokens := 0, false
	for _, r := range recs {
		if r.AccountID == p.accountID {
			n++
			spent += r.Cost
			if r.Endpoint != "images.generations" {
				t.Errorf("endpoint %q", r.Endpoint)
			}
			// The GPT image model's token usage is recorded (and billed).
			tokens = tokens || (r.Model == "gpt-image-1" && r.PromptTokens == 50 && r.CompletionTokens == 1056)
		}
	}
	if !tokens {
		t.Error("the GPT image model's usage was not recorded")
	}
	if n != len(steps) || spent != total {
		t.Fatalf("%d records costing %s, want %d costing %s", n, spent, len(steps), total)
	}
	if bal := audit(t, g.app.Store(), p.accountID); bal != money.Unit-total {
		t.Fatalf("balance %s, want %s", bal, money.Unit-total)
	}
	if bal := audit(t, g.app.Store(), poor.accountID); bal != 30_000 {
		t.Fatalf("balance %s, want 0.03", bal)
	}
}
