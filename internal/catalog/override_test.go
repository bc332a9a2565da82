package catalog

import (
	"reflect"
	"testing"
)

func TestWith(t *testing.T) {
	base := New([]Model{
		{ID: "m", OwnedBy: "v", Modality: Chat, ContextWindow: 1000, MaxOutput: 100, Tools: true, Input: 10, Output: 20, CachedInput: 5},
		{ID: "img", Modality: Image, Images: []ImagePrice{{Size: "1x1", Price: 1}}, ImageSizes: []string{"1x1"}},
		{ID: "demo", OwnedBy: "demo", Modality: Chat, Free: true},
		{ID: "demo-img", OwnedBy: "demo", Modality: Image, ImageSizes: []string{"1x1"}, Free: true},
	})
	tests := []struct {
		name string
		o    Override
		id   string
		want Model
	}{
		{"only the given price changes",
			Override{Model: Model{ID: "m", Input: 11, Output: 999}, Set: SetInput}, "m",
			Model{ID: "m", OwnedBy: "v", Modality: Chat, ContextWindow: 1000, MaxOutput: 100, Tools: true, Input: 11, Output: 20, CachedInput: 5}},
		{"an explicit zero is set",
			Override{Model: Model{ID: "m"}, Set: SetCachedInput | SetContextWindow}, "m",
			Model{ID: "m", OwnedBy: "v", Modality: Chat, MaxOutput: 100, Tools: true, Input: 10, Output: 20}},
		{"free is explicit",
			Override{Model: Model{ID: "m", Free: true}, Set: SetFree}, "m",
			Model{ID: "m", OwnedBy: "v", Modality: Chat, ContextWindow: 1000, MaxOutput: 100, Tools: true, Input: 10, Output: 20, CachedInput: 5, Free: true}},
		{"a new model defaults to chat",
			Override{Model: Model{ID: "new", OwnedBy: "me", Input: 1, Modality: Embedding}, Set: SetOwnedBy | SetInput}, "new",
			Model{ID: "new", OwnedBy: "me", Modality: Chat, Input: 1}},
		{"images set their sizes",
			Override{Model: Model{ID: "img", Images: []ImagePrice{{Size: "2x2", Price: 3}, {Size: "2x2", Quality: "hd", Price: 4}, {Size: "3x3", Price: 5}}}, Set: SetImages}, "img",
			Model{ID: "img", Modality: Image, Images: []ImagePrice{{Size: "2x2", Price: 3}, {Size: "2x2", Quality: "hd", Price: 4}, {Size: "3x3", Price: 5}}, ImageSizes: []string{"2x2", "3x3"}}},
		{"everything",
			Override{Model: Model{ID: "m", OwnedBy: "o", Created: 1, Modality: Video, ContextWindow: 2, MaxOutput: 3, Tokenizer: "t",
				Vision: true, Reasoning: true, VideoPerSecond: 4, AudioPerSecond: 5, VideoDurations: []int{6}, ImageSizes: []string{"7"}},
				Set: SetOwnedBy | SetCreated | SetModality | SetContextWindow | SetMaxOutput | SetTools | SetVision | SetReasoning | SetTokenizer |
					SetInput | SetOutput | SetCachedInput | SetAudioPerSecond | SetVideoPerSecond | SetImageSizes | SetVideoDurations}, "m",
			Model{ID: "m", OwnedBy: "o", Created: 1, Modality: Video, ContextWindow: 2, MaxOutput: 3, OutputLimited: true, Tokenizer: "t",
				Vision: true, Reasoning: true, VideoPerSecond: 4, AudioPerSecond: 5, VideoDurations: []int{6}, ImageSizes: []string{"7"}}},
		{"video prices and duration map",
			Override{Model: Model{ID: "img", VideoPrices: []VideoPrice{{Size: "1x1", PerSecond: 7}}, VideoDurationMap: map[int]int{10: 8}},
				Set: SetVideoPrices | SetVideoDurationMap}, "img",
			Model{ID: "img", Modality: Image, Images: []ImagePrice{{Size: "1x1", Price: 1}}, ImageSizes: []string{"1x1"},
				VideoPrices: []VideoPrice{{Size: "1x1", PerSecond: 7}}, VideoDurationMap: map[int]int{10: 8}}},
		{"video fields not in Set are left alone",
			Override{Model: Model{ID: "img", VideoPrices: []VideoPrice{{Size: "1x1", PerSecond: 7}}, VideoDurationMap: map[int]int{10: 8}}, Set: SetFree}, "img",
			Model{ID: "img", Modality: Image, Images: []ImagePrice{{Size: "1x1", Price: 1}}, ImageSizes: []string{"1x1"}}},
		{"image token prices",
			Override{Model: Model{ID: "img", Input: 5, ImageInput: 10, CachedImageInput: 3, ImageOutput: 40, Output: 99},
				Set: SetInput | SetImageInput | SetCachedImageInput | SetImageOutput}, "img",
			Model{ID: "img", Modality: Image, Images: []ImagePrice{{Size: "1x1", Price: 1}}, ImageSizes: []string{"1x1"},
				Input: 5, ImageInput: 10, CachedImageInput: 3, ImageOutput: 40}},
		{"a price makes a free model paid",
			Override{Model: Model{ID: "demo", Input: 1, Output: 2}, Set: SetInput | SetOutput}, "demo",
			Model{ID: "demo", OwnedBy: "demo", Modality: Chat, Input: 1, Output: 2}},
		{"free given with a price keeps it free",
			Override{Model: Model{ID: "demo", Input: 1, Free: true}, Set: SetInput | SetFree}, "demo",
			Model{ID: "demo", OwnedBy: "demo", Modality: Chat, Input: 1, Free: true}},
		{"a price per image makes a free image model paid",
			Override{Model: Model{ID: "demo-img", Images: []ImagePrice{{Size: "1x1", Price: 3}}}, Set: SetImages}, "demo-img",
			Model{ID: "demo-img", OwnedBy: "demo", Modality: Image, Images: []ImagePrice{{Size: "1x1", Price: 3}}, ImageSizes: []string{"1x1"}}},
		{"a price that cannot bill the model leaves it free",
			Override{Model: Model{ID: "demo-img", Input: 1}, Set: SetInput}, "demo-img",
			Model{ID: "demo-img", OwnedBy: "demo", Modality: Image, ImageSizes: []string{"1x1"}, Input: 1, Free: true}},
		{"an operator's max_output is a limit",
			Override{Model: Model{ID: "gpt-x", MaxOutput: 100}, Set: SetMaxOutput}, "gpt-x",
			Model{ID: "gpt-x", Modality: Chat, MaxOutput: 100, OutputLimited: true}},
	}
	for _, tt := range tests {
		c := base.With([]Override{tt.o})
		got, ok := c.Lookup(tt.id)
		if !ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
	if m, _ := base.Lookup("m"); m.Input != 10 || base.Len() != 4 {
		t.Error("With must not change the original catalog")
	}
	// Overrides apply in order.
	c := base.With([]Override{{Model: Model{ID: "m", Input: 1}, Set: SetInput}, {Model: Model{ID: "m", Input: 2}, Set: SetInput}})
	if m, _ := c.Lookup("m"); m.Input != 2 || c.Len() != 4 {
		t.Errorf("ordered overrides: %+v, len %d", m, c.Len())
	}
}
