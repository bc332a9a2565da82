package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/store/pgtest"
)

// TestMigrate runs modelgate migrate twice on each database: the first run
// creates the schema, the second finds nothing to do, and both report the
// newest version. Then keys work on the migrated database.
func TestMigrate(t *testing.T) {
	for _, c := range []struct {
		name, kind string
		database   func(t *testing.T) string
	}{
		{"sqlite", "sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "mg.db") }},
		{"postgres", "postgres", func(t *testing.T) string { return pgtest.DSN(t) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := newCLI(t, "")
			body, err := os.ReadFile(cl.cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, rest, _ := strings.Cut(string(body), "\n")
			if err := os.WriteFile(cl.cfg, []byte("database: "+c.database(t)+"\n"+rest), 0o600); err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				code, out, stderr := cl.run("migrate")
				if code != 0 || !strings.HasPrefix(out, c.kind+" schema is at version ") {
					t.Fatalf("migrate #%d = %d, %q, %q", i+1, code, out, stderr)
				}
			}
			if code, _, stderr := cl.run("keys", "create", "--group", "basic", "--account", "acme"); code != 0 {
				t.Fatalf("keys create after migrate = %d, %q", code, stderr)
			}
			if code, _, stderr := cl.run("migrate", "extra"); code != 2 || !strings.Contains(stderr, `unexpected argument "extra"`) {
				t.Errorf("migrate extra = %d, %q", code, stderr)
			}
		})
	}
}
