package config

import (
	"path/filepath"
	"testing"

	"github.com/modelgate/modelgate/internal/catalog"
)

// TestVendorsExample loads examples/vendors.yaml with the real loader and
// checks that it validates and lists more than 200 models the built-in
// catalog knows and can price.
func TestVendorsExample(t *testing.T) {
	anyEnv := func(name string) (string, bool) { return "test-" + name, true }
	c, ps, err := Load(filepath.Join("..", "..", "examples", "vendors.yaml"), anyEnv)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		t.Errorf("examples/vendors.yaml: %s", p)
	}
	builtin, err := catalog.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	cat := builtin.With(c.CatalogOverrides())
	priced := map[string]bool{}
	for _, p := range c.Providers {
		for _, m := range p.Models {
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
	if len(priced) <= 200 {
		t.Errorf("the sample lists %d distinct priced models, want more than 200", len(priced))
	}
	t.Logf("%d providers, %d distinct priced models", len(c.Providers), len(priced))
}
