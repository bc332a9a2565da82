package deploy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/modelgate/modelgate/internal/config"
)

// loadGateway loads a gateway config file with the project's own loader,
// with env as the whole environment. Every problem fails the test.
func loadGateway(t *testing.T, path string, env map[string]string) *config.Config {
	t.Helper()
	getenv := func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
	cfg, problems, err := config.Load(path, getenv)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", path, p)
	}
	if kind, _, err := cfg.DatabaseKind(); err != nil || kind != "postgres" {
		t.Errorf("%s: database is %q (%v), want a postgres:// DSN", path, kind, err)
	}
	if cfg.Redis == "" {
		t.Errorf("%s: no redis: with several replicas, rate limits would be per replica", path)
	}
	return cfg
}

// loadGatewayText is loadGateway for a config held in a string (a ConfigMap's).
func loadGatewayText(t *testing.T, name, text string, env map[string]string) *config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return loadGateway(t, path, env)
}
