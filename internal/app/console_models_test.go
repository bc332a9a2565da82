package app_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/apikey"
	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/money"
	"github.com/modelgate/modelgate/internal/store"
)

// priceModel is a model of /console/api/models.
type priceModel struct {
	ID            string   `json:"id"`
	OwnedBy       string   `json:"owned_by"`
	Modality      string   `json:"modality"`
	ContextWindow *int64   `json:"context_window"`
	MaxOutput     *int64   `json:"max_output"`
	Capabilities  []string `json:"capabilities"`
	Groups        []map[string]string
}

// withPriceGroups adds a provider of media models and a group "pro" at
// 1.2× list price, and prices gpt-4o-mini at $2.50 in, $1.25 cached, $10
// out per million tokens.
func withPriceGroups(t *testing.T, public bool) func(*config.Config) {
	return func(c *config.Config) {
		c.Providers = append(c.Providers, config.Provider{Name: "media", Type: "openai", BaseURL: "http://127.0.0.1:1/v1", APIKey: "sk-media",
			Weight: 1, Timeout: config.Duration(time.Second), IdleTimeout: config.Duration(time.Second),
			Models: []config.ModelRef{{ID: "dall-e-3"}, {ID: "whisper-1"}, {ID: "sora-2"}, {ID: "text-embedding-3-small"}}})
		c.Groups["pro"] = config.Group{Models: []string{"gpt-4o-mini", "dall-e-3", "whisper-1", "sora-2", "text-embedding-*"},
			PriceRatio: config.Ratio(1_200_000)}
		in, cached, out := config.Amount(2_500_000), config.Amount(1_250_000), config.Amount(10*money.Unit)
		for i, m := range c.Models {
			if m.ID == "gpt-4o-mini" {
				c.Models = append(c.Models[:i], c.Models[i+1:]...)
				break
			}
		}
		c.Models = append(c.Models, config.ModelConfig{ID: "gpt-4o-mini", Input: &in, CachedInput: &cached, Output: &out})
		c.Console.PublicModels = public
		if ps := c.Validate(); config.HasErrors(ps) {
			t.Fatalf("config: %v", ps)
		}
	}
}

// priceList reads /console/api/models with client (nil: signed out).
func priceList(t *testing.T, url string, client *http.Client) (int, []priceModel) {
	t.Helper()
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Get(url + "/console/api/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var l struct{ Data []priceModel }
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &l); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
	}
	return resp.StatusCode, l.Data
}

func findModel(ms []priceModel, id string) (priceModel, bool) {
	for _, m := range ms {
		if m.ID == id {
			return m, true
		}
	}
	return priceModel{}, false
}

func groupOf(m priceModel, g string) (map[string]string, bool) {
	for _, p := range m.Groups {
		if p["group"] == g {
			return p, true
		}
	}
	return nil, false
}

// TestConsolePriceList reads the price list over the live config: the
// group's ratio applied exactly, only the groups open to the user (the
// signup groups, then those of their keys), unpriced units absent.
func TestConsolePriceList(t *testing.T) {
	e := startConsole(t, withPriceGroups(t, false))
	if status, _ := priceList(t, e.g.URL, nil); status != http.StatusUnauthorized {
		t.Fatalf("signed out: %d, want 401", status)
	}
	u := e.signIn(ghUser{ID: 7, Login: "buyer", Email: "buyer@example.com"})
	_, ms := priceList(t, e.g.URL, u.c)
	for i := 1; i < len(ms); i++ {
		if ms[i-1].ID >= ms[i].ID {
			t.Errorf("not sorted by id: %s before %s", ms[i-1].ID, ms[i].ID)
		}
	}
	for _, m := range ms {
		if _, ok := groupOf(m, "pro"); ok {
			t.Errorf("%s: group pro shown to a user without a pro key", m.ID)
		}
	}
	mini, ok := findModel(ms, "gpt-4o-mini")
	if !ok {
		t.Fatalf("gpt-4o-mini missing: %+v", ms)
	}
	if d, _ := groupOf(mini, "default"); d["input"] != "2.500000" || d["cached_input"] != "1.250000" || d["output"] != "10.000000" {
		t.Errorf("gpt-4o-mini default: %v", d)
	}
	if mini.OwnedBy != "openai" || mini.Modality != "chat" || mini.ContextWindow == nil || *mini.ContextWindow != 128000 ||
		strings.Join(mini.Capabilities, ",") != "tools,vision,web_search" {
		t.Errorf("gpt-4o-mini: %+v", mini)
	}

	// A key an operator put in group pro opens its prices to the user.
	st := e.g.app.Store()
	_, _, hash := apikey.Generate()
	k := store.Key{ID: app.NewID("key_"), AccountID: e.account(u.account).ID, Group: "pro", Prefix: "sk-mg-pro…", Hash: hash, CreatedAt: time.Now().UTC()}
	if err := st.CreateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	_, ms = priceList(t, e.g.URL, u.c)
	mini, _ = findModel(ms, "gpt-4o-mini")
	pro, ok := groupOf(mini, "pro")
	if !ok || pro["input"] != "3.000000" || pro["cached_input"] != "1.500000" || pro["output"] != "12.000000" {
		t.Errorf("gpt-4o-mini in pro (ratio 1.2): %v", pro)
	}
	if _, has := pro["image"]; has {
		t.Errorf("a chat model has an image price: %v", pro)
	}
	for _, tc := range []struct{ id, field, want string }{
		{"dall-e-3", "image", "0.048000"},               // 1024x1024 standard $0.04 × 1.2
		{"whisper-1", "per_second", "0.000120"},         // $0.0001 × 1.2
		{"sora-2", "per_second", "0.120000"},            // $0.10 × 1.2
		{"text-embedding-3-small", "input", "0.024000"}, // $0.02 × 1.2
	} {
		m, ok := findModel(ms, tc.id)
		p, _ := groupOf(m, "pro")
		if !ok || p[tc.field] != tc.want {
			t.Errorf("%s in pro: %v, want %s %s", tc.id, p, tc.field, tc.want)
		}
		for _, f := range []string{"input", "cached_input", "output", "image", "per_second"} {
			if _, has := p[f]; has && f != tc.field {
				t.Errorf("%s: unpriced %s present: %v", tc.id, f, p)
			}
		}
	}
	if m, _ := findModel(ms, "text-embedding-3-small"); m.MaxOutput != nil {
		t.Errorf("embedding max_output %v, want null", *m.MaxOutput)
	}

	// A revoked key opens nothing.
	if _, err := st.RevokeKey(context.Background(), k.ID, time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	if _, ms = priceList(t, e.g.URL, u.c); len(ms) > 0 {
		if m, _ := findModel(ms, "gpt-4o-mini"); len(m.Groups) != 2 {
			t.Errorf("after revoking the pro key: %+v", m.Groups)
		}
	}

	// The page shows the group's prices.
	status, page, _ := u.get("/console/models?group=default&q=mini")
	if status != http.StatusOK || !strings.Contains(page, "$2.50") || !strings.Contains(page, "gpt-4o-mini") || strings.Contains(page, "dall-e-3") {
		t.Errorf("models page: %d %.500s", status, page)
	}
}

// TestConsolePublicPriceList: with console.public_models anyone reads the
// signup groups' prices; without it the page sends them to sign in.
func TestConsolePublicPriceList(t *testing.T) {
	e := startConsole(t, withPriceGroups(t, true))
	status, ms := priceList(t, e.g.URL, nil)
	if status != http.StatusOK || len(ms) == 0 {
		t.Fatalf("public price list: %d %v", status, ms)
	}
	for _, m := range ms {
		for _, g := range m.Groups {
			if g["group"] != "default" && g["group"] != "basic" {
				t.Errorf("%s: group %s shown publicly", m.ID, g["group"])
			}
		}
	}
	resp, err := http.Get(e.g.URL + "/console/models")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `href="/console/"`) || strings.Contains(string(body), `action="/console/logout"`) {
		t.Errorf("public page: %d %.400s", resp.StatusCode, body)
	}

	off := startConsole(t, withPriceGroups(t, false))
	nf := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = nf.Get(off.g.URL + "/console/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/console/" {
		t.Errorf("private page signed out: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
}
