package surcharge

import (
	"errors"
	"testing"

	"github.com/modelgate/modelgate/internal/apierr"
	"github.com/modelgate/modelgate/internal/billing"
	"github.com/modelgate/modelgate/internal/money"
)

func usd(s string) money.Micros {
	m, err := money.Parse(s)
	if err != nil {
		panic(err)
	}
	return m
}

// gpt5 is priced as the catalog prices gpt-5.
var gpt5 = billing.ModelPrice{
	Price: billing.TokenPrice{Input: usd("1.25"), Output: usd("10"), CachedInput: usd("0.125")},
	Tiers: map[string]billing.TokenPrice{
		"priority": {Input: usd("2.5"), Output: usd("20"), CachedInput: usd("0.25")},
		"flex":     {Input: usd("0.625"), Output: usd("5"), CachedInput: usd("0.0625")},
	},
	ToolCalls: map[string]money.Micros{"web_search": usd("0.01"), "web_search_preview": usd("0.025")},
	Priced:    true,
}

var gptImage = billing.ModelPrice{Images: []billing.ImagePrice{
	{Size: "1024x1024", Quality: "low", Price: usd("0.011")},
	{Size: "1024x1024", Quality: "high", Price: usd("0.167")},
	{Size: "1536x1024", Quality: "high", Price: usd("0.25")},
}}

// images allows gpt-image-1 only, as a key's group would.
func images(model string) (billing.ModelPrice, error) {
	if model == "gpt-image-1" {
		return gptImage, nil
	}
	return billing.ModelPrice{}, apierr.ModelNotFound(model)
}

func TestNewRefuses(t *testing.T) {
	audio := gpt5
	audio.Price.AudioInput = usd("40")
	tests := []struct {
		name  string
		mp    billing.ModelPrice
		ask   Ask
		param string
	}{
		{"unpriced tier", gpt5, Ask{Tier: "scale"}, "service_tier"},
		{"tier of a model without tiers", billing.ModelPrice{Price: gpt5.Price}, Ask{Tier: "priority"}, "service_tier"},
		{"unpriced tool", gpt5, Ask{Tools: []Tool{{Param: "tools[0].type", Type: "web_search"}, {Param: "tools[1].type", Type: "code_interpreter"}}}, "tools[1].type"},
		{"mcp", gpt5, Ask{Tools: []Tool{{Param: "tools[0].type", Type: "mcp"}}}, "tools[0].type"},
		{"shell", gpt5, Ask{Tools: []Tool{{Param: "tools[3].type", Type: "shell"}}}, "tools[3].type"},
		{"image model the key may not use", gpt5, Ask{Tools: []Tool{{Param: "tools[0].type", Type: "image_generation", Model: "gpt-image-2"}}}, "tools[0].model"},
		{"image size without a price", gpt5, Ask{Tools: []Tool{{Param: "tools[0].type", Type: "image_generation", Size: "1024x1536"}}}, "tools[0].size"},
		{"audio in without a price", gpt5, Ask{AudioIn: "messages[0].content[1]"}, "messages[0].content[1]"},
		{"audio out without a price", audio, Ask{AudioOut: "modalities"}, "modalities"},
		{"web search options without a price", billing.ModelPrice{Price: gpt5.Price}, Ask{SearchOptions: true}, "web_search_options"},
	}
	for _, tc := range tests {
		_, err := New(tc.mp, tc.ask, images)
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Param != tc.param || ae.Status != 400 {
			t.Errorf("%s: New = %v; want a 400 naming %s", tc.name, err, tc.param)
		}
	}
}

func TestPlan(t *testing.T) {
	audio := gpt5
	audio.Price.AudioInput, audio.Price.AudioOutput = usd("40"), usd("80")
	search := billing.ModelPrice{Price: gpt5.Price, ToolCalls: map[string]money.Micros{"web_search": usd("0.05")}, Searches: true}
	tests := []struct {
		name  string
		mp    billing.ModelPrice
		ask   Ask
		price billing.TokenPrice
		fees  money.Micros
		calls int64
	}{
		{"nothing asked", gpt5, Ask{}, gpt5.Price, 0, 0},
		{"auto", gpt5, Ask{Tier: "auto"}, gpt5.Price, 0, 0},
		{"priority reserves the dearer tier", gpt5, Ask{Tier: "priority"}, gpt5.Tiers["priority"], 0, 0},
		{"flex reserves the default, which may run instead", gpt5, Ask{Tier: "flex"}, gpt5.Price, 0, 0},
		{"web search, no max_tool_calls: the default is sent", gpt5,
			Ask{Tools: []Tool{{Type: "web_search_2025_08_26"}}}, gpt5.Price, 10 * usd("0.01"), DefaultMaxToolCalls},
		{"the operator's default", gpt5, Ask{Tools: []Tool{{Type: "web_search"}}, DefaultCalls: 3}, gpt5.Price, 3 * usd("0.01"), 3},
		{"the client's max_tool_calls, dearest tool", gpt5,
			Ask{Tools: []Tool{{Type: "web_search"}, {Type: "web_search_preview"}}, MaxToolCalls: 4}, gpt5.Price, 4 * usd("0.025"), 0},
		{"image generation, auto size: the dearest image", gpt5,
			Ask{Tools: []Tool{{Type: "image_generation"}}, MaxToolCalls: 2}, gpt5.Price, 2 * usd("0.25"), 0},
		{"image generation at a size and quality", gpt5,
			Ask{Tools: []Tool{{Type: "image_generation", Size: "1024x1024", Quality: "low"}}, MaxToolCalls: 1}, gpt5.Price, usd("0.011"), 0},
		{"audio in and out at the dearer prices", audio, Ask{AudioIn: "x", AudioOut: "modalities"},
			billing.TokenPrice{Input: usd("40"), Output: usd("80"), CachedInput: usd("0.125"), AudioInput: usd("40"), AudioOutput: usd("80")}, 0, 0},
		{"a searching model, n=2", search, Ask{Choices: 2}, gpt5.Price, 2 * usd("0.05"), 0},
	}
	for _, tc := range tests {
		p, err := New(tc.mp, tc.ask, images)
		if err != nil {
			t.Errorf("%s: New: %v", tc.name, err)
			continue
		}
		if p.Price != tc.price || p.Fees != tc.fees || p.Calls != tc.calls {
			t.Errorf("%s: plan = price %+v, fees %v, calls %d; want %+v, %v, %d", tc.name, p.Price, p.Fees, p.Calls, tc.price, tc.fees, tc.calls)
		}
	}
}

func TestSettle(t *testing.T) {
	web := Ask{Tools: []Tool{{Type: "web_search"}, {Type: "image_generation", Quality: "high"}}}
	tests := []struct {
		name  string
		ask   Ask
		used  Used
		price billing.TokenPrice
		fees  money.Micros
	}{
		{"default, nothing used", Ask{}, Used{}, gpt5.Price, 0},
		{"priority asked, ran at default", Ask{Tier: "priority"}, Used{Tier: "default"}, gpt5.Price, 0},
		{"priority asked, ran at priority", Ask{Tier: "priority"}, Used{Tier: "priority"}, gpt5.Tiers["priority"], 0},
		{"priority asked, tier not reported", Ask{Tier: "priority"}, Used{}, gpt5.Tiers["priority"], 0},
		{"auto, the vendor says priority", Ask{}, Used{Tier: "priority"}, gpt5.Tiers["priority"], 0},
		{"an unknown tier reported", Ask{}, Used{Tier: "scale"}, gpt5.Price, 0},
		{"three searches", web, Used{Calls: map[string]int64{"web_search_call": 3}}, gpt5.Price, 3 * usd("0.01")},
		{"two images, one of them reported", web, Used{Images: []Image{{Size: "1024x1024", Quality: "high"}, {}}}, gpt5.Price, usd("0.167") + usd("0.25")},
	}
	for _, tc := range tests {
		p, err := New(gpt5, tc.ask, images)
		if err != nil {
			t.Fatalf("%s: New: %v", tc.name, err)
		}
		price, fees := p.Settle(tc.used)
		if price != tc.price || fees != tc.fees {
			t.Errorf("%s: Settle = %+v, %v; want %+v, %v", tc.name, price, fees, tc.price, tc.fees)
		}
	}
}

func TestScan(t *testing.T) {
	obj := []byte(`{"id":"resp_1","service_tier":"priority","output":[
		{"type":"reasoning","id":"rs_1"},
		{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"a"}},
		{"type":"web_search_call","id":"ws_2","status":"completed"},
		{"type":"web_search_call","id":"ws_3","status":"failed"},
		{"type":"image_generation_call","id":"ig_1","status":"completed","size":"1024x1024","quality":"high","result":"aGk="},
		{"type":"code_interpreter_call","id":"ci_1","container_id":"cntr_a"},
		{"type":"code_interpreter_call","id":"ci_2","container_id":"cntr_a"},
		{"type":"code_interpreter_call","id":"ci_3","container_id":"cntr_b"},
		{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"web_search_call"}]}]}`)
	u := Scan(obj)
	if u.Tier != "priority" || u.Calls["web_search_call"] != 2 || u.Calls["code_interpreter_call"] != 2 || len(u.Calls) != 2 ||
		len(u.Images) != 1 || u.Images[0] != (Image{Size: "1024x1024", Quality: "high"}) {
		t.Errorf("Scan = %+v", u)
	}
	if u := Scan([]byte(`{"status":"queued","output":[]}`)); u.Tier != "" || u.Calls != nil || u.Images != nil || u.containers != nil {
		t.Errorf("Scan of an empty answer = %+v", u)
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"web_search": "web_search", "web_search_2025_08_26": "web_search", "web_search_preview_2025_03_11": "web_search_preview",
		"image_generation": "image_generation", "x_2025_08_2a": "x_2025_08_2a", "_2025_08_26": "_2025_08_26",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q; want %q", in, got, want)
		}
	}
}

// A plan stored as terms settles as the plan itself does.
func TestTermsRoundTrip(t *testing.T) {
	ask := Ask{Tier: "priority", Tools: []Tool{{Type: "web_search"}, {Type: "image_generation", Quality: "high"}}}
	p, err := New(gpt5, ask, images)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	q, err := Unmarshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []Used{{}, {Tier: "default"}, {Tier: "priority", Calls: map[string]int64{"web_search_call": 2},
		Images: []Image{{Size: "1024x1024", Quality: "high"}, {}}}} {
		wp, wf := p.Settle(u)
		gp, gf := q.Settle(u)
		if wp != gp || wf != gf {
			t.Errorf("Settle(%+v) after a round trip = %+v, %v; want %+v, %v", u, gp, gf, wp, wf)
		}
	}
	if _, err := Unmarshal("{"); err == nil {
		t.Error("Unmarshal of broken terms: no error")
	}
}

// TestCountedSearches: web_search_options on a model that does not search
// on every request reserves the tool calls bound and is charged the
// searches the vendor counts; a vendor that does not count pays one per
// choice, and a searching model keeps its one search per choice.
func TestCountedSearches(t *testing.T) {
	claude := billing.ModelPrice{Price: gpt5.Price, ToolCalls: map[string]money.Micros{"web_search": usd("0.01")}}
	searching := billing.ModelPrice{Price: gpt5.Price, ToolCalls: map[string]money.Micros{"web_search": usd("0.05")}, Searches: true}
	tests := []struct {
		name    string
		mp      billing.ModelPrice
		ask     Ask
		reserve money.Micros
		used    Used
		fees    money.Micros
	}{
		{"three searches counted", claude, Ask{SearchOptions: true}, 10 * usd("0.01"), Used{Searches: 3, SearchesCounted: true}, 3 * usd("0.01")},
		{"none counted", claude, Ask{SearchOptions: true}, 10 * usd("0.01"), Used{SearchesCounted: true}, 0},
		{"not counted: one per choice", claude, Ask{SearchOptions: true}, 10 * usd("0.01"), Used{}, usd("0.01")},
		{"the operator's bound", claude, Ask{SearchOptions: true, DefaultCalls: 4}, 4 * usd("0.01"), Used{Searches: 2, SearchesCounted: true}, 2 * usd("0.01")},
		{"a searching model ignores counts", searching, Ask{SearchOptions: true}, usd("0.05"), Used{Searches: 3, SearchesCounted: true}, usd("0.05")},
	}
	for _, tc := range tests {
		p, err := New(tc.mp, tc.ask, images)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if p.Fees != tc.reserve {
			t.Errorf("%s: reserves %v; want %v", tc.name, p.Fees, tc.reserve)
		}
		if _, fees := p.Settle(tc.used); fees != tc.fees {
			t.Errorf("%s: charged %v; want %v", tc.name, fees, tc.fees)
		}
		q, err := Unmarshal(must(p.Marshal()))
		if err != nil {
			t.Fatal(err)
		}
		if _, fees := q.Settle(tc.used); fees != tc.fees {
			t.Errorf("%s: after a round trip charged %v; want %v", tc.name, fees, tc.fees)
		}
	}
	if _, err := New(billing.ModelPrice{Price: gpt5.Price}, Ask{SearchOptions: true}, images); err == nil {
		t.Error("an unpriced search admitted")
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}
