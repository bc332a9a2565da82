package config

import (
	"testing"
	"time"
)

func TestVideoSection(t *testing.T) {
	base := "providers:\n  - {name: demo, type: demo}\n"
	defaults := Video{Timeout: Duration(30 * time.Minute), Workers: 16, PollMin: Duration(5 * time.Second),
		PollMax: Duration(30 * time.Second), MaxBytes: 536870912, DemoDelay: Duration(8 * time.Second), Lease: Duration(11 * time.Minute)}
	tests := []struct {
		name, yaml string
		want       []want // every problem, in order
		video      Video  // checked when no error is wanted
	}{
		{name: "defaults", yaml: base, video: defaults},
		{name: "empty section", yaml: base + "video:\n", video: defaults},
		{name: "all set", yaml: base + "video:\n  timeout: 2h\n  workers: 256\n  poll_min: 10ms\n  poll_max: 10ms\n  max_bytes: 1048576\n  demo_delay: 0s\n  dir: /var/lib/mg/videos\n  lease: 15m\n",
			video: Video{Timeout: Duration(2 * time.Hour), Workers: 256, PollMin: Duration(10 * time.Millisecond), PollMax: Duration(10 * time.Millisecond),
				MaxBytes: 1 << 20, DemoDelay: 0, Dir: "/var/lib/mg/videos", Lease: Duration(15 * time.Minute)}},
		{name: "shortest timeout", yaml: base + "video:\n  timeout: 1m\n  demo_delay: 59s\n",
			video: Video{Timeout: Duration(time.Minute), Workers: 16, PollMin: Duration(5 * time.Second), PollMax: Duration(30 * time.Second),
				MaxBytes: 536870912, DemoDelay: Duration(59 * time.Second), Lease: Duration(11 * time.Minute)}},
		{name: "timeout too short", yaml: base + "video:\n  timeout: 59s\n", want: []want{{4, false, "video.timeout must be at least 1m and under 24h, got 59s"}}},
		{name: "timeout zero", yaml: base + "video:\n  timeout: 0s\n", want: []want{{4, false, "video.timeout must be at least 1m"}}}, // and no word on demo_delay
		{name: "timeout a day", yaml: base + "video:\n  timeout: 24h\n", want: []want{{4, false, "video.timeout must be at least 1m and under 24h, got 24h0m0s"}}},
		{name: "no workers", yaml: base + "video:\n  workers: 0\n", want: []want{{4, false, "video.workers must be from 1 to 256, got 0"}}},
		{name: "too many workers", yaml: base + "video:\n  workers: 257\n", want: []want{{4, false, "video.workers must be from 1 to 256, got 257"}}},
		{name: "poll_min too short", yaml: base + "video:\n  poll_min: 9ms\n", want: []want{{4, false, "video.poll_min must be at least 10ms, got 9ms"}}},
		{name: "poll_max below poll_min", yaml: base + "video:\n  poll_min: 1m\n  poll_max: 30s\n",
			want: []want{{5, false, "video.poll_max (30s) must not be shorter than video.poll_min (1m0s)"}}},
		{name: "poll_max past timeout", yaml: base + "video:\n  timeout: 1m\n  poll_max: 1m\n",
			want: []want{{5, true, "video.poll_max (1m0s) is not shorter than video.timeout (1m0s)"}}},
		{name: "max_bytes too small", yaml: base + "video:\n  max_bytes: 1048575\n", want: []want{{4, false, "video.max_bytes must be at least 1048576 (1 MiB), got 1048575"}}},
		{name: "max_bytes zero", yaml: base + "video:\n  max_bytes: 0\n", want: []want{{4, false, "video.max_bytes must be at least 1048576"}}},
		{name: "negative demo_delay", yaml: base + "video:\n  demo_delay: -1s\n", want: []want{{4, false, "video.demo_delay must be 0 or more, got -1s"}}},
		{name: "demo_delay not under timeout", yaml: base + "video:\n  timeout: 1m\n  demo_delay: 1m\n",
			want: []want{{5, false, "video.demo_delay (1m0s) must be shorter than video.timeout (1m0s)"}}},
		{name: "lease too short", yaml: base + "video:\n  lease: 999ms\n", want: []want{{4, false, "video.lease must be at least 1s, got 999ms"}}},
		{name: "lease zero", yaml: base + "video:\n  lease: 0s\n", want: []want{{4, false, "video.lease must be at least 1s, got 0s"}}},
		{name: "lease shorter than a poll", yaml: base + "video:\n  lease: 2s\n",
			want: []want{{4, true, "video.lease (2s) is shorter than the longest poll of a task (10m30s"}}},
		{name: "unknown key", yaml: base + "video:\n  workerz: 3\n", want: []want{{4, false, `unknown key "workerz" in video (did you mean workers?)`}}},
		{name: "wrong type", yaml: base + "video:\n  workers: many\n", want: []want{{4, false, "expected an integer, got a string `many`"}}},
		{name: "not a mapping", yaml: base + "video: 30m\n", want: []want{{3, false, "expected a mapping like {timeout: 30m}"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ps, err := parse([]byte(tt.yaml), envOf(nil))
			if err != nil {
				t.Fatal(err)
			}
			checkProblems(t, ps, tt.want)
			if tt.want == nil && c.Video != tt.video {
				t.Errorf("video = %+v, want %+v", c.Video, tt.video)
			}
		})
	}
	// A config built in code gets the same defaults.
	if c := Default(); c.Video != defaults || len(c.Validate()) != 0 {
		t.Errorf("Default().Video = %+v, problems %v", c.Video, c.Validate())
	}
}
