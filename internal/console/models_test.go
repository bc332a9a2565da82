package console

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// fixedPrices is a PriceList of fixed models.
type fixedPrices []ModelPrice

func (f fixedPrices) PriceList() []ModelPrice { return slices.Clone(f) }

func micros(v money.Micros) *money.Micros { return &v }

// samplePrices: chat models of two vendors, an image and an audio model,
// in groups default, pro and vip (vip open to nobody by default).
func samplePrices() fixedPrices {
	chat := func(g string, in, cached, out money.Micros) GroupPrice {
		p := GroupPrice{Group: g, Input: micros(in), Output: micros(out)}
		if cached > 0 {
			p.CachedInput = micros(cached)
		}
		return p
	}
	return fixedPrices{
		{ID: "zeta-chat", OwnedBy: "zeta", Modality: "chat", ContextWindow: 32000, Capabilities: []string{"tools"},
			Groups: []GroupPrice{chat("default", 500_000, 0, 1_500_000)}},
		{ID: "alpha-large", OwnedBy: "alpha", Modality: "chat", ContextWindow: 200000, MaxOutput: 8192, Capabilities: []string{"tools", "vision"},
			Groups: []GroupPrice{chat("default", 3_000_000, 300_000, 15_000_000), chat("pro", 2_400_000, 240_000, 12_000_000), chat("vip", 1, 1, 1)}},
		{ID: "alpha-mini", OwnedBy: "alpha", Modality: "chat", Groups: []GroupPrice{chat("default", 150_000, 0, 600_000), chat("pro", 120_000, 0, 480_000)}},
		{ID: "painter", OwnedBy: "alpha", Modality: "image", Groups: []GroupPrice{{Group: "default", Image: micros(40_000)}}},
		{ID: "listener", OwnedBy: "zeta", Modality: "audio", Groups: []GroupPrice{{Group: "pro", PerSecond: micros(100)}}},
		{ID: "secret-model", OwnedBy: "zeta", Modality: "chat", Groups: []GroupPrice{chat("vip", 1, 0, 1)}},
	}
}

type apiModels struct {
	Data []struct {
		ID            string              `json:"id"`
		OwnedBy       string              `json:"owned_by"`
		Modality      string              `json:"modality"`
		ContextWindow *int64              `json:"context_window"`
		MaxOutput     *int64              `json:"max_output"`
		Capabilities  []string            `json:"capabilities"`
		Groups        []map[string]string `json:"groups"`
	}
}

func TestModelsAPI(t *testing.T) {
	e := newEnv(t)
	e.c.Prices = samplePrices()
	b := e.browser()
	if r := b.do("GET", "/console/api/models", "", nil); r.status != http.StatusUnauthorized || r.code() != CodeNotSignedIn {
		t.Fatalf("signed out: %d %s", r.status, r.body)
	}
	b.signIn("github")
	r := b.do("GET", "/console/api/models", "", nil)
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var got apiModels
	r.json(t, &got)
	var ids []string
	for _, m := range got.Data {
		ids = append(ids, m.ID)
	}
	if want := []string{"alpha-large", "alpha-mini", "listener", "painter", "zeta-chat"}; !slices.Equal(ids, want) {
		t.Fatalf("ids %v, want %v (sorted, secret-model left out)", ids, want)
	}
	large := got.Data[0]
	if len(large.Groups) != 2 || large.Groups[0]["group"] != "default" || large.Groups[1]["group"] != "pro" {
		t.Errorf("alpha-large groups %v: want default and pro, not vip", large.Groups)
	}
	if g := large.Groups[1]; g["input"] != "2.400000" || g["cached_input"] != "0.240000" || g["output"] != "12.000000" {
		t.Errorf("alpha-large pro %v", g)
	}
	if *large.ContextWindow != 200000 || *large.MaxOutput != 8192 || strings.Join(large.Capabilities, ",") != "tools,vision" {
		t.Errorf("alpha-large %+v", large)
	}
	// Unpriced units are absent, unknown limits null, capabilities [].
	raw := string(r.body)
	mini := regexp.MustCompile(`\{"id":"alpha-mini"[^\]]*\]`).FindString(raw)
	if !strings.Contains(mini, `"context_window":null`) || !strings.Contains(mini, `"max_output":null`) || !strings.Contains(mini, `"capabilities":[]`) {
		t.Errorf("alpha-mini: %s", mini)
	}
	for _, m := range got.Data {
		for _, g := range m.Groups {
			for k := range g {
				if k != "group" && !regexp.MustCompile(`^\d+\.\d{6}$`).MatchString(g[k]) {
					t.Errorf("%s %s: %s = %q", m.ID, g["group"], k, g[k])
				}
			}
			if m.ID == "alpha-mini" {
				if _, ok := g["cached_input"]; ok {
					t.Errorf("alpha-mini has a cached price: %v", g)
				}
			}
			if m.ID == "painter" && (len(g) != 2 || g["image"] != "0.040000") {
				t.Errorf("painter %v", g)
			}
		}
	}

	// A key in vip (an operator's doing) opens vip's prices; revoked, it
	// no longer does.
	me := b.me()
	acct, err := e.st.AccountByName(context.Background(), me.Account)
	if err != nil {
		t.Fatal(err)
	}
	k := store.Key{ID: newID("key_"), AccountID: acct.ID, Group: "vip", Prefix: "sk-mg-vip…", Hash: []byte("h-vip"), CreatedAt: e.clock.Now()}
	if err := e.st.CreateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	r = b.do("GET", "/console/api/models", "", nil)
	got = apiModels{}
	r.json(t, &got)
	if len(got.Data) != 6 || got.Data[4].ID != "secret-model" || len(got.Data[0].Groups) != 3 || got.Data[0].Groups[2]["group"] != "vip" {
		t.Errorf("with a vip key: %s", r.body)
	}
	if _, err := e.st.RevokeKey(context.Background(), k.ID, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if r = b.do("GET", "/console/api/models", "", nil); strings.Contains(string(r.body), "vip") {
		t.Errorf("revoked vip key still opens vip: %s", r.body)
	}

	// Public: readable signed out, at the signup groups' prices.
	e.c.PublicModels = true
	r = e.browser().do("GET", "/console/api/models", "", nil)
	if r.status != http.StatusOK || strings.Contains(string(r.body), "vip") || !strings.Contains(string(r.body), `"group":"pro"`) {
		t.Errorf("public: %d %s", r.status, r.body)
	}
}

// modelRows are the model ids of a rendered Models page, in order.
func modelRows(body string) []string {
	var ids []string
	for _, m := range regexp.MustCompile(`<span class="model-id mono">([^<]+)</span>`).FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func TestModelsPage(t *testing.T) {
	e := newEnv(t)
	e.c.Prices = samplePrices()
	b := e.browser()
	nf := b.noFollow()
	resp, err := nf.Get(e.srv.URL + "/console/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/console/" {
		t.Fatalf("signed out: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	b.signIn("github")
	for _, tc := range []struct {
		name, query string
		status      int
		want        []string
		has         []string
	}{
		{"default", "", 200, []string{"alpha-large", "alpha-mini", "painter", "zeta-chat"}, []string{"$3.00", "$0.30", "$15.00", "$0.04 / image", `<option value="pro">`}},
		{"pro group", "group=pro", 200, []string{"alpha-large", "alpha-mini", "listener"}, []string{"$2.40", "$0.0001 / second", `<option value="pro" selected>`}},
		{"vendor", "vendor=zeta", 200, []string{"zeta-chat"}, []string{`<option value="zeta" selected>`}},
		{"modality", "modality=image", 200, []string{"painter"}, nil},
		{"search", "q=ALPHA", 200, []string{"alpha-large", "alpha-mini"}, []string{`value="ALPHA"`}},
		{"sort input", "sort=input", 200, []string{"alpha-mini", "zeta-chat", "alpha-large", "painter"}, nil},
		{"sort output", "sort=output&vendor=alpha", 200, []string{"alpha-mini", "alpha-large", "painter"}, nil},
		{"no match", "q=nothing", 200, nil, []string{"No models match"}},
		{"closed group", "group=vip", 400, []string{"alpha-large", "alpha-mini", "painter", "zeta-chat"}, []string{"not open to you"}},
		{"bad sort", "sort=price", 400, []string{"alpha-large", "alpha-mini", "painter", "zeta-chat"}, []string{"Unknown order"}},
		{"long search", "q=" + strings.Repeat("a", 101), 400, []string{"alpha-large", "alpha-mini", "painter", "zeta-chat"}, []string{"too long"}},
		{"markup", "q=" + url.QueryEscape("<b>x"), 200, nil, []string{`value="&lt;b&gt;x"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := b.do("GET", "/console/models?"+tc.query, "", nil)
			body := string(r.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %.300s", r.status, tc.status, body)
			}
			if got := modelRows(body); !slices.Equal(got, tc.want) {
				t.Errorf("rows %v, want %v", got, tc.want)
			}
			for _, h := range tc.has {
				if !strings.Contains(body, h) {
					t.Errorf("missing %q", h)
				}
			}
			if strings.Contains(body, "secret-model") || strings.Contains(body, `value="vip"`) {
				t.Error("vip shown")
			}
		})
	}
	// In Chinese.
	r := b.do("GET", "/console/models?lang=zh-CN", "", nil)
	if !strings.Contains(string(r.body), "default 分组的价格") {
		t.Errorf("zh-CN: %.300s", r.body)
	}

	// Public: signed out, signup groups only, a call to sign in.
	e.c.PublicModels = true
	r = e.browser().do("GET", "/console/models?group=pro", "", nil)
	if body := string(r.body); r.status != http.StatusOK || !strings.Contains(body, "Sign in to get started") ||
		strings.Contains(body, `action="/console/logout"`) || !slices.Equal(modelRows(body), []string{"alpha-large", "alpha-mini", "listener"}) {
		t.Errorf("public: %d %v %.300s", r.status, modelRows(body), body)
	}
}
