package main

import (
	"math"
	"runtime/debug"
	"strings"
	"testing"
)

// The config's gc_percent and memory_limit are applied unless GOGC or
// GOMEMLIMIT is set, which the Go runtime has applied already and which
// win; a memory_limit of 0 sets none.
func TestApplyGC(t *testing.T) {
	origGC, origLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(origGC); debug.SetMemoryLimit(origLimit) })
	cases := []struct {
		name          string
		env           map[string]string
		limit         int64
		percent       int   // the runtime's settings afterwards
		runtimeLimit  int64 //
		logGC, logLim string
	}{
		{"config", nil, 512 << 20, 200, 512 << 20, "200", "512MiB"},
		{"no limit", nil, 0, 200, math.MaxInt64, "200", "none"},
		{"limit in bytes", nil, 1e9, 200, 1e9, "200", "1000000000B"},
		{"GOGC set", map[string]string{"GOGC": "150"}, 512 << 20, 100, 512 << 20, "GOGC=150", "512MiB"},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "1GiB"}, 512 << 20, 200, math.MaxInt64, "200", "GOMEMLIMIT=1GiB"},
		{"empty variables", map[string]string{"GOGC": "", "GOMEMLIMIT": ""}, 512 << 20, 200, 512 << 20, "200", "512MiB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			getenv := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			gc, lim := applyGC(200, tc.limit, getenv)
			percent, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
			if gc != tc.logGC || lim != tc.logLim || percent != tc.percent || limit != tc.runtimeLimit {
				t.Errorf("applyGC = %q, %q; runtime at %d, %d; want %q, %q; %d, %d",
					gc, lim, percent, limit, tc.logGC, tc.logLim, tc.percent, tc.runtimeLimit)
			}
		})
	}
}

// TestDatabaseForLog: the start's log line never shows a database
// password, in the URL's user part or its parameters.
func TestDatabaseForLog(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"sqlite:modelgate.db", "sqlite:modelgate.db"},
		{"postgres://mg:s3cret@db:5432/modelgate?sslmode=disable", "postgres://***@db:5432/modelgate?sslmode=***"},
		{"postgresql://db/modelgate?password=s3cret&sslmode=require", "postgresql://db/modelgate?password=***&sslmode=***"},
		{"postgres://db/modelgate", "postgres://db/modelgate"},
	} {
		if got := databaseForLog(tc.in); got != tc.want || strings.Contains(got, "s3cret") {
			t.Errorf("databaseForLog(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
