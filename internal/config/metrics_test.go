package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// metrics.listen: off when absent, loopback without a word, anything else
// warned about, a bad address or the public one refused.
func TestMetricsListen(t *testing.T) {
	cases := []struct {
		name    string
		extra   string
		listen  string // want c.Metrics.Listen ("": nil or empty)
		problem string // substring of the one problem wanted ("": none)
		warning bool
	}{
		{name: "absent"},
		{name: "loopback", extra: "metrics: {listen: 127.0.0.1:9464}\n", listen: "127.0.0.1:9464"},
		{name: "localhost", extra: "metrics: {listen: \"localhost:9464\"}\n", listen: "localhost:9464"},
		{name: "ipv6 loopback", extra: "metrics: {listen: \"[::1]:9464\"}\n", listen: "[::1]:9464"},
		{name: "all interfaces", extra: "metrics: {listen: \":9464\"}\n", listen: ":9464", problem: "not a loopback", warning: true},
		{name: "private address", extra: "metrics: {listen: \"10.0.0.5:9464\"}\n", listen: "10.0.0.5:9464", problem: "not a loopback", warning: true},
		{name: "no port", extra: "metrics: {listen: 127.0.0.1}\n", listen: "127.0.0.1", problem: "metrics.listen"},
		{name: "bad port", extra: "metrics: {listen: \"127.0.0.1:http\"}\n", listen: "127.0.0.1:http", problem: "port must be a number"},
		{name: "public port", extra: "listen: 127.0.0.1:8080\nmetrics: {listen: \"127.0.0.1:8080\"}\n", listen: "127.0.0.1:8080", problem: "public listen address"},
		{name: "unknown key", extra: "metrics: {listen: 127.0.0.1:9464, path: /m}\n", listen: "127.0.0.1:9464", problem: "path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, ps := loadWithDemo(t, tc.extra, nil)
			got := ""
			if c.Metrics != nil {
				got = c.Metrics.Listen
			}
			if got != tc.listen {
				t.Errorf("metrics.listen = %q, want %q", got, tc.listen)
			}
			checkOneProblem(t, ps, tc.problem, tc.warning)
		})
	}
}

// loadWithDemo loads extra (YAML keys) followed by a demo provider, with
// env as the environment.
func loadWithDemo(t *testing.T, extra string, env map[string]string) (*Config, []Problem) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(extra+"providers:\n  - {name: demo, type: demo}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, ps, err := Load(path, envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	return c, ps
}

// checkOneProblem fails unless ps is empty when want is "", else exactly
// one problem whose message contains want, a warning or not as warning.
func checkOneProblem(t *testing.T, ps []Problem, want string, warning bool) {
	t.Helper()
	if want == "" {
		if len(ps) != 0 {
			t.Errorf("problems = %q, want none", ps)
		}
		return
	}
	if len(ps) != 1 || !strings.Contains(ps[0].Message, want) {
		t.Fatalf("problems = %q, want one containing %q", ps, want)
	}
	if ps[0].Warning != warning {
		t.Errorf("warning = %v, want %v (%s)", ps[0].Warning, warning, ps[0])
	}
}
