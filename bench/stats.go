package main

// What a role process (the upstream, the proxy) tells the harness about
// itself, on a loopback listener of its own so that the served traffic
// never passes it: its goroutine count, and Go's profiles for
// `go tool pprof` (heap and goroutine, to compare with modelgate's).

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
)

// serveStats starts the stats listener and returns its address.
func serveStats() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("stats listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /goroutines", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(strconv.AppendInt(nil, int64(runtime.NumGoroutine()), 10))
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index) // heap, goroutine, allocs, … by name
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/runtime-metrics", runtimeMetrics)
	go func() { _ = http.Serve(ln, mux) }()
	return ln.Addr().String(), nil
}

// runtimeMetrics writes every scalar runtime/metrics sample, a name and a
// value a line (the same as modelgate's profiling build serves).
func runtimeMetrics(w http.ResponseWriter, _ *http.Request) {
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
}

// roleAddrs splits a role's first line of output: the address it serves
// on, then its stats listener's.
func roleAddrs(line string) (addr, stats string) {
	f := strings.Fields(line)
	switch len(f) {
	case 0:
		return "", ""
	case 1:
		return f[0], ""
	}
	return f[0], f[1]
}
