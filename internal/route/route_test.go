package route

import "testing"

func TestPick(t *testing.T) {
	r := New([]Deployment{
		{Provider: "backup", Model: "m", Upstream: "m-b", Priority: 1, Weight: 100},
		{Provider: "a", Model: "m", Upstream: "m-a", Priority: 0, Weight: 3},
		{Provider: "b", Model: "m", Upstream: "m-b", Priority: 0, Weight: 1},
		{Provider: "a", Model: "solo", Upstream: "solo", OwnedBy: "acme", Created: 7},
	})
	counts := map[string]int{}
	for range 4000 {
		d, ok := r.Pick("m")
		if !ok {
			t.Fatal("m not routable")
		}
		counts[d.Provider]++
	}
	if counts["backup"] != 0 {
		t.Errorf("lower tier was used %d times while the first tier exists", counts["backup"])
	}
	// Weight 3:1 → expect ~3000:1000; bounds are many standard deviations wide.
	if counts["a"] < 2700 || counts["a"] > 3300 || counts["b"] < 700 || counts["b"] > 1300 {
		t.Errorf("weights not respected: %v", counts)
	}
	if _, ok := r.Pick("nope"); ok {
		t.Error("unknown model routed")
	}
	if d, _ := r.Pick("solo"); d.Weight != 1 {
		t.Errorf("zero weight not defaulted to 1: %d", d.Weight)
	}
	ms := r.Models()
	if len(ms) != 2 || ms[0].ID != "m" || ms[1].ID != "solo" {
		t.Fatalf("Models() = %v", ms)
	}
	if m, ok := r.Model("solo"); !ok || m.OwnedBy != "acme" || m.Created != 7 {
		t.Errorf("Model(solo) = %v, %v", m, ok)
	}
}
