package main

// A profiling build of modelgate for the many-streams pass (-stream-pprof):
// the same sources plus one file, added with `go build -overlay` so the
// repository is not touched, that serves net/http/pprof and the runtime's
// metrics (runtime/metrics: stack sizes among them) on the loopback
// address in MODELGATE_BENCH_PPROF. modelgate itself has no pprof endpoint.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// pprofEnv names the variable the profiling build reads its address from.
const pprofEnv = "MODELGATE_BENCH_PPROF"

const pprofSource = `package main

import (
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/metrics"
)

// Added by the benchmark harness's -stream-pprof build, never committed.
func init() {
	addr := os.Getenv("` + pprofEnv + `")
	if addr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/runtime-metrics", func(w http.ResponseWriter, _ *http.Request) {
		descs := metrics.All()
		samples := make([]metrics.Sample, len(descs))
		for i := range descs {
			samples[i].Name = descs[i].Name
		}
		metrics.Read(samples)
		for _, s := range samples {
			switch s.Value.Kind() {
			case metrics.KindUint64:
				fmt.Fprintln(w, s.Name, s.Value.Uint64())
			case metrics.KindFloat64:
				fmt.Fprintln(w, s.Name, s.Value.Float64())
			}
		}
	})
	go func() { _ = http.ListenAndServe(addr, mux) }()
}
`

// pprofOverlay writes, in dir, the overlay that adds pprofSource to
// ./cmd/modelgate of the module in src ("": the current directory), and
// returns the overlay file's path for go build -overlay.
func pprofOverlay(src, dir string) (string, error) {
	module, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, "benchpprof.go")
	if err := os.WriteFile(file, []byte(pprofSource), 0o600); err != nil {
		return "", err
	}
	b, err := json.Marshal(map[string]map[string]string{
		"Replace": {filepath.Join(module, "cmd", "modelgate", "zz_benchpprof.go"): file},
	})
	if err != nil {
		return "", err
	}
	overlay := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlay, b, 0o600); err != nil {
		return "", fmt.Errorf("writing the pprof overlay: %w", err)
	}
	return overlay, nil
}
