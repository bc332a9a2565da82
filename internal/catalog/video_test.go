package catalog

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/money"
)

// TestBuiltinVideoModels holds every built-in video model to the rules the
// config validator applies to the operator's ones, and checks the lengths
// and prices a client of our spec (5, 10, 15, 20 s) and of OpenAI's
// Videos API (4, 8, 12 s) gets.
func TestBuiltinVideoModels(t *testing.T) {
	c, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	videos := 0
	for _, m := range c.All() {
		if m.Modality != Video {
			continue
		}
		videos++
		for _, is := range m.VideoIssues() {
			t.Errorf("%s: %s", m.ID, is.Message)
		}
		if !m.Priced() {
			t.Errorf("%s is not priced", m.ID)
		}
		for d, s := range m.VideoDurationMap {
			if s > d {
				t.Errorf("%s: %d s billed as %d s", m.ID, d, s)
			}
		}
	}
	if videos != 9 {
		t.Errorf("%d built-in video models, want 9", videos)
	}
	for _, id := range []string{"sora-2-portrait", "sora-2-landscape"} {
		if _, ok := c.Lookup(id); ok {
			t.Errorf("%s is not a real model and must not be in the catalog", id)
		}
	}

	const no = -1 // the model cannot make the length
	tests := []struct {
		id       string
		upstream map[int]int // requested seconds → seconds made and billed
		prices   map[string]money.Micros
	}{
		{"sora-2", map[int]int{4: 4, 5: 4, 8: 8, 10: 8, 12: 12, 15: 12, 20: no, 6: no},
			map[string]money.Micros{"720x1280": 100_000, "1280x720": 100_000}},
		{"sora-2-pro", map[int]int{5: 4, 10: 8, 15: 12, 20: no},
			map[string]money.Micros{"720x1280": 300_000, "1280x720": 300_000, "1024x1792": 500_000, "1792x1024": 500_000}},
		{"veo-3.1-generate-preview", map[int]int{4: 4, 5: 4, 6: 6, 8: 8, 10: 8, 12: no, 15: no, 20: no},
			map[string]money.Micros{"1280x720": 400_000, "720x1280": 400_000, "1920x1080": 400_000, "1080x1920": 400_000}},
		{"veo-3.1-fast-generate-preview", map[int]int{5: 4, 10: 8, 15: no},
			map[string]money.Micros{"1280x720": 100_000, "720x1280": 100_000, "1920x1080": 120_000, "1080x1920": 120_000}},
		{"veo-3.0-generate-001", map[int]int{5: 4, 10: 8, 15: no},
			map[string]money.Micros{"1280x720": 400_000, "1920x1080": 400_000}},
		{"veo-3.0-fast-generate-001", map[int]int{5: 4, 10: 8, 20: no},
			map[string]money.Micros{"1280x720": 150_000, "1080x1920": 150_000}},
		{"veo-2.0-generate-001", map[int]int{4: no, 5: 5, 7: 7, 8: 8, 10: 8, 12: no, 15: no, 20: no},
			map[string]money.Micros{"1280x720": 350_000, "720x1280": 350_000}},
		{"demo-video-portrait", map[int]int{5: 5, 10: 10, 15: 15, 20: 20, 4: no}, map[string]money.Micros{"720x1280": 0}},
		{"demo-video-landscape", map[int]int{5: 5, 20: 20, 8: no}, map[string]money.Micros{"1280x720": 0}},
	}
	for _, tt := range tests {
		m, ok := c.Lookup(tt.id)
		if !ok || m.Modality != Video {
			t.Errorf("%s = %+v, %v", tt.id, m, ok)
			continue
		}
		for d, want := range tt.upstream {
			got, ok := m.UpstreamSeconds(d)
			if want == no && ok || want != no && (!ok || got != want) {
				t.Errorf("%s UpstreamSeconds(%d) = %d, %v; want %d", tt.id, d, got, ok, want)
			}
		}
		for size, want := range tt.prices {
			if got := m.VideoPriceFor(size); got != want {
				t.Errorf("%s VideoPriceFor(%s) = %d, want %d", tt.id, size, got, want)
			}
		}
		if strings.HasPrefix(tt.id, "demo-") != (m.Free && m.OwnedBy == "demo") {
			t.Errorf("%s: free %v, owned by %q", tt.id, m.Free, m.OwnedBy)
		}
	}
}

func TestVideoIssues(t *testing.T) {
	ok := Model{ID: "v", Modality: Video, VideoPerSecond: 1, ImageSizes: []string{"1280x720"},
		VideoDurations: []int{4, 8}, VideoDurationMap: map[int]int{5: 4, 10: 8}}
	with := func(f func(m *Model)) Model {
		m := ok.clone()
		f(&m)
		return m
	}
	tests := []struct {
		name  string
		m     Model
		field OverrideFields // 0: no issue
		msg   string
	}{
		{"valid", ok, 0, ""},
		{"not a video model", Model{Modality: Chat}, 0, ""},
		{"free needs no price", with(func(m *Model) { m.VideoPerSecond, m.Free = 0, true }), 0, ""},
		{"per-size prices cover every size", with(func(m *Model) {
			m.VideoPerSecond, m.VideoPrices = 0, []VideoPrice{{Size: "1280x720", PerSecond: 2}}
		}), 0, ""},
		{"no durations", with(func(m *Model) { m.VideoDurations, m.VideoDurationMap = nil, nil }), SetVideoDurations, "at least one duration"},
		{"zero duration", with(func(m *Model) { m.VideoDurations = []int{0, 4, 8} }), SetVideoDurations, "duration 0 must be from 1 to 60"},
		{"too long", with(func(m *Model) { m.VideoDurations = []int{4, 8, 61} }), SetVideoDurations, "duration 61"},
		{"duplicate duration", with(func(m *Model) { m.VideoDurations = []int{4, 8, 4} }), SetVideoDurations, "duration 4 is listed twice"},
		{"no sizes", with(func(m *Model) { m.ImageSizes = nil }), SetImageSizes, "at least one size"},
		{"bad size", with(func(m *Model) { m.ImageSizes = []string{"720p"}; m.VideoPerSecond = 1 }), SetImageSizes, `size "720p" must look like 1280x720`},
		{"duplicate size", with(func(m *Model) { m.ImageSizes = []string{"1280x720", "1280x720"} }), SetImageSizes, "listed twice"},
		{"no price", with(func(m *Model) { m.VideoPerSecond = 0 }), SetVideoPerSecond, "no price per second for size 1280x720"},
		{"a size priced at zero", with(func(m *Model) { m.VideoPrices = []VideoPrice{{Size: "1280x720"}} }), SetVideoPerSecond, "size 1280x720"},
		{"price for an unknown size", with(func(m *Model) { m.VideoPrices = []VideoPrice{{Size: "1x1", PerSecond: 1}} }), SetVideoPrices, `size "1x1", which is not one`},
		{"size priced twice", with(func(m *Model) {
			m.VideoPrices = []VideoPrice{{Size: "1280x720", PerSecond: 1}, {Size: "1280x720", PerSecond: 2}}
		}), SetVideoPrices, "priced twice"},
		{"map to a length not made", with(func(m *Model) { m.VideoDurationMap = map[int]int{10: 6} }), SetVideoDurationMap, "10 s maps to 6 s, which is not one of the durations"},
		{"map up", with(func(m *Model) { m.VideoDurationMap = map[int]int{3: 4} }), SetVideoDurationMap, "pay for more seconds"},
		{"map a native length", with(func(m *Model) { m.VideoDurationMap = map[int]int{8: 4} }), SetVideoDurationMap, "makes 8 s itself"},
		{"map key out of range", with(func(m *Model) { m.VideoDurationMap = map[int]int{90: 8} }), SetVideoDurationMap, "requested duration 90"},
	}
	for _, tt := range tests {
		got := tt.m.VideoIssues()
		if tt.field == 0 {
			if len(got) != 0 {
				t.Errorf("%s: issues %+v, want none", tt.name, got)
			}
			continue
		}
		if len(got) != 1 || got[0].Field != tt.field || !strings.Contains(got[0].Message, tt.msg) {
			t.Errorf("%s: issues %+v, want one of field %b containing %q", tt.name, got, tt.field, tt.msg)
		}
	}
}
