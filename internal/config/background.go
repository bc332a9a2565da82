package config

import "time"

// Defaults of the background section; see Background for why each is
// what it is.
const (
	defaultBackgroundTimeout = Duration(time.Hour)
	defaultBackgroundPollMin = Duration(5 * time.Second)
	defaultBackgroundPollMax = Duration(30 * time.Second)
)

// Bounds of the background section.
const (
	minBackgroundTimeout = Duration(time.Minute)
	maxBackgroundTimeout = Duration(24 * time.Hour) // exclusive: tasks are purged a day after creation
	minBackgroundPollMin = Duration(10 * time.Millisecond)
)

// Background configures background Responses requests (POST /v1/responses
// with background: true, passed through to OpenAI or Azure): how long one
// may run and how the leased worker asks the vendor about it.
type Background struct {
	// Timeout is how long a background response may stay queued or in
	// progress before it is cancelled upstream and charged its whole
	// reservation (default 1h; from 1m to under 24h). Reasoning models
	// and deep research run for minutes, rarely longer.
	Timeout Duration `yaml:"timeout"`
	// PollMin and PollMax bound the wait between two status checks of one
	// response: from PollMin, growing ×1.5 per check to PollMax (defaults
	// 5s and 30s; poll_min at least 10ms, poll_max at least poll_min). A
	// client's GET that sees the response end settles it sooner.
	PollMin Duration `yaml:"poll_min"`
	PollMax Duration `yaml:"poll_max"`
}

func (c *Config) applyBackgroundDefaults() {
	b := &c.Background
	defaultDuration(&b.Timeout, defaultBackgroundTimeout, c.given("background.timeout"))
	defaultDuration(&b.PollMin, defaultBackgroundPollMin, c.given("background.poll_min"))
	defaultDuration(&b.PollMax, defaultBackgroundPollMax, c.given("background.poll_max"))
}

// backgroundSettings checks the background section.
func (v *validator) backgroundSettings() {
	c := v.c
	s := c.Background
	at := func(key string) int { return c.line("background."+key, c.line("background", 0)) }
	timeoutOK := s.Timeout >= minBackgroundTimeout && s.Timeout < maxBackgroundTimeout
	if !timeoutOK {
		v.errorf(at("timeout"), "background.timeout must be at least 1m and under 24h, got %s", s.Timeout)
	}
	if s.PollMin < minBackgroundPollMin {
		v.errorf(at("poll_min"), "background.poll_min must be at least %s, got %s", minBackgroundPollMin, s.PollMin)
	}
	if s.PollMax < s.PollMin {
		v.errorf(at("poll_max"), "background.poll_max (%s) must not be shorter than background.poll_min (%s)", s.PollMax, s.PollMin)
	} else if timeoutOK && s.PollMax >= s.Timeout {
		v.warnf(at("poll_max"), "background.poll_max (%s) is not shorter than background.timeout (%s), so a response may time out between two checks", s.PollMax, s.Timeout)
	}
}
