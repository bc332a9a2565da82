package config

import (
	"strings"
	"time"
)

// Defaults of the video section; see Video for why each is what it is.
const (
	defaultVideoTimeout   = Duration(30 * time.Minute)
	defaultVideoWorkers   = 16
	defaultVideoPollMin   = Duration(5 * time.Second)
	defaultVideoPollMax   = Duration(30 * time.Second)
	defaultVideoMaxBytes  = 512 << 20
	defaultVideoDemoDelay = Duration(8 * time.Second)
	defaultVideoLease     = Duration(11 * time.Minute) // video.DefaultLease
	// videoLongestPoll is the longest one poll of a task may run: a status
	// check (30s) and a download (10m), the poller's timeouts.
	videoLongestPoll = Duration(10*time.Minute + 30*time.Second)
)

// Bounds of the video section.
const (
	minVideoTimeout  = Duration(time.Minute)
	maxVideoTimeout  = Duration(24 * time.Hour) // exclusive
	maxVideoWorkers  = 256
	minVideoPollMin  = Duration(10 * time.Millisecond)
	minVideoMaxBytes = 1 << 20
	minVideoLease    = Duration(time.Second)
)

// Video configures asynchronous video generation (POST /v1/videos and
// /v1/videos/generations): how long a task may stay open, how the leased
// poller asks upstreams for progress, and where finished videos are kept.
type Video struct {
	// Timeout is how long a task may stay open (queued or in progress)
	// before it is cancelled upstream, failed and its reservation released
	// (default 30m; from 1m to under 24h). Vendors finish in minutes.
	Timeout Duration `yaml:"timeout"`
	// Workers bounds the upstream status checks and downloads in flight at
	// once across all tasks (default 16, 1 to 256).
	Workers int `yaml:"workers"`
	// PollMin and PollMax bound the wait between two status checks of one
	// task: short while a vendor is quick, backing off to PollMax (defaults
	// 5s and 30s; poll_min at least 10ms, poll_max at least poll_min).
	PollMin Duration `yaml:"poll_min"`
	PollMax Duration `yaml:"poll_max"`
	// MaxBytes is the largest video accepted from an upstream (default
	// 512 MiB, at least 1 MiB); a larger one fails the task.
	MaxBytes int64 `yaml:"max_bytes"`
	// DemoDelay is how long the demo provider takes to make a video
	// (default 8s, longer than the first poll; 0 finishes at once), so clients see a task go through
	// its states. It must be shorter than Timeout.
	DemoDelay Duration `yaml:"demo_delay"`
	// Dir holds the finished videos; "" means next to the SQLite database
	// (./modelgate-data/videos by default), as images.dir does for images.
	// When images.s3 is set, videos go to the same bucket under "videos/"
	// and Dir is not used.
	Dir string `yaml:"dir"`
	// Lease is how long a replica holds a task it is polling (default
	// 11m, at least 1s). A lease ends with the poll, so it only matters
	// when a replica dies mid-poll: its task waits this long before
	// another replica takes it over. It should outlast the longest poll
	// (a 30s status check and a 10m download), or a slow one may see
	// another replica take its task over while it runs.
	Lease Duration `yaml:"lease"`
}

func (c *Config) applyVideoDefaults() {
	v := &c.Video
	defaultDuration(&v.Timeout, defaultVideoTimeout, c.given("video.timeout"))
	if v.Workers == 0 && !c.given("video.workers") {
		v.Workers = defaultVideoWorkers
	}
	defaultDuration(&v.PollMin, defaultVideoPollMin, c.given("video.poll_min"))
	defaultDuration(&v.PollMax, defaultVideoPollMax, c.given("video.poll_max"))
	if v.MaxBytes == 0 && !c.given("video.max_bytes") {
		v.MaxBytes = defaultVideoMaxBytes
	}
	defaultDuration(&v.DemoDelay, defaultVideoDemoDelay, c.given("video.demo_delay"))
	defaultDuration(&v.Lease, defaultVideoLease, c.given("video.lease"))
}

// videoSettings checks the video section.
func (v *validator) videoSettings() {
	c := v.c
	s := c.Video
	at := func(key string) int { return c.line("video."+key, c.line("video", 0)) }
	timeoutOK := s.Timeout >= minVideoTimeout && s.Timeout < maxVideoTimeout
	if !timeoutOK {
		v.errorf(at("timeout"), "video.timeout must be at least 1m and under 24h, got %s", s.Timeout)
	}
	if s.Workers < 1 || s.Workers > maxVideoWorkers {
		v.errorf(at("workers"), "video.workers must be from 1 to %d, got %d", maxVideoWorkers, s.Workers)
	}
	if s.PollMin < minVideoPollMin {
		v.errorf(at("poll_min"), "video.poll_min must be at least %s, got %s", minVideoPollMin, s.PollMin)
	}
	if s.PollMax < s.PollMin {
		v.errorf(at("poll_max"), "video.poll_max (%s) must not be shorter than video.poll_min (%s)", s.PollMax, s.PollMin)
	} else if timeoutOK && s.PollMax >= s.Timeout {
		v.warnf(at("poll_max"), "video.poll_max (%s) is not shorter than video.timeout (%s), so a task may time out between two checks", s.PollMax, s.Timeout)
	}
	if s.MaxBytes < minVideoMaxBytes {
		v.errorf(at("max_bytes"), "video.max_bytes must be at least %d (1 MiB), got %d", minVideoMaxBytes, s.MaxBytes)
	}
	switch {
	case s.DemoDelay < 0:
		v.errorf(at("demo_delay"), "video.demo_delay must be 0 or more, got %s", s.DemoDelay)
	case timeoutOK && s.DemoDelay >= s.Timeout:
		v.errorf(at("demo_delay"), "video.demo_delay (%s) must be shorter than video.timeout (%s), or every demo video times out", s.DemoDelay, s.Timeout)
	}
	switch {
	case s.Lease < minVideoLease:
		v.errorf(at("lease"), "video.lease must be at least %s, got %s", minVideoLease, s.Lease)
	case s.Lease < videoLongestPoll:
		v.warnf(at("lease"), "video.lease (%s) is shorter than the longest poll of a task (%s, a status check and a download), so another replica may take over a task whose slow poll still runs", s.Lease, videoLongestPoll)
	}
	if strings.ContainsRune(s.Dir, 0) {
		v.errorf(at("dir"), "video.dir contains a NUL byte")
	}
}
