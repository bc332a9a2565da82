package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestVendorsExample loads examples/vendors.yaml with the real loader and
// checks that it validates and serves (patterns expanded) more than 300
// models the built-in catalog knows and can price.
func TestVendorsExample(t *testing.T) {
	anyEnv := func(name string) (string, bool) { return "test-" + name, true }
	c, ps, err := Load(filepath.Join("..", "..", "examples", "vendors.yaml"), anyEnv)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		t.Errorf("examples/vendors.yaml: %s", p)
	}
	cat, err := c.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	served, ps := c.ExpandModels(cat)
	if len(ps) != 0 {
		t.Errorf("expanding the patterns: %q", ps)
	}
	priced := map[string]bool{}
	for i, p := range c.Providers {
		for _, m := range served[i] {
			cm, ok := cat.Lookup(m.ID)
			switch {
			case !ok:
				t.Errorf("provider %s: model %q (line %d) is not in the catalog", p.Name, m.ID, m.Line)
			case !cm.Priced():
				t.Errorf("provider %s: model %q (line %d) has no price", p.Name, m.ID, m.Line)
			default:
				priced[m.ID] = true
			}
		}
	}
	if len(priced) <= 300 {
		t.Errorf("the sample serves %d distinct priced models, want more than 300", len(priced))
	}
	t.Logf("%d providers, %d distinct priced models", len(c.Providers), len(priced))
}

// TestExampleConfig loads modelgate.example.yaml: it must validate, with no
// warning but the one about the local server's empty key.
func TestExampleConfig(t *testing.T) {
	anyEnv := func(name string) (string, bool) { return "test-" + name, true }
	c, ps, err := Load(filepath.Join("..", "..", "modelgate.example.yaml"), anyEnv)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if !p.Warning || !strings.Contains(p.Message, `provider "local": api_key is empty`) {
			t.Errorf("modelgate.example.yaml: %s", p)
		}
	}
	cat, err := c.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	served, _ := c.ExpandModels(cat)
	for i, p := range c.Providers {
		if p.Type != "demo" && len(served[i]) == 0 {
			t.Errorf("provider %s serves nothing", p.Name)
		}
	}
}
