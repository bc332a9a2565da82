package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// read_timeout and max_body_memory (issue 11, finding 4): their defaults,
// and the values refused.
func TestBodyKeys(t *testing.T) {
	load := func(extra string) (*Config, []Problem) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, []byte(extra+"providers:\n  - {name: demo, type: demo}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c, ps, err := Load(path, envOf(nil))
		if err != nil {
			t.Fatal(err)
		}
		return c, ps
	}
	c, ps := load("")
	if len(ps) != 0 || time.Duration(c.ReadTimeout) != 30*time.Second || c.MaxBodyMemory != 128<<20 {
		t.Errorf("defaults: read_timeout %s, max_body_memory %d, %v", c.ReadTimeout, c.MaxBodyMemory, ps)
	}
	if d := Default(); time.Duration(d.ReadTimeout) != 30*time.Second || d.MaxBodyMemory != 128<<20 {
		t.Errorf("zero-config: read_timeout %s, max_body_memory %d", d.ReadTimeout, d.MaxBodyMemory)
	}
	// A larger max_request_bytes raises the default budget to four bodies.
	if c, ps = load("max_request_bytes: 67108864\n"); len(ps) != 0 || c.MaxBodyMemory != 4*64<<20 {
		t.Errorf("max_body_memory %d with 64 MiB bodies, %v", c.MaxBodyMemory, ps)
	}
	if c, ps = load("read_timeout: 5s\nmax_body_memory: 33554432\nmax_connections: 500\n"); len(ps) != 0 ||
		time.Duration(c.ReadTimeout) != 5*time.Second || c.MaxBodyMemory != 32<<20 || c.MaxConnections != 500 {
		t.Errorf("explicit: %s %d %v", c.ReadTimeout, c.MaxBodyMemory, ps)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"read_timeout: 0s\n", "1: read_timeout must be a positive duration"},
		{"max_body_memory: 1048576\n", "1: max_body_memory must be at least max_request_bytes (20971520)"},
		{"max_body_memory: 0\n", "1: max_body_memory must be at least max_request_bytes"},
		{"max_connections: -1\n", "1: max_connections must be 0 (from the process's file limit) or a positive number"},
	} {
		_, ps := load(tc.yaml)
		if !HasErrors(ps) || !strings.Contains(ps[0].String(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.yaml, ps, tc.want)
		}
	}
}
