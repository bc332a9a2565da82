package config

import (
	"maps"
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/internal/catalog"
)

func TestVideoModelSettings(t *testing.T) {
	yaml := `providers:
  - {name: oa, type: openai, base_url: https://api.openai.com/v1, api_key: "${KEY}", models: [my-video, sora-2]}
models:
  - id: my-video
    owned_by: acme
    modality: video
    video_per_second: 0.2
    video_prices: {1920x1080: 0.3, 1280x720: 0.25}
    sizes: [1280x720, 1920x1080]
    video_durations: [4, 8]
    video_duration_map: {5: 4, 10: 8}
  - id: sora-2
    video_per_second: 0.12
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
	want := catalog.Model{ID: "my-video", OwnedBy: "acme", Modality: catalog.Video, VideoPerSecond: 200_000,
		VideoPrices:    []catalog.VideoPrice{{Size: "1280x720", PerSecond: 250_000}, {Size: "1920x1080", PerSecond: 300_000}}, // sorted by size
		ImageSizes:     []string{"1280x720", "1920x1080"},
		VideoDurations: []int{4, 8}, VideoDurationMap: map[int]int{5: 4, 10: 8}}
	if got, _ := cat.Lookup("my-video"); !reflect.DeepEqual(got, want) {
		t.Errorf("my-video =\n %+v\nwant\n %+v", got, want)
	}
	// An override of one price keeps the built-in sizes, durations and map.
	sora, _ := cat.Lookup("sora-2")
	builtin, _ := builtinCatalog()
	orig, _ := builtin.Lookup("sora-2")
	if sora.VideoPerSecond != 120_000 || !reflect.DeepEqual(sora.ImageSizes, orig.ImageSizes) ||
		!reflect.DeepEqual(sora.VideoDurations, orig.VideoDurations) || !maps.Equal(sora.VideoDurationMap, orig.VideoDurationMap) {
		t.Errorf("sora-2 = %+v", sora)
	}

	o := (&Config{Models: []ModelConfig{{ID: "x", Sizes: []string{"1x1"}, VideoDurations: []int{4},
		VideoDurationMap: map[int]int{5: 4}, VideoPrices: map[string]Amount{"1x1": 1}}}}).CatalogOverrides()
	if wantSet := catalog.SetImageSizes | catalog.SetVideoDurations | catalog.SetVideoDurationMap | catalog.SetVideoPrices; len(o) != 1 || o[0].Set != wantSet {
		t.Errorf("overrides = %+v", o)
	}
}

func TestVideoModelProblems(t *testing.T) {
	video := func(lines string) string { // one added video model, served by oa
		return "models:\n  - id: v\n    modality: video\n" + lines
	}
	served := "providers:\n  - {name: oa, type: openai, base_url: https://api.openai.com/v1, api_key: \"${KEY}\", models: [v, sora-2]}\n"
	valid := "    video_per_second: 0.1\n    sizes: [1280x720]\n    video_durations: [4, 8]\n"
	tests := []struct {
		name, yaml string
		want       []want // every problem, in order; the models entry starts on line 4
	}{
		{"valid", served + video(valid), nil},
		{"free needs no price", served + video("    free: true\n    sizes: [1280x720]\n    video_durations: [5]\n"), nil},
		{"no durations", served + video("    video_per_second: 0.1\n    sizes: [1280x720]\n"),
			[]want{{4, false, `model "v" (video, served by provider "oa"): video_durations: a video model needs at least one duration`}}},
		{"no sizes", served + video("    video_per_second: 0.1\n    video_durations: [4]\n"),
			[]want{{4, false, `model "v" (video, served by provider "oa"): sizes: a video model needs at least one size`}}},
		{"no price", served + video("    sizes: [1280x720]\n    video_durations: [4]\n"),
			[]want{{4, false, "video_per_second: no price per second for size 1280x720"}}},
		{"a size without a price", served + video("    video_prices: {1280x720: 0.1}\n    sizes: [1280x720, 720x1280]\n    video_durations: [4]\n"),
			[]want{{4, false, "video_per_second: no price per second for size 720x1280"}}},
		{"duration out of range", served + video("    video_per_second: 0.1\n    sizes: [1280x720]\n    video_durations: [4, 0, 61]\n"), []want{
			{8, false, `model "v": video_durations: 0 must be from 1 to 60 seconds`},
			{8, false, `model "v": video_durations: 61 must be from 1 to 60 seconds`}}},
		{"duplicate duration", served + video("    video_per_second: 0.1\n    sizes: [1280x720]\n    video_durations: [4, 4]\n"),
			[]want{{8, false, "video_durations: duration 4 is listed twice"}}},
		{"bad size", served + video("    video_per_second: 0.1\n    sizes: [720p]\n    video_durations: [4]\n"),
			[]want{{7, false, `model "v": size "720p" must look like 1280x720`}}},
		{"map to a length not made", served + video(valid+"    video_duration_map: {10: 6}\n"),
			[]want{{9, false, "video_duration_map: 10 s maps to 6 s, which is not one of the durations [4 8]"}}},
		{"map up", served + video(valid+"    video_duration_map: {3: 4}\n"),
			[]want{{9, false, "video_duration_map: 3 s maps to 4 s: a client would pay for more seconds"}}},
		{"map out of range", served + video(valid+"    video_duration_map: {90: 8}\n"),
			[]want{{9, false, `model "v": video_duration_map: 90: 8: seconds must be from 1 to 60`}}},
		{"map not numbers", served + video(valid+"    video_duration_map: {five: 4}\n"),
			[]want{{9, false, "expected an integer, got a string `five`"}}},
		{"price for a size not allowed", served + video(valid+"    video_prices: {1920x1080: 0.2}\n"),
			[]want{{9, false, `video_prices: price for size "1920x1080", which is not one of the model's sizes`}}},
		{"negative size price", served + video(valid+"    video_prices: {1280x720: -0.2}\n"),
			[]want{{9, false, `model "v": video_prices: the price of 1280x720 must not be negative, got -0.2`}}},
		{"bad price size", served + video(valid+"    video_prices: {big: 0.2}\n"), []want{
			{9, false, `model "v": video_prices: size "big" must look like 1280x720`}}},
		{"negative price", served + video("    video_per_second: -0.1\n    sizes: [1280x720]\n    video_durations: [4]\n"),
			[]want{{6, false, `model "v": video_per_second must not be negative, got -0.1`}}},
		// A built-in model broken by an override is reported at the override.
		{"override breaks a built-in", served + "models:\n  - id: sora-2\n    video_durations: [4, 8]\n",
			[]want{{4, false, `model "sora-2" (video, served by provider "oa"): video_duration_map: 15 s maps to 12 s, which is not one of the durations [4 8]`}}},
		{"override mends it", served + "models:\n  - id: sora-2\n    video_durations: [4, 8]\n    video_duration_map: {5: 4, 10: 8}\n", nil},
		// The demo provider without a list serves every demo model.
		{"demo model broken", "providers:\n  - {name: demo, type: demo}\nmodels:\n  - id: demo-video-portrait\n    sizes: []\n",
			[]want{{5, false, `model "demo-video-portrait" (video, served by provider "demo"): sizes: a video model needs at least one size`}}},
		// Only served models are held to the rules.
		{"broken but not served", "providers:\n  - {name: oa, type: openai, base_url: https://api.openai.com/v1, api_key: \"${KEY}\", models: [sora-2]}\n" +
			video("    sizes: [1280x720]\n"), nil},
		{"served by a pattern skips video", "providers:\n  - {name: g, type: gemini, api_key: \"${KEY}\", models: [\"gemini-2.5-*\"]}\n" +
			"models:\n  - id: veo-x\n    owned_by: google\n    modality: video\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ps, err := parse([]byte(tt.yaml), envOf(testEnv))
			if err != nil {
				t.Fatal(err)
			}
			checkProblems(t, ps, tt.want)
		})
	}
}

// TestVideoModelsNotConfigured covers a served video model the models
// section does not name (a built-in one): its issues point at the
// provider's model line.
func TestVideoModelsNotConfigured(t *testing.T) {
	c := &Config{Providers: []Provider{{Name: "oa", Type: "openai", Line: 2}, {Name: "demo", Type: "demo", Line: 7}}}
	cat := catalog.New([]catalog.Model{
		{ID: "bad", OwnedBy: "openai", Modality: catalog.Video, VideoPerSecond: 1, ImageSizes: []string{"1x1"}},
		{ID: "demo-bad", OwnedBy: "demo", Modality: catalog.Video, Free: true, VideoDurations: []int{5}},
		{ID: "chat", OwnedBy: "openai", Modality: catalog.Chat},
	})
	v := &validator{c: c}
	v.videoModels(cat, [][]ModelRef{{{ID: "bad", Line: 5}, {ID: "chat", Line: 6}, {ID: "unknown", Line: 7}}, nil})
	checkProblems(t, sortProblems(v.problems), []want{
		{5, false, `provider "oa": video model "bad": video_durations: a video model needs at least one duration`},
		{7, false, `provider "demo": video model "demo-bad": sizes: a video model needs at least one size`},
	})
}
