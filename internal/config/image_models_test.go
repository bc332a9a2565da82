package config

import (
	"testing"

	"github.com/modelgate/modelgate/internal/catalog"
)

// Image token prices reach the catalog through the models section, and
// only the keys written change.
func TestImageTokenPriceSettings(t *testing.T) {
	yaml := `providers:
  - {name: demo, type: demo}
models:
  - id: my-image
    owned_by: acme
    modality: image
    input: 4
    cached_input: 1
    image_input: 8
    cached_image_input: 2
    image_output: 32
  - id: gpt-image-1
    image_output: 50
`
	c, ps, err := parse([]byte(yaml), envOf(testEnv))
	if err != nil {
		t.Fatal(err)
	}
	checkProblems(t, ps, nil)
	cat, err := c.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := cat.Lookup("my-image")
	if m.Input != 4_000_000 || m.CachedInput != 1_000_000 || m.ImageInput != 8_000_000 || m.CachedImageInput != 2_000_000 ||
		m.ImageOutput != 32_000_000 || !m.TokenPricedImages() || !m.Priced() {
		t.Errorf("my-image = %+v", m)
	}
	g, _ := cat.Lookup("gpt-image-1")
	if g.ImageOutput != 50_000_000 || g.ImageInput != 10_000_000 || g.Input != 5_000_000 || len(g.Images) != 9 {
		t.Errorf("gpt-image-1 = %+v (only image_output may change)", g)
	}
	o := (&Config{Models: []ModelConfig{{ID: "x", ImageInput: new(Amount), CachedImageInput: new(Amount), ImageOutput: new(Amount)}}}).CatalogOverrides()
	if want := catalog.SetImageInput | catalog.SetCachedImageInput | catalog.SetImageOutput; len(o) != 1 || o[0].Set != want {
		t.Errorf("overrides = %+v", o)
	}
}

func TestImageTokenPriceProblems(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []want
	}{
		{"negative", "models:\n  - id: gpt-image-1\n    image_output: -1\n    image_input: -2\n    cached_image_input: -3\n", []want{
			{5, false, `model "gpt-image-1": image_output must not be negative, got -1`},
			{6, false, `model "gpt-image-1": image_input must not be negative, got -2`},
			{7, false, `model "gpt-image-1": cached_image_input must not be negative, got -3`},
		}},
		{"no text price", "models:\n  - id: new-image\n    modality: image\n    image_input: 8\n    image_output: 32\n", []want{
			{4, false, `model "new-image": an image model priced per token needs input (text), image_input and image_output above 0; missing: input`}}},
		{"a zeroed built-in text price", "models:\n  - id: gpt-image-1\n    input: 0\n", []want{
			{4, false, `missing: input`}}},
		{"per-image prices do not excuse it", "models:\n  - id: new-image\n    modality: image\n    image_output: 32\n" +
			"    images: [{size: 1024x1024, price: 0.04}]\n", []want{{4, false, `missing: input, image_input`}}},
		{"a free model needs no price", "models:\n  - id: new-image\n    modality: image\n    image_output: 32\n    free: true\n", nil},
		{"on a chat model", "models:\n  - id: gpt-4o-mini\n    image_output: 32\n", []want{
			{4, true, `model "gpt-4o-mini": image_input, cached_image_input and image_output price image models only; this one is a chat model`}}},
		{"complete", "models:\n  - id: gpt-image-1\n    input: 6\n    image_input: 11\n    image_output: 41\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ps, err := parse([]byte("providers:\n  - {name: demo, type: demo}\n"+tt.yaml), envOf(testEnv))
			if err != nil {
				t.Fatal(err)
			}
			checkProblems(t, ps, tt.want)
		})
	}
}
