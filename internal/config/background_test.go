package config

import (
	"testing"
	"time"
)

func TestBackgroundSection(t *testing.T) {
	base := "providers:\n  - {name: demo, type: demo}\n"
	defaults := Background{Timeout: Duration(time.Hour), PollMin: Duration(5 * time.Second), PollMax: Duration(30 * time.Second)}
	tests := []struct {
		name, yaml string
		want       []want     // every problem, in order
		background Background // checked when no error is wanted
	}{
		{name: "defaults", yaml: base, background: defaults},
		{name: "empty section", yaml: base + "background:\n", background: defaults},
		{name: "all set", yaml: base + "background:\n  timeout: 2h\n  poll_min: 10ms\n  poll_max: 10ms\n",
			background: Background{Timeout: Duration(2 * time.Hour), PollMin: Duration(10 * time.Millisecond), PollMax: Duration(10 * time.Millisecond)}},
		{name: "shortest timeout", yaml: base + "background:\n  timeout: 1m\n  poll_max: 59s\n",
			background: Background{Timeout: Duration(time.Minute), PollMin: Duration(5 * time.Second), PollMax: Duration(59 * time.Second)}},
		{name: "timeout too short", yaml: base + "background:\n  timeout: 59s\n", want: []want{{4, false, "background.timeout must be at least 1m and under 24h, got 59s"}}},
		{name: "timeout zero", yaml: base + "background:\n  timeout: 0s\n", want: []want{{4, false, "background.timeout must be at least 1m"}}},
		{name: "timeout a day", yaml: base + "background:\n  timeout: 24h\n", want: []want{{4, false, "background.timeout must be at least 1m and under 24h, got 24h0m0s"}}},
		{name: "poll_min too short", yaml: base + "background:\n  poll_min: 9ms\n", want: []want{{4, false, "background.poll_min must be at least 10ms, got 9ms"}}},
		{name: "poll_max below poll_min", yaml: base + "background:\n  poll_min: 1m\n  poll_max: 30s\n",
			want: []want{{5, false, "background.poll_max (30s) must not be shorter than background.poll_min (1m0s)"}}},
		{name: "poll_max past timeout", yaml: base + "background:\n  timeout: 1m\n  poll_max: 1m\n",
			want: []want{{5, true, "background.poll_max (1m0s) is not shorter than background.timeout (1m0s)"}}},
		{name: "unknown key", yaml: base + "background:\n  timeot: 3m\n", want: []want{{4, false, `unknown key "timeot" in background (did you mean timeout?)`}}},
		{name: "wrong type", yaml: base + "background:\n  timeout: [1]\n", want: []want{{4, false, "expected a duration"}}},
		{name: "not a mapping", yaml: base + "background: 1h\n", want: []want{{3, false, "expected a mapping like {timeout: 1h}"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ps, err := parse([]byte(tt.yaml), envOf(nil))
			if err != nil {
				t.Fatal(err)
			}
			checkProblems(t, ps, tt.want)
			if tt.want == nil && c.Background != tt.background {
				t.Errorf("background = %+v, want %+v", c.Background, tt.background)
			}
		})
	}
	// A config built in code gets the same defaults.
	if c := Default(); c.Background != defaults || len(c.Validate()) != 0 {
		t.Errorf("Default().Background = %+v, problems %v", c.Background, c.Validate())
	}
}
