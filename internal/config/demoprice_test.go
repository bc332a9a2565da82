package config

import "testing"

// A price given for a demo model bills it (the catalog makes it paid); a
// price its modality is not billed by leaves it free, with a warning.
func TestDemoModelPrices(t *testing.T) {
	tests := []struct {
		name, yaml string
		free       bool
		want       []want
	}{
		{"token prices bill a demo chat model", "models:\n  - {id: demo-chat, input: 1, output: 2}\n", false, nil},
		{"free: true keeps it free", "models:\n  - {id: demo-chat, input: 1, free: true}\n", true, nil},
		{"an image price bills the demo image model", "models:\n  - id: demo-image\n    images: [{size: 1024x1024, price: 0.02}]\n", false, nil},
		{"a token price cannot bill an image model", "models:\n  - {id: demo-image, output: 2}\n", true, []want{
			{4, true, `model "demo-image" is free and stays free: none of the prices given bills a model of modality image`}}},
		{"an audio price bills the demo transcriber", "models:\n  - {id: demo-transcribe, audio_per_second: 0.0001}\n", false, nil},
		{"no price, no change", "models:\n  - {id: demo-chat, context_window: 1000}\n", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ps, err := parse([]byte("providers:\n  - {name: demo, type: demo}\n"+tt.yaml), envOf(testEnv))
			if err != nil {
				t.Fatal(err)
			}
			checkProblems(t, ps, tt.want)
			cat, err := c.Catalog()
			if err != nil {
				t.Fatal(err)
			}
			id := c.Models[0].ID
			if m, _ := cat.Lookup(id); m.Free != tt.free || !m.Priced() {
				t.Errorf("%s: free %v (priced %v), want free %v", id, m.Free, m.Priced(), tt.free)
			}
		})
	}
}
