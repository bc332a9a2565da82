package config

import (
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// defaultUsageRetention keeps usage records 400 days: a card dispute can
// come up to 120 days after a top-up whose credit was spent over the months
// before it, and a year of records lets an operator compare a month with
// the same month a year earlier. Charges live in the ledger, which is never
// purged, so the retention bounds only the per-request detail.
const defaultUsageRetention = Retention(400 * 24 * time.Hour)

// minUsageRetention is the shortest retention accepted besides 0: shorter
// would delete records before an operator could read them.
const minUsageRetention = Retention(time.Hour)

// Retention is how long records are kept, written like a Duration or in
// whole days ("90d"); 0 keeps them forever.
type Retention time.Duration

// UnmarshalYAML parses "90d", a Go duration ("2160h") or whole seconds.
func (r *Retention) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return typeErrorf(n, "expected a retention like 90d or 2160h")
	}
	v := strings.TrimSpace(n.Value)
	if d, ok := strings.CutSuffix(v, "d"); ok {
		if days, err := strconv.ParseInt(d, 10, 64); err == nil && days >= -maxSeconds/86400 && days <= maxSeconds/86400 {
			*r = Retention(time.Duration(days) * 24 * time.Hour)
			return nil
		}
	} else if dur, err := time.ParseDuration(v); err == nil {
		*r = Retention(dur)
		return nil
	} else if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs <= maxSeconds && secs >= -maxSeconds {
		*r = Retention(time.Duration(secs) * time.Second)
		return nil
	}
	return typeErrorf(n, "invalid retention %s: use whole days like 90d, a duration like 2160h, or 0 to keep forever", quoteValue(n.Value))
}

// MarshalYAML writes the retention back the way it reads best.
func (r Retention) MarshalYAML() (any, error) { return r.String(), nil }

// String writes whole days as "90d", 0 as "0", anything else like a Duration.
func (r Retention) String() string {
	const day = Retention(24 * time.Hour)
	switch {
	case r == 0:
		return "0"
	case r%day == 0:
		return strconv.FormatInt(int64(r/day), 10) + "d"
	}
	return time.Duration(r).String()
}

func (c *Config) applyUsageDefaults() {
	if c.Usage.Retention == 0 && !c.given("usage.retention") {
		c.Usage.Retention = defaultUsageRetention
	}
}

// usageRetention checks usage.retention.
func (v *validator) usageRetention() {
	c := v.c
	r := c.Usage.Retention
	if r < 0 || (r > 0 && r < minUsageRetention) {
		v.errorf(c.line("usage.retention", c.line("usage", 0)),
			"usage.retention must be 0 (keep forever) or at least %s, got %s", time.Duration(minUsageRetention), r)
	}
}
