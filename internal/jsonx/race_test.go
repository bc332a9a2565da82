//go:build race

package jsonx

// raceEnabled: under the race detector sync.Pool drops some of what it is
// given, so allocation counts of pooled paths are not exact.
const raceEnabled = true
