package app_test

import (
	"testing"
	"time"

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
