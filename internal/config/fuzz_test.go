package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzLoad feeds arbitrary files to Load: it must never panic, must return a
// config exactly when it returns no error, and must keep problems sorted.
func FuzzLoad(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "*", "*.yaml"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seed files: %v", err)
	}
	for _, name := range seeds {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	env := envOf(map[string]string{"KEY": "sk-test", "OPENAI_API_KEY": "a: b # c", "EMPTY": "", "NUM": "7"})
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "config.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, ps, err := Load(path, env)
		if err != nil {
			if c != nil || ps != nil {
				t.Fatalf("error %v came with a config or problems", err)
			}
			return
		}
		if c == nil {
			t.Fatal("nil config without error")
		}
		if !slices.IsSortedFunc(ps, func(a, b Problem) int { return a.Line - b.Line }) {
			t.Fatalf("problems not sorted by line: %q", ps)
		}
		for _, p := range ps {
			_ = p.String()
		}
		c.ApplyDefaults() // idempotent: must not panic on whatever was decoded
		_ = c.Validate()
		_, _, _ = c.DatabaseKind()
	})
}
