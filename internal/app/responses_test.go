package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/oapitest"
	"github.com/modelgate/modelgate/internal/provider/providertest"
	"github.com/modelgate/modelgate/internal/store"
)

func textInput(s string) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfString: oai.String(s)}
}

var respWeatherTool = responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
	Name: "get_weather", Description: oai.String("Get the current weather in a city."), Strict: oai.Bool(true),
	Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
		"required": []string{"city"}, "additionalProperties": false},
}}

// respStreamed is what one Responses stream delivered through the SDK.
type respStreamed struct {
	types     []string
	text      string // the output_text deltas, joined
	doneText  string // response.output_text.done's text
	final     responses.Response
	lastError string
}

// collectEvents reads a stream to its end; spec checks each event against
// the official schema (only for events the gateway writes itself: relayed
// ones are the vendor's bytes, "usage": null included).
func collectEvents(t *testing.T, spec bool, s interface {
	Next() bool
	Current() responses.ResponseStreamEventUnion
	Err() error
}) respStreamed {
	t.Helper()
	var out respStreamed
	seq := int64(0)
	checked := map[string]bool{} // one event of each type: the union schema is slow to check
	for s.Next() {
		ev := s.Current()
		out.types = append(out.types, ev.Type)
		if ev.SequenceNumber != seq {
			t.Errorf("event %d (%s) has sequence_number %d", seq, ev.Type, ev.SequenceNumber)
		}
		seq++
		if spec && !checked[ev.Type] {
			checked[ev.Type] = true
			oapitest.CheckComponent(t, "ResponseStreamEvent", []byte(ev.RawJSON()))
		}
		switch ev.Type {
		case "response.output_text.delta":
			out.text += ev.Delta
		case "response.output_text.done":
			out.doneText = ev.Text
		case "response.completed", "response.incomplete", "response.failed":
			out.final = ev.Response
		case "error":
			out.lastError = ev.Message
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return out
}

// textEvents is the event order of a one-message text answer.
var textEvents = []string{"response.created", "response.in_progress", "response.output_item.added",
	"response.content_part.added", "response.output_text.delta", "response.output_text.done",
	"response.content_part.done", "response.output_item.done", "response.completed"}

// sameOrder reports whether got is want with each delta repeated any number of times.
func sameOrder(got, want []string) bool {
	var squeezed []string
	for _, g := range got {
		if n := len(squeezed); n > 0 && squeezed[n-1] == g && strings.HasSuffix(g, ".delta") {
			continue
		}
		squeezed = append(squeezed, g)
	}
	return strings.Join(squeezed, ",") == strings.Join(want, ",")
}

// post sends a raw Responses request and checks the answer against the spec.
func postResponses(t *testing.T, g *gateway, key, body string) (*http.Response, []byte) {
	t.Helper()
	resp, b := g.post("/v1/responses", "application/json", key, strings.NewReader(body))
	if resp.StatusCode == http.StatusOK && resp.Header.Get("Content-Type") == "application/json" {
		oapitest.CheckResponse(t, http.MethodPost, "/responses", resp.StatusCode, "application/json", b)
	}
	return resp, b
}

// getRaw sends a GET and returns the answer read whole.
func getRaw(t *testing.T, g *gateway, path, key string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, g.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestResponsesPassThrough(t *testing.T) {
	g := startGateway(t)
	c := g.client(g.keys["default"])
	ctx := context.Background()
	var raw *http.Response
	r, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("Tell me a story."),
		MaxOutputTokens: oai.Int(200)}, option.WithResponseInto(&raw))
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "gpt-4o-mini" || r.ID != providertest.StoredResponseID || !strings.HasPrefix(r.OutputText(), "In a peaceful grove") ||
		r.Usage.InputTokens != 36 || r.Usage.OutputTokens != 87 {
		t.Errorf("response %s %s %q usage %+v", r.ID, r.Model, r.OutputText(), r.Usage)
	}
	// 36 input × $0.15/M + 87 output × $0.60/M = 57.6 µ, rounded half up.
	if got := raw.Header.Get("X-Modelgate-Cost"); got != "0.000058" {
		t.Errorf("X-Modelgate-Cost = %q", got)
	}
	last := g.upstream.Last()
	var sent map[string]any
	if err := json.Unmarshal(last.Body, &sent); err != nil || last.Model != "gpt-4o-mini-2024-07-18" || sent["max_output_tokens"] != 200.0 ||
		sent["input"] != "Tell me a story." {
		t.Errorf("upstream got %s", last.Body)
	}
	_, body := postResponses(t, g, g.keys["default"], `{"model":"gpt-4o-mini","input":"hi","store":true}`)
	var m struct{ Model string }
	if err := json.Unmarshal(body, &m); err != nil || m.Model != "gpt-4o-mini" {
		t.Errorf("raw body %s", body)
	}

	// Streams are relayed event by event, names and order preserved.
	s := collectEvents(t, false, c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("Hi")}))
	if !sameOrder(s.types, textEvents) || s.text != "Hi there! How can I help?" || s.doneText != s.text ||
		s.final.Model != "gpt-4o-mini" || s.final.Usage.TotalTokens != 21 {
		t.Errorf("stream %v text %q final %s %+v", s.types, s.text, s.final.Model, s.final.Usage)
	}
	// An upstream failure mid-stream ends the stream with an error event.
	s = collectEvents(t, false, c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "midstream-error", Input: textInput("Hi")}))
	if n := len(s.types); n == 0 || s.types[n-1] != "error" || s.lastError == "" {
		t.Errorf("midstream error stream %v", s.types)
	}

	recs := g.usage()
	var n int
	for _, rec := range recs {
		if rec.Endpoint != "responses" {
			continue
		}
		n++
		switch rec.Model {
		case "gpt-4o-mini":
			// 57.6 µ for the answers above, 7.2 µ for the stream (12 in, 9 out).
			if rec.Status != 200 || (rec.Cost != 58 && rec.Cost != 7) || rec.PromptTokens == 0 || rec.Provider != "fake-openai" {
				t.Errorf("record %+v", rec)
			}
		case "midstream-error":
			// A delta reached the client before the vendor broke off: it
			// pays for what it was sent.
			if rec.Cost <= 0 || rec.ErrorCode == "" || !rec.Estimated || rec.CompletionTokens < 1 {
				t.Errorf("midstream record %+v", rec)
			}
		}
	}
	if n != 4 {
		t.Errorf("%d responses records, want 4", n)
	}
}

func TestResponsesTranslatedDemo(t *testing.T) {
	g := startGateway(t)
	c := g.client(g.keys["default"])
	ctx := context.Background()
	params := responses.ResponseNewParams{Model: "demo-chat", Input: textInput("ping"), Instructions: oai.String("Be brief."),
		Metadata: map[string]string{"k": "v"}}
	r, err := c.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "demo-chat" || !strings.HasPrefix(r.ID, "resp_") || r.Status != "completed" || !strings.Contains(r.OutputText(), `You said: "ping"`) ||
		r.Usage.TotalTokens == 0 || r.Instructions.OfString != "Be brief." || r.Metadata["k"] != "v" {
		t.Errorf("response %+v", r)
	}
	_, body := postResponses(t, g, g.keys["default"], `{"model":"demo-chat","input":[{"role":"user","content":[{"type":"input_text","text":"ping"}]}]}`)
	if !bytes.Contains(body, []byte(`You said: \"ping\"`)) {
		t.Errorf("raw body %s", body)
	}

	s := collectEvents(t, true, c.Responses.NewStreaming(ctx, params))
	if !sameOrder(s.types, textEvents) || s.text != r.OutputText() || s.doneText != s.text || s.final.OutputText() != s.text ||
		s.final.Usage.TotalTokens == 0 || s.final.Model != "demo-chat" {
		t.Errorf("stream %v text %q final %q", s.types, s.text, s.final.OutputText())
	}
	// max_output_tokens cut short: status incomplete with the reason.
	params.MaxOutputTokens = oai.Int(16) // the least the API accepts
	r, err = c.Responses.New(ctx, params)
	if err != nil || r.Status != "incomplete" || r.IncompleteDetails.Reason != "max_output_tokens" {
		t.Fatalf("incomplete: %+v, %v", r, err)
	}
	s = collectEvents(t, true, c.Responses.NewStreaming(ctx, params))
	if n := len(s.types); s.types[n-1] != "response.incomplete" || s.final.IncompleteDetails.Reason != "max_output_tokens" {
		t.Errorf("incomplete stream %v", s.types)
	}
}

// asInput turns an output item into the input item that replays it, as a
// stateless client does on its next turn.
func asInput(t *testing.T, it responses.ResponseOutputItemUnion) responses.ResponseInputItemUnionParam {
	t.Helper()
	switch it.Type {
	case "message":
		p := it.AsMessage().ToParam()
		return responses.ResponseInputItemUnionParam{OfOutputMessage: &p}
	case "function_call":
		p := it.AsFunctionCall().ToParam()
		return responses.ResponseInputItemUnionParam{OfFunctionCall: &p}
	case "reasoning":
		p := it.AsReasoning().ToParam()
		return responses.ResponseInputItemUnionParam{OfReasoning: &p}
	}
	t.Fatalf("output item of type %s", it.Type)
	return responses.ResponseInputItemUnionParam{}
}

// A function call and its output make a two-turn conversation, through
// translation (demo, Anthropic) and pass-through (OpenAI).
func TestResponsesFunctionCalls(t *testing.T) {
	g, fake := startAnthropicGateway(t)
	c := g.client(g.keys["default"])
	ctx := context.Background()
	for _, tc := range []struct{ model, args, answer string }{
		{"demo-chat", "", "The get_weather tool returned: 22 degrees and sunny"},
		{"claude-tools", `{"city":"Paris"}`, ""},
		{"tool-model", `{"city":"Paris"}`, "In a peaceful grove"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			first, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: tc.model, Input: textInput("Weather in Paris?"),
				Tools: []responses.ToolUnionParam{respWeatherTool}, Store: oai.Bool(false)})
			if err != nil {
				t.Fatal(err)
			}
			var call responses.ResponseOutputItemUnion
			for _, it := range first.Output {
				if it.Type == "function_call" {
					call = it
				}
			}
			fc := call.AsFunctionCall()
			if fc.CallID == "" || fc.Name != "get_weather" || (tc.args != "" && fc.Arguments != tc.args) {
				t.Fatalf("first turn output %+v", first.Output)
			}
			input := responses.ResponseInputParam{
				responses.ResponseInputItemParamOfMessage("Weather in Paris?", responses.EasyInputMessageRoleUser),
			}
			for _, it := range first.Output {
				input = append(input, asInput(t, it))
			}
			input = append(input, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
				CallID: oai.String(fc.CallID), Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: oai.String("22 degrees and sunny")}}})
			second, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: tc.model, Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
				Tools: []responses.ToolUnionParam{respWeatherTool}})
			if err != nil {
				t.Fatal(err)
			}
			if second.OutputText() == "" || (tc.answer != "" && !strings.Contains(second.OutputText(), tc.answer)) {
				t.Errorf("second turn %q", second.OutputText())
			}
		})
	}
	// Anthropic got the tool result for the tool_use id it issued.
	var sent struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				ID        string `json:"id"`
			} `json:"content"`
		} `json:"messages"`
	}
	last := fake.Last()
	if err := json.Unmarshal(last.Body, &sent); err != nil {
		t.Fatal(err)
	}
	if n := len(sent.Messages); n != 3 || sent.Messages[1].Role != "assistant" || sent.Messages[2].Content[0].Type != "tool_result" ||
		sent.Messages[2].Content[0].ToolUseID != "toolu_01A09q90qw90lq917835lq9" {
		t.Errorf("anthropic got %s", last.Body)
	}
}

func TestResponsesAnthropic(t *testing.T) {
	g, fake := startAnthropicGateway(t)
	c := g.client(g.keys["default"])
	ctx := context.Background()
	schema := map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}},
		"required": []string{"answer"}, "additionalProperties": false}
	params := responses.ResponseNewParams{Model: "claude-test", Input: textInput("Hello"), Instructions: oai.String("Answer in JSON."),
		MaxOutputTokens: oai.Int(300), Temperature: oai.Float(0.5),
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "reply", Schema: schema, Strict: oai.Bool(true)}}}}
	r, err := c.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "claude-test" || r.OutputText() != "Hello! How can I help you today?" || r.Usage.InputTokens != 16 ||
		r.Usage.InputTokensDetails.CachedTokens != 4 || r.Usage.OutputTokens != 10 || r.Text.Format.Type != "json_schema" {
		t.Errorf("response %q usage %+v text %+v", r.OutputText(), r.Usage, r.Text)
	}
	var sent struct {
		System []struct {
			Text string `json:"text"`
		} `json:"system"`
		MaxTokens   int64   `json:"max_tokens"`
		Temperature float64 `json:"temperature"`
		Tools       []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
		ToolChoice struct {
			Type, Name string
		} `json:"tool_choice"`
	}
	last := fake.Last()
	if err := json.Unmarshal(last.Body, &sent); err != nil {
		t.Fatal(err)
	}
	if len(sent.System) == 0 || sent.System[0].Text != "Answer in JSON." || sent.MaxTokens != 300 || sent.Temperature != 0.5 ||
		len(sent.Tools) != 1 || sent.Tools[0].Name != "reply" || sent.Tools[0].InputSchema["required"] == nil || sent.ToolChoice.Name != "reply" {
		t.Errorf("anthropic got %s", last.Body)
	}
	s := collectEvents(t, true, c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "claude-test", Input: textInput("Hello")}))
	if !sameOrder(s.types, textEvents) || s.text == "" || s.final.OutputText() != s.text || s.final.Usage.OutputTokens == 0 {
		t.Errorf("stream %v text %q usage %+v", s.types, s.text, s.final.Usage)
	}
	// A stream the vendor breaks off ends with response.failed; the client
	// pays for the text it was sent.
	s = collectEvents(t, true, c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "claude-midstream", Input: textInput("Hello")}))
	if n := len(s.types); n == 0 || s.types[n-1] != "response.failed" || s.final.Status != "failed" || s.final.Error.Message == "" {
		t.Errorf("midstream stream %v final %+v", s.types, s.final.Error)
	}
	var failed store.UsageRecord
	for _, rec := range g.usage() {
		if rec.Model == "claude-midstream" {
			failed = rec
		}
	}
	if failed.Endpoint != "responses" || failed.Cost <= 0 || !failed.Estimated || failed.CompletionTokens < 1 || failed.ErrorCode == "" {
		t.Errorf("midstream record %+v", failed)
	}
}

// What a translation cannot do is refused with a 400 naming the parameter,
// before anything reaches a vendor.
func TestResponsesRefused(t *testing.T) {
	g := startGateway(t)
	key := g.keys["default"]
	cases := []struct{ name, body, status, param string }{
		{"built-in tool", `{"model":"demo-chat","input":"hi","tools":[{"type":"web_search"}]}`, "400", "tools[0].type"},
		{"previous response", `{"model":"demo-chat","input":"hi","previous_response_id":"resp_1"}`, "400", "previous_response_id"},
		{"store", `{"model":"demo-chat","input":"hi","store":true}`, "400", "store"},
		{"background", `{"model":"demo-chat","input":"hi","background":true}`, "400", "background"},
		{"empty input", `{"model":"demo-chat","input":[]}`, "400", "input"},
		{"no input", `{"model":"demo-chat"}`, "400", "input"},
		{"item reference", `{"model":"demo-chat","input":[{"type":"item_reference","id":"msg_1"}]}`, "400", "input[0]"},
		{"bad role", `{"model":"demo-chat","input":[{"role":"robot","content":"x"}]}`, "400", "input[0].role"},
		{"temperature type", `{"model":"demo-chat","input":"hi","temperature":"hot"}`, "400", "temperature"},
		{"temperature range", `{"model":"demo-chat","input":"hi","temperature":3}`, "400", "temperature"},
		{"schema without name", `{"model":"demo-chat","input":"hi","text":{"format":{"type":"json_schema","schema":{}}}}`, "400", "text.format.name"},
		{"hosted tool choice", `{"model":"demo-chat","input":"hi","tool_choice":{"type":"web_search_preview"}}`, "400", "tool_choice.type"},
		{"no model", `{"input":"hi"}`, "400", "model"},
		{"case", `{"model":"demo-chat","input":"hi","Max_Output_Tokens":5}`, "400", "Max_Output_Tokens"},
		{"unknown model", `{"model":"nope","input":"hi"}`, "404", "model"},
	}
	before := len(g.upstream.Received())
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := postResponses(t, g, key, tc.body)
			var e struct {
				Error struct {
					Param   string `json:"param"`
					Message string `json:"message"`
				} `json:"error"`
			}
			_ = json.Unmarshal(b, &e)
			if resp.Status[:3] != tc.status || e.Error.Param != tc.param || e.Error.Message == "" {
				t.Errorf("got %s %s", resp.Status, b)
			}
		})
	}
	if n := len(g.upstream.Received()); n != before {
		t.Errorf("%d requests reached the upstream", n-before)
	}
	// The SDK sees the same 400.
	c := g.client(key)
	_, err := c.Responses.New(context.Background(), responses.ResponseNewParams{Model: "demo-chat", Input: textInput("hi"),
		Tools: []responses.ToolUnionParam{{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}}})
	if e := apiError(t, err, 400, "invalid_request_error"); e.Param != "tools[0].type" {
		t.Errorf("param %q", e.Param)
	}
}

func TestResponsesGet(t *testing.T) {
	g := startGateway(t, func(c *config.Config) {
		c.Groups["demo-only"] = config.Group{Models: []string{"demo-*"}}
	})
	c := g.client(g.keys["default"])
	ctx := context.Background()
	// Only the account that created a response may read it (responses_owner_test.go).
	if _, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("hi")}); err != nil {
		t.Fatal(err)
	}
	r, err := c.Responses.Get(ctx, providertest.StoredResponseID, responses.ResponseGetParams{}, option.WithQuery("model", "gpt-4o-mini"))
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != providertest.StoredResponseID || r.Model != "gpt-4o-mini" || r.OutputText() == "" {
		t.Errorf("got %s %s %q", r.ID, r.Model, r.OutputText())
	}
	if got := string(g.upstream.Last().Body); got != "/v1/responses/"+providertest.StoredResponseID {
		t.Errorf("upstream GET %s", got)
	}
	// Without ?model=, the first pass-through model of the group answers.
	if r, err = c.Responses.Get(ctx, providertest.StoredResponseID, responses.ResponseGetParams{}); err != nil || r.OutputText() == "" {
		t.Fatalf("get without model: %v", err)
	}
	resp, b := getRaw(t, g, "/v1/responses/"+providertest.StoredResponseID+"?model=gpt-4o-mini", g.keys["default"])
	if resp.StatusCode != 200 {
		t.Fatalf("raw get %d %s", resp.StatusCode, b)
	}
	oapitest.CheckResponse(t, http.MethodGet, "/responses/"+providertest.StoredResponseID, 200, "application/json", b)

	_, err = c.Responses.Get(ctx, "resp_unknown", responses.ResponseGetParams{})
	apiError(t, err, 404, "not_found")
	_, err = c.Responses.Get(ctx, "resp_x", responses.ResponseGetParams{}, option.WithQuery("model", "demo-chat"))
	apiError(t, err, 404, "not_found")
	_, err = c.Responses.Get(ctx, "resp_x", responses.ResponseGetParams{}, option.WithQuery("model", "nope"))
	apiError(t, err, 404, "model_not_found")
	resp, b = getRaw(t, g, "/v1/responses/resp%2E%2E%20x?model=gpt-4o-mini", g.keys["default"])
	if resp.StatusCode != 400 || !bytes.Contains(b, []byte(`"param":"response_id"`)) {
		t.Errorf("bad id: %d %s", resp.StatusCode, b)
	}
	// A key whose models are all translated has nowhere to look.
	demo := g.client(g.createKey("demo-only", false))
	_, err = demo.Responses.Get(ctx, providertest.StoredResponseID, responses.ResponseGetParams{})
	apiError(t, err, 404, "not_found")

	// Each request left a record, or a count when the gateway refused it
	// before asking the vendor.
	var n int64
	for _, rec := range g.usage() {
		if rec.Endpoint == "responses.get" {
			n++
		}
	}
	for k, c := range refusalCounts(g) {
		if strings.HasPrefix(k, "responses.get ") {
			n += c
		}
	}
	if n != 8 {
		t.Errorf("%d responses.get records and refusals, want 8", n)
	}
}

// The SSE framing: every event has an "event:" line equal to its data's type.
func TestResponsesEventNames(t *testing.T) {
	g := startGateway(t)
	for _, model := range []string{"gpt-4o-mini", "demo-chat"} {
		req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1/responses",
			strings.NewReader(`{"model":"`+model+`","input":"hi","stream":true}`))
		req.Header.Set("Authorization", "Bearer "+g.keys["default"])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		name, events := "", 0
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				var d struct{ Type string }
				if err := json.Unmarshal([]byte(v), &d); err != nil || d.Type != name {
					t.Errorf("%s: event %q with data type %q", model, name, d.Type)
				}
				events++
				name = ""
			}
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if events < 9 || resp.Trailer.Get("X-Modelgate-Cost") == "" {
			t.Errorf("%s: %d events, trailer %v", model, events, resp.Trailer)
		}
	}
}

// Gemini models are reached the same way, including a streamed function call.
func TestResponsesGemini(t *testing.T) {
	g, fake := startGeminiGateway(t)
	c := g.client(g.keys["default"])
	ctx := context.Background()
	r, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gemini-test", Input: textInput("Hello"),
		Instructions: oai.String("Be brief."), MaxOutputTokens: oai.Int(64)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "gemini-test" || r.OutputText() == "" || r.Usage.TotalTokens == 0 {
		t.Errorf("response %q usage %+v", r.OutputText(), r.Usage)
	}
	if last := fake.Last(); !bytes.Contains(last.Body, []byte(`"systemInstruction"`)) || !bytes.Contains(last.Body, []byte(`"maxOutputTokens":64`)) {
		t.Errorf("gemini got %s", last.Body)
	}
	s := collectEvents(t, true, c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gemini-tools", Input: textInput("Weather?"),
		Tools: []responses.ToolUnionParam{respWeatherTool}}))
	var call responses.ResponseOutputItemUnion
	for _, it := range s.final.Output {
		if it.Type == "function_call" {
			call = it
		}
	}
	if n := len(s.types); n == 0 || s.types[n-1] != "response.completed" || call.Name == "" || call.CallID == "" {
		t.Errorf("stream %v output %+v", s.types, s.final.Output)
	}
}
