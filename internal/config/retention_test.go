package config

import (
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestUsageRetention(t *testing.T) {
	const day = 24 * time.Hour
	base := "providers:\n  - {name: demo, type: demo}\n"
	tests := []struct {
		name, yaml string
		want       time.Duration
		err        string // substring of the one problem expected
	}{
		{name: "default", yaml: base, want: 400 * day},
		{name: "days", yaml: base + "usage:\n  retention: 90d\n", want: 90 * day},
		{name: "hours", yaml: base + "usage:\n  retention: 2160h\n", want: 90 * day},
		{name: "seconds", yaml: base + "usage:\n  retention: 86400\n", want: day},
		{name: "forever", yaml: base + "usage:\n  retention: 0\n", want: 0},
		{name: "forever as 0d", yaml: base + "usage:\n  retention: 0d\n", want: 0},
		{name: "null is the default", yaml: base + "usage:\n  retention:\n", want: 400 * day},
		{name: "too short", yaml: base + "usage:\n  retention: 30m\n", want: 30 * time.Minute, err: "line 4: usage.retention must be 0 (keep forever) or at least 1h0m0s, got 30m0s"},
		{name: "negative", yaml: base + "usage:\n  retention: -1d\n", want: -day, err: "usage.retention must be 0"},
		{name: "words", yaml: base + "usage:\n  retention: ninety days\n", err: "invalid retention `ninety days`"},
		{name: "fraction of days", yaml: base + "usage:\n  retention: 1.5d\n", err: "invalid retention"},
		{name: "typo", yaml: base + "usage:\n  retension: 90d\n", want: 400 * day, err: `unknown key "retension" in usage (did you mean retention?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ps, err := parse([]byte(tt.yaml), envOf(nil))
			if err != nil {
				t.Fatal(err)
			}
			var msgs []string
			for _, p := range ps {
				msgs = append(msgs, p.String())
			}
			switch {
			case tt.err == "" && len(ps) != 0:
				t.Fatalf("problems %q", msgs)
			case tt.err != "" && (len(ps) != 1 || !strings.Contains(msgs[0], tt.err)):
				t.Fatalf("problems %q, want one with %q", msgs, tt.err)
			}
			if tt.err == "" || tt.want != 0 {
				if got := time.Duration(c.Usage.Retention); got != tt.want {
					t.Errorf("retention %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestRetentionString(t *testing.T) {
	for r, want := range map[Retention]string{
		0: "0", Retention(400 * 24 * time.Hour): "400d", Retention(36 * time.Hour): "36h0m0s",
	} {
		if got := r.String(); got != want {
			t.Errorf("%d: %q, want %q", r, got, want)
		}
		// It reads back as itself.
		var back Retention
		if err := yaml.Unmarshal([]byte("v: "+want), &struct {
			V *Retention `yaml:"v"`
		}{&back}); err != nil || back != r {
			t.Errorf("%q read back as %v, %v", want, back, err)
		}
	}
}
