package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/app"
	"github.com/modelgate/modelgate/internal/config"
	"github.com/modelgate/modelgate/internal/usage"
)

// The configuration fills in the usage section's defaults itself (it does
// not import the recorder); they must stay the recorder's, which the docs
// and benchmarks describe.
func TestUsageDefaultsMatchTheRecorder(t *testing.T) {
	u := config.Default().Usage
	if u.BatchSize != usage.DefaultBatchSize || time.Duration(u.FlushInterval) != usage.DefaultFlushInterval {
		t.Fatalf("config's usage defaults %d, %v; the recorder's %d, %v",
			u.BatchSize, time.Duration(u.FlushInterval), usage.DefaultBatchSize, usage.DefaultFlushInterval)
	}
}

// max_connections takes the default from the file limit serve reads only
// when it is not set, and there is no cap where no limit is known.
func TestMaxConnsFromFileLimit(t *testing.T) {
	for _, tt := range []struct {
		name       string
		configured int
		fileLimit  uint64
		want       int
	}{
		{"default at 1024", 0, 1024, 448},
		{"default at 256", 0, 256, 64},
		{"no limit known", 0, 0, 0},
		{"configured", 500, 1024, 500},
		{"configured, no limit known", 500, 0, 500},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t, "http://127.0.0.1:1")
			cfg.MaxConnections = tt.configured
			a, err := app.New(context.Background(), cfg, app.Options{Logger: testLogger(t), FileLimit: tt.fileLimit})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if got := a.MaxConns(); got != tt.want {
				t.Errorf("MaxConns = %d, want %d", got, tt.want)
			}
		})
	}
}
