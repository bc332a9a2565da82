package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/provider/providertest"
	"github.com/modelgate/modelgate/internal/store"
)

// What a vendor charges outside token counts: built-in tool calls, service
// tiers and audio tokens are charged at their list prices from what the
// answer reports, and what the catalog has no price for is refused with a
// 400 naming the parameter, before any vendor call. (Before, a web search
// or a priority request was charged as tokens at the default price, and a
// key restricted to gpt-4o-mini got gpt-image-1 images unbilled.)

func TestBuiltinToolsCharged(t *testing.T) {
	g, up := startBilled(t)
	gpt5 := listPrice(t, "gpt-5")
	image := listPrice(t, "gpt-image-1")
	ctx := context.Background()
	p := g.newPayer("default", 5*money.Unit, 0, time.Time{})
	c := g.client(p.secret)
	web := []responses.ToolUnionParam{responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch)}
	input := responses.ResponseNewParamsInputUnion{OfString: oai.String("What happened today?")}

	// Three searches, plain and streamed; max_tool_calls goes upstream.
	res, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5", Input: input, Tools: web})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(up.Last().Body), `"max_tool_calls":10`); n != 1 {
		t.Errorf("upstream body %s; want the gateway's max_tool_calls 10", up.Last().Body)
	}
	if len(res.Output) != 4 {
		t.Fatalf("answer has %d output items; want 3 searches and a message", len(res.Output))
	}
	st := c.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-5", Input: input, Tools: web, MaxToolCalls: oai.Int(2)})
	for st.Next() {
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(up.Last().Body, []byte(`"max_tool_calls":2`)) || bytes.Count(up.Last().Body, []byte(`max_tool_calls`)) != 1 {
		t.Errorf("upstream body %s; want the client's max_tool_calls alone", up.Last().Body)
	}
	// An image from the image_generation tool, at gpt-image-1's price.
	imageTool := responses.ToolUnionParam{OfImageGeneration: &responses.ToolImageGenerationParam{Quality: "high", Size: "1024x1024"}}
	if _, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5", Input: input,
		Tools: []responses.ToolUnionParam{imageTool}}); err != nil {
		t.Fatal(err)
	}
	// A key whose group cannot use gpt-image-1 cannot use it as a tool.
	mini := g.newPayer("mini", 5*money.Unit, 0, time.Time{})
	before := len(up.Received())
	mc := g.client(mini.secret)
	_, err = mc.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: input,
		Tools: []responses.ToolUnionParam{imageTool}})
	if e := apiError(t, err, http.StatusBadRequest, "invalid_request_error"); e.Param != "tools[0].model" {
		t.Errorf("image tool of a model the group lacks: param %q; want tools[0].model", e.Param)
	}
	if len(up.Received()) != before {
		t.Error("a refused tool reached the vendor")
	}

	price, _ := image.ImagePrice("1024x1024", "high")
	wantFees := []money.Micros{3 * usd(t, "0.01"), 2 * usd(t, "0.01"), price}
	recs := recordsOf(g, p.accountID)
	if len(recs) != 3 {
		t.Fatalf("%d records; want 3", len(recs))
	}
	var total money.Micros
	for i, r := range recs {
		if want := costOf(t, gpt5.Price, r, 0, 0, wantFees[i]); r.Cost != want {
			t.Errorf("request %d: charged %v; want tokens at list price plus %v of tool calls = %v", i, r.Cost, wantFees[i], want)
		}
		total += r.Cost
	}
	if got := audit(t, g.app.Store(), p.accountID); got != 5*money.Unit-total {
		t.Errorf("balance %v; want %v", got, 5*money.Unit-total)
	}
}

func TestUnpricedToolsRefused(t *testing.T) {
	g, up := startBilled(t)
	p := g.newPayer("default", money.Unit, 0, time.Time{})
	for i, tool := range []string{
		`{"type":"code_interpreter","container":{"type":"auto"}}`,
		`{"type":"file_search","vector_store_ids":["vs_1"]}`,
		`{"type":"mcp","server_label":"x","server_url":"https://example.com/mcp"}`,
		`{"type":"computer_use_preview","display_width":1024,"display_height":768,"environment":"browser"}`,
		`{"type":"shell"}`,
		`{"type":"some_new_vendor_tool"}`,
	} {
		body := `{"model":"gpt-5","input":"hi","tools":[{"type":"function","name":"f","parameters":{"type":"object"}},` + tool + `]}`
		resp, out := g.post("/v1/responses", "application/json", p.secret, strings.NewReader(body))
		if resp.StatusCode != http.StatusBadRequest || !bytes.Contains(out, []byte(`"param":"tools[1].type"`)) {
			t.Errorf("tool %d %s: %d %s; want 400 naming tools[1].type", i, tool, resp.StatusCode, out)
		}
	}
	if n := len(up.Received()); n != 0 {
		t.Errorf("the vendor got %d requests; want none", n)
	}
	if got := audit(t, g.app.Store(), p.accountID); got != money.Unit {
		t.Errorf("refusals changed the balance to %v", got)
	}
}

func TestServiceTiersCharged(t *testing.T) {
	g, up := startBilled(t)
	gpt5 := listPrice(t, "gpt-5")
	ctx := context.Background()
	p := g.newPayer("default", 5*money.Unit, 0, time.Time{})
	c := g.client(p.secret)
	up.Set(func(f *providertest.Billed) { f.Output = 1000 })
	msgs := []oai.ChatCompletionMessageParamUnion{oai.UserMessage("hi")}
	if _, err := c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "gpt-5", Messages: msgs,
		ServiceTier: oai.ChatCompletionNewParamsServiceTierPriority}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5", ServiceTier: responses.ResponseNewParamsServiceTierFlex,
		Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("hi")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "gpt-5", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	// Tiers without a price are refused, on every door.
	before := len(up.Received())
	_, err := c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "gpt-5", Messages: msgs,
		ServiceTier: oai.ChatCompletionNewParamsServiceTierScale})
	if e := apiError(t, err, http.StatusBadRequest, "invalid_request_error"); e.Param != "service_tier" {
		t.Errorf("scale: param %q", e.Param)
	}
	_, err = c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-search-preview", ServiceTier: responses.ResponseNewParamsServiceTierPriority,
		Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("hi")}})
	if e := apiError(t, err, http.StatusBadRequest, "invalid_request_error"); e.Param != "service_tier" {
		t.Errorf("priority on a model without tiers: param %q", e.Param)
	}
	if len(up.Received()) != before {
		t.Error("a refused tier reached the vendor")
	}
	want := []billing.TokenPrice{gpt5.Tiers["priority"], gpt5.Tiers["flex"], gpt5.Price}
	for i, r := range recordsOf(g, p.accountID) {
		if w := costOf(t, want[i], r, 0, 0, 0); r.Cost != w {
			t.Errorf("request %d: charged %v; want %v at the tier the vendor ran it at", i, r.Cost, w)
		}
	}
}

func TestAudioAndSearchCharged(t *testing.T) {
	g, up := startBilled(t)
	audio := listPrice(t, "gpt-4o-audio-preview")
	search := listPrice(t, "gpt-4o-search-preview")
	gpt41 := listPrice(t, "gpt-4.1")
	ctx := context.Background()
	p := g.newPayer("default", 5*money.Unit, 0, time.Time{})
	spoken := `{"model":"gpt-4o-audio-preview","modalities":["text","audio"],"audio":{"voice":"alloy","format":"wav"},` +
		`"messages":[{"role":"user","content":[{"type":"text","text":"Say this:"},{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]}]}`
	if resp, out := g.post("/v1/chat/completions", "application/json", p.secret, strings.NewReader(spoken)); resp.StatusCode != http.StatusOK {
		t.Fatalf("audio chat: %d %s", resp.StatusCode, out)
	}
	c := g.client(p.secret)
	if _, err := c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "gpt-4o-search-preview",
		Messages: []oai.ChatCompletionMessageParamUnion{oai.UserMessage("news?")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat.Completions.New(ctx, oai.ChatCompletionNewParams{Model: "gpt-4.1",
		Messages:         []oai.ChatCompletionMessageParamUnion{oai.UserMessage("news?")},
		WebSearchOptions: oai.ChatCompletionNewParamsWebSearchOptions{SearchContextSize: "low"}}); err != nil {
		t.Fatal(err)
	}
	// Audio a model has no audio price for is refused, naming the part.
	before := len(up.Received())
	for _, tc := range []struct{ body, param string }{
		{strings.Replace(spoken, "gpt-4o-audio-preview", "gpt-4o-mini", 1), "messages[0].content[1]"},
		{`{"model":"gpt-4.1","modalities":["audio"],"audio":{"voice":"alloy","format":"wav"},"messages":[{"role":"user","content":"hi"}]}`, "modalities"},
	} {
		resp, out := g.post("/v1/chat/completions", "application/json", p.secret, strings.NewReader(tc.body))
		var e struct{ Error struct{ Param string } }
		_ = json.Unmarshal(out, &e)
		if resp.StatusCode != http.StatusBadRequest || e.Error.Param != tc.param {
			t.Errorf("%d %s; want 400 naming %s", resp.StatusCode, out, tc.param)
		}
	}
	if len(up.Received()) != before {
		t.Error("refused audio reached the vendor")
	}
	recs := recordsOf(g, p.accountID)
	if len(recs) != 3 {
		t.Fatalf("%d records; want 3", len(recs))
	}
	// The fake counts 100 audio tokens per input_audio part and makes the
	// whole spoken answer audio.
	if want := costOf(t, audio.Price, recs[0], 100, recs[0].CompletionTokens, 0); recs[0].Cost != want {
		t.Errorf("audio: charged %v; want %v at the audio prices", recs[0].Cost, want)
	}
	if want := costOf(t, search.Price, recs[1], 0, 0, search.ToolCalls["web_search"]); recs[1].Cost != want {
		t.Errorf("search model: charged %v; want %v with its search", recs[1].Cost, want)
	}
	if want := costOf(t, gpt41.Price, recs[2], 0, 0, gpt41.ToolCalls["web_search"]); recs[2].Cost != want {
		t.Errorf("web_search_options: charged %v; want %v with its search", recs[2].Cost, want)
	}
}

// usd parses a price.
func usd(t *testing.T, s string) money.Micros {
	t.Helper()
	m, err := money.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var _ = shared.ResponsesModel("")

// A background response settles its tool calls from the finished answer,
// at the terms it was admitted with, and its size is recorded for the
// requests that continue it.
func TestBackgroundToolsCharged(t *testing.T) {
	g, up := startBilled(t)
	gpt5 := listPrice(t, "gpt-5")
	ctx := context.Background()
	p := g.newPayer("default", 5*money.Unit, 0, time.Time{})
	c := g.client(p.secret)
	queued, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5", Background: oai.Bool(true),
		Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("news")},
		Tools: []responses.ToolUnionParam{responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch)}})
	if err != nil {
		t.Fatal(err)
	}
	if queued.Status != "queued" || !bytes.Contains(up.Last().Body, []byte(`"max_tool_calls":10`)) {
		t.Fatalf("status %q, upstream body %s; want queued, with max_tool_calls", queued.Status, up.Last().Body)
	}
	done, err := c.Responses.Get(ctx, queued.ID, responses.ResponseGetParams{})
	if err != nil || done.Status != "completed" {
		t.Fatalf("GET: %v, status %q", err, done.Status)
	}
	if _, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5", PreviousResponseID: oai.String(queued.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: oai.String("more")}}); err != nil {
		t.Fatal(err)
	}
	var settled *store.UsageRecord
	for _, r := range recordsOf(g, p.accountID) {
		if r.RequestID == queued.ID {
			settled = &r
		}
	}
	if settled == nil {
		t.Fatal("no settlement record")
	}
	if want := costOf(t, gpt5.Price, *settled, 0, 0, 3*usd(t, "0.01")); settled.Cost != want {
		t.Errorf("settled %v; want the tokens and 3 searches, %v", settled.Cost, want)
	}
	sr, err := g.app.Store().StoredResponse(ctx, queued.ID)
	if err != nil || !sr.Sized || sr.OutputTokens != done.Usage.OutputTokens || sr.Bound == 0 {
		t.Errorf("stored background response = %+v, %v; want its bound and the vendor's size", sr, err)
	}
}
