package config

import (
	"strings"
	"testing"
	"time"
)

func TestFetchSection(t *testing.T) {
	base := "providers:\n  - {name: demo, type: demo}\n"
	tests := []struct {
		name, yaml string
		errs       []string
		want       Fetch
	}{
		{name: "defaults", yaml: base, want: Fetch{MaxImages: 16, MaxTotalBytes: 32 << 20, Timeout: Duration(30 * time.Second)}},
		{name: "all set", yaml: base + "fetch:\n  max_images: 4\n  max_total_bytes: 1000000\n  timeout: 5s\n",
			want: Fetch{MaxImages: 4, MaxTotalBytes: 1000000, Timeout: Duration(5 * time.Second)}},
		{name: "image URLs off", yaml: base + "fetch:\n  max_images: 0\n", want: Fetch{MaxImages: 0, MaxTotalBytes: 32 << 20, Timeout: Duration(30 * time.Second)}},
		{name: "negative count", yaml: base + "fetch:\n  max_images: -1\n", errs: []string{"fetch.max_images must be 0"}},
		{name: "zero bytes", yaml: base + "fetch:\n  max_total_bytes: 0\n", errs: []string{"fetch.max_total_bytes must be a positive number of bytes"}},
		{name: "zero timeout", yaml: base + "fetch:\n  timeout: 0s\n", errs: []string{"fetch.timeout must be a positive duration"}},
		// The message says "top-level" until known.go's sectionNames names the fetch section.
		{name: "unknown key", yaml: base + "fetch:\n  max_image: 3\n", errs: []string{`key "max_image"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ps, err := parse([]byte(tt.yaml), envOf(nil))
			if err != nil {
				t.Fatal(err)
			}
			var errs []string
			for _, p := range ps {
				if !p.Warning {
					errs = append(errs, p.Message)
				}
			}
			if len(errs) != len(tt.errs) {
				t.Fatalf("problems %q, want %q", errs, tt.errs)
			}
			for i, want := range tt.errs {
				if !strings.Contains(errs[i], want) {
					t.Errorf("problem %q, want %q", errs[i], want)
				}
			}
			if tt.errs == nil && c.Fetch != tt.want {
				t.Errorf("fetch = %+v, want %+v", c.Fetch, tt.want)
			}
		})
	}
}
