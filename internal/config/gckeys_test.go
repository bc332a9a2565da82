package config

import (
	"os"
	"path/filepath"
	"testing"
)

// gc_percent and memory_limit: their defaults (the limit follows
// max_body_memory), explicit values, and 0 as "no limit".
func TestGCKeys(t *testing.T) {
	cases := []struct {
		yaml    string
		percent int
		limit   int64
	}{
		{"", 200, 512 << 20},
		{"max_body_memory: 33554432\n", 200, 128 << 20},
		{"max_request_bytes: 67108864\n", 200, 4 * 4 * 64 << 20},
		{"gc_percent: 100\nmemory_limit: 0\n", 100, 0},
		{"gc_percent: 400\nmemory_limit: 1073741824\n", 400, 1 << 30},
	}
	for _, tc := range cases {
		path := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(path, []byte(tc.yaml+"providers:\n  - {name: demo, type: demo}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c, ps, err := Load(path, envOf(nil))
		if err != nil || len(ps) != 0 || c.GCPercent != tc.percent || c.MemoryLimit != tc.limit {
			t.Errorf("%q: gc_percent %d, memory_limit %d, %v %v; want %d, %d", tc.yaml, c.GCPercent, c.MemoryLimit, ps, err, tc.percent, tc.limit)
		}
	}
}
