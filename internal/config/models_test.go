package config

import (
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/internal/catalog"
	"github.com/modelgate/modelgate/internal/money"
	"go.yaml.in/yaml/v3"
)

func TestAmountAndRatioYAML(t *testing.T) {
	tests := []struct {
		in     string
		amount money.Micros
		ratio  int64
		amtErr bool
		ratErr bool
	}{
		{in: "0.15", amount: 150_000, ratio: 150_000},
		{in: `"0.60"`, amount: 600_000, ratio: 600_000},
		{in: "12", amount: 12_000_000, ratio: 12_000_000},
		{in: "0.000001", amount: 1, ratio: 1},
		{in: "0.1", amount: 100_000, ratio: 100_000}, // not 0.1000000000000000055 (a float)
		{in: "-0.5", amount: -500_000, ratErr: true}, // negative amounts are Validate's business
		{in: "0.0000001", amtErr: true, ratErr: true},
		{in: "1e-3", amtErr: true, ratErr: true},
		{in: ".inf", amtErr: true, ratErr: true},
		{in: "cheap", amtErr: true, ratErr: true},
		{in: "{a: 1}", amtErr: true, ratErr: true},
	}
	for _, tt := range tests {
		var a struct {
			V Amount `yaml:"v"`
		}
		err := yaml.Unmarshal([]byte("v: "+tt.in), &a)
		if (err != nil) != tt.amtErr || (!tt.amtErr && money.Micros(a.V) != tt.amount) {
			t.Errorf("Amount %s = %d, %v; want %d (error %v)", tt.in, a.V, err, tt.amount, tt.amtErr)
		}
		var r struct {
			V Ratio `yaml:"v"`
		}
		err = yaml.Unmarshal([]byte("v: "+tt.in), &r)
		if (err != nil) != tt.ratErr || (!tt.ratErr && int64(r.V) != tt.ratio) {
			t.Errorf("Ratio %s = %d, %v; want %d (error %v)", tt.in, r.V, err, tt.ratio, tt.ratErr)
		}
	}
	out, err := yaml.Marshal(struct {
		A Amount
		R Ratio
	}{Amount(2_500_000), Ratio(800_000)})
	if err != nil || string(out) != "a: \"2.5\"\nr: \"0.8\"\n" {
		t.Errorf("Marshal = %q, %v", out, err)
	}
}

func TestLoadCatalogSettings(t *testing.T) {
	c, ps := mustLoad(t, "good/catalog.yaml", map[string]string{})
	if len(ps) != 0 {
		t.Fatalf("want no problems, got %q", ps)
	}
	if c.Billing.Currency != "EUR" || c.Billing.DemoCredit != 0 {
		t.Errorf("billing = %+v (an explicit demo_credit: 0 must stay 0)", c.Billing)
	}
	wantRatios := map[string]Ratio{"vip": 800_000, "plain": Ratio(money.PPM), "exact": 1_000_001}
	for name, want := range wantRatios {
		if got := c.Groups[name].PriceRatio; got != want {
			t.Errorf("group %s price_ratio = %d, want %d", name, got, want)
		}
	}
	if len(c.Models) != 2 || c.Models[0].Line != 8 || c.Models[1].Line != 12 {
		t.Fatalf("models = %+v", c.Models)
	}

	base := catalog.New([]catalog.Model{
		{ID: "gpt-4o-mini", OwnedBy: "openai", Modality: catalog.Chat, ContextWindow: 128000, MaxOutput: 16384, Tools: true, Input: 1, Output: 2, CachedInput: 3},
	})
	cat := base.With(c.CatalogOverrides())
	mini, _ := cat.Lookup("gpt-4o-mini")
	want := catalog.Model{ID: "gpt-4o-mini", OwnedBy: "openai", Modality: catalog.Chat, ContextWindow: 128000, MaxOutput: 16384, Tools: true,
		Input: 150_000, Output: 600_000, CachedInput: 75_000}
	if mini.ID != want.ID || mini.OwnedBy != want.OwnedBy || mini.ContextWindow != want.ContextWindow || !mini.Tools ||
		mini.Input != want.Input || mini.Output != want.Output || mini.CachedInput != want.CachedInput || mini.Free {
		t.Errorf("overridden gpt-4o-mini = %+v, want %+v", mini, want)
	}
	m, ok := cat.Lookup("my-model")
	if !ok || m.OwnedBy != "acme" || m.Modality != catalog.Image || m.ContextWindow != 0 || m.MaxOutput != 16384 || m.Free ||
		m.AudioPerSecond != 100 || m.VideoPerSecond != 100_000 || len(m.Images) != 2 || len(m.ImageSizes) != 2 {
		t.Fatalf("added model = %+v, %v", m, ok)
	}
	if p, ok := m.ImagePriceFor("1024x1024", ""); !ok || p != 40_000 {
		t.Errorf("image price = %d, %v", p, ok)
	}
	if p, ok := m.ImagePriceFor("512x512", ""); !ok || p != 1 {
		t.Errorf("image price = %d, %v", p, ok)
	}

	// "free: true" is explicit and touches nothing else.
	yes := true
	c2 := &Config{Models: []ModelConfig{{ID: "gpt-4o-mini", Free: &yes}}}
	o := c2.CatalogOverrides()
	if len(o) != 1 || o[0].Set != catalog.SetFree || !o[0].Model.Free {
		t.Errorf("free override = %+v", o)
	}
	if got, _ := base.With(o).Lookup("gpt-4o-mini"); !got.Free || got.Input != 1 {
		t.Errorf("free model = %+v", got)
	}

	// "reasoning: true" marks a model as one with hidden tokens, and
	// touches nothing else either.
	c3 := &Config{Models: []ModelConfig{{ID: "gpt-4o-mini", Reasoning: &yes}}}
	o = c3.CatalogOverrides()
	if len(o) != 1 || o[0].Set != catalog.SetReasoning || !o[0].Model.Reasoning {
		t.Errorf("reasoning override = %+v", o)
	}
	if got, _ := base.With(o).Lookup("gpt-4o-mini"); !got.Reasoning || got.Input != 1 || got.Free {
		t.Errorf("reasoning model = %+v", got)
	}
}

// The surcharge prices of the models section reach the catalog: audio
// prices, tiers and tool call prices replace the catalog's whole.
func TestSurchargeOverrides(t *testing.T) {
	yes := true
	in, out, a := Amount(40*money.Unit), Amount(80*money.Unit), Amount(10_000)
	c := &Config{Models: []ModelConfig{{ID: "gpt-5", AudioInput: &in, AudioOutput: &out, Searches: &yes,
		Tiers:     map[string]TierPriceConfig{"priority": {Input: Amount(3 * money.Unit), Output: Amount(30 * money.Unit)}},
		ToolCalls: map[string]Amount{"code_interpreter": Amount(30_000), "web_search": a}}}}
	base := catalog.New([]catalog.Model{{ID: "gpt-5", Modality: catalog.Chat, Input: 1, Output: 2,
		Tiers:     map[string]catalog.TierPrice{"flex": {Input: 1, Output: 1}, "priority": {Input: 5, Output: 5}},
		ToolCalls: map[string]money.Micros{"web_search_preview": 25_000}}})
	m, _ := base.With(c.CatalogOverrides()).Lookup("gpt-5")
	want := catalog.Model{ID: "gpt-5", Modality: catalog.Chat, Input: 1, Output: 2, AudioInput: 40 * money.Unit, AudioOutput: 80 * money.Unit,
		Tiers:     map[string]catalog.TierPrice{"priority": {Input: 3 * money.Unit, Output: 30 * money.Unit}},
		ToolCalls: map[string]money.Micros{"code_interpreter": 30_000, "web_search": 10_000}, Searches: true}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("overridden gpt-5 = %+v; want %+v", m, want)
	}
}
