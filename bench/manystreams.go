package main

// The many-streams pass: N long streams held at once through each target
// (-streams, default 5,000; -stream-chunks chunks -stream-gap apart from
// the mock, 20 × 500 ms by default, so each lasts ~10 s), and what holding
// them costs: peak RSS against the idle process's, goroutines, CPU per
// stream, and the time to first byte of streams opened together.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Targets the many-streams pass checks (issue 33).
const (
	maxStreamsRSSRatio  = 1.0  // modelgate's peak RSS ÷ the proxy's
	maxStreamsTTFBRatio = 1.10 // modelgate's median time to first byte ÷ the proxy's
)

// streamsRound is one target's figures in one round.
type streamsRound struct {
	Round  int    `json:"round"`
	Target string `json:"target"`
	streamsResult
	IdleRSS int64 `json:"idle_rss_bytes"` // VmRSS just before the round
	PeakRSS int64 `json:"peak_rss_bytes"` // VmHWM, reset before the round (or the most VmRSS sampled, if it could not be)
	HWM     bool  `json:"peak_is_vmhwm"`
	// Goroutines, from the proxy's stats listener or modelgate's
	// go_goroutines metric; -1 when unknown.
	IdleGoroutines int     `json:"idle_goroutines"`
	PeakGoroutines int     `json:"peak_goroutines"` // the most sampled (every second)
	MostOpen       int     `json:"most_open"`       // the most streams open at once, seen by the harness
	CPUTarget      float64 `json:"cpu_target_us_per_stream"`
	CPUUpstream    float64 `json:"cpu_upstream_us_per_stream"`
	UpstreamRSS    int64   `json:"upstream_peak_rss_bytes"`
}

// perStream is what one held stream costs the target in RSS (bytes) and
// goroutines: (peak − idle) ÷ streams asked for.
func (r streamsRound) perStream(n int) (rss, goroutines float64) {
	rss = float64(r.PeakRSS-r.IdleRSS) / float64(n)
	goroutines = -1
	if r.IdleGoroutines >= 0 && r.PeakGoroutines >= 0 {
		goroutines = float64(r.PeakGoroutines-r.IdleGoroutines) / float64(n)
	}
	return rss, goroutines
}

// streamsSummary is one target's median over the rounds.
type streamsSummary struct {
	Target         string  `json:"target"`
	PeakRSSMB      float64 `json:"peak_rss_mb"`
	IdleRSSMB      float64 `json:"idle_rss_mb"`
	RSSPerStreamKB float64 `json:"rss_per_stream_kb"`
	GoroutinesPer  float64 `json:"goroutines_per_stream"`
	TTFB50ms       float64 `json:"ttfb_p50_ms"`
	TTFB99ms       float64 `json:"ttfb_p99_ms"`
	AllOpenS       float64 `json:"all_open_s"`
	Len50s         float64 `json:"length_p50_s"`
	CPUTarget      float64 `json:"cpu_target_us_per_stream"`
	Errors         int     `json:"errors"` // summed over rounds
}

// streamsReport is the many-streams pass's part of the report.
type streamsReport struct {
	Streams  int              `json:"streams"`
	Chunks   int              `json:"chunks"`
	GapMS    float64          `json:"gap_ms"`
	RampS    float64          `json:"ramp_s"`
	Rounds   []streamsRound   `json:"rounds"`  // in the order measured
	Targets  []streamsSummary `json:"targets"` // proxy, modelgate
	RSSRatio float64          `json:"peak_rss_ratio"`
	TTFB     float64          `json:"ttfb_p50_ratio"`
	Metrics  bool             `json:"modelgate_metrics_added"` // the harness turned modelgate's metrics on, for go_goroutines
}

// streamsTarget is a target with what the pass reads about it besides its
// /proc files.
type streamsTarget struct {
	target
	url        string // where its streams are asked for
	goroutines string // a URL answering its goroutine count (a number, or Prometheus text with go_goroutines); "" for none
	pprof      string // base URL of its /debug/pprof/; "" for none
}

// runManyStreams measures every target o.StreamRounds times, alternating
// which goes first, and returns the pass's report.
func runManyStreams(ctx context.Context, o options, key string, up *child, ts []streamsTarget) (*streamsReport, error) {
	p := pacing{chunks: o.StreamChunks, gap: o.StreamGap}
	body := chatBody(pacedModel, true)
	client := streamsClient(o.Streams)
	defer client.CloseIdleConnections()
	rep := &streamsReport{Streams: o.Streams, Chunks: p.chunks, GapMS: float64(p.gap) / 1e6, RampS: o.StreamRamp.Seconds()}
	for r := range o.StreamRounds {
		order := []int{0, 1}
		if r%2 == 1 {
			order = []int{1, 0}
		}
		for _, i := range order {
			t := ts[i]
			progress(fmt.Sprintf("many-streams round %d/%d %s: %d streams of %d chunks %s apart", r+1, o.StreamRounds, t.name, o.Streams, p.chunks, p.gap))
			s := streamsSpec{URL: t.url, Key: key, Body: body, N: o.Streams, Ramp: o.StreamRamp, Events: p.events(),
				Timeout: o.StreamRamp + p.length() + 2*time.Minute}
			m, err := measureStreams(ctx, client, s, t, up, p, o.StreamPprof, r+1)
			if err != nil {
				return nil, err
			}
			rss, g := m.perStream(o.Streams)
			progress(fmt.Sprintf("many-streams round %d/%d %s: TTFB p50 %s p99 %s, peak RSS %.1f MB (idle %.1f MB, %.1f KB a stream), goroutines %d→%d (%.2f a stream), errors %d",
				r+1, o.StreamRounds, t.name, ms(m.TTFB50), ms(m.TTFB99), float64(m.PeakRSS)/1e6, float64(m.IdleRSS)/1e6, rss/1e3,
				m.IdleGoroutines, m.PeakGoroutines, g, m.Errors))
			rep.Rounds = append(rep.Rounds, m)
		}
	}
	rep.summarize(ts)
	return rep, nil
}

// measureStreams runs one round through t: it lets the target settle,
// notes its idle figures, resets its peak RSS, holds the streams while
// sampling, and returns the round's figures.
func measureStreams(ctx context.Context, client *http.Client, s streamsSpec, t streamsTarget, up *child, p pacing, pprofDir string, round int) (streamsRound, error) {
	client.CloseIdleConnections() // the last round's connections, to this target or another
	if !sleepUntil(ctx, time.Now().Add(2*time.Second)) {
		return streamsRound{}, ctx.Err()
	}
	m := streamsRound{Round: round, Target: t.name, IdleGoroutines: -1, PeakGoroutines: -1}
	pid := t.proc.pid()
	m.IdleRSS = currentRSS(pid)
	if n, err := countGoroutines(ctx, t.goroutines); err == nil {
		m.IdleGoroutines, m.PeakGoroutines = n, n
	}
	m.HWM = resetPeakRSS(pid) == nil
	_ = resetPeakRSS(up.pid())
	cpu0, upCPU0 := cpuTime(pid), cpuTime(up.pid())

	var profileOnce sync.Once
	profile := func() {} // saves the target's profiles, once: when 95% of the streams are open, or late in the round
	if pprofDir != "" && t.pprof != "" {
		prefix := filepath.Join(pprofDir, fmt.Sprintf("%s-round%d", t.name, round))
		profile = func() { profileOnce.Do(func() { saveProfiles(ctx, t.pprof, prefix) }) }
		late := time.AfterFunc(s.Ramp+p.length()*9/10, profile)
		cpu := make(chan struct{})
		go func() { // the whole round's CPU profile
			defer close(cpu)
			secs := int((s.Ramp + p.length()).Seconds() + 1)
			if err := fetchTo(ctx, t.pprof+"/debug/pprof/profile?seconds="+strconv.Itoa(secs), prefix+"-cpu.pb.gz"); err != nil {
				progress("profile: " + err.Error())
			}
		}()
		defer func() {
			late.Stop()
			profileOnce.Do(func() {}) // returns once a save under way is over
			<-cpu
		}()
	}
	var load streamsLoad
	var mostRSS int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // samples until done
		defer wg.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			// Only this goroutine writes these until wg.Wait returns.
			mostRSS = max(mostRSS, currentRSS(pid))
			if i%4 == 0 { // a second apart: asking costs the target a little
				if n, err := countGoroutines(ctx, t.goroutines); err == nil {
					m.PeakGoroutines = max(m.PeakGoroutines, n)
				}
			}
			open := load.Open()
			m.MostOpen = max(m.MostOpen, open)
			if open >= s.N*95/100 {
				profile()
			}
		}
	}()
	m.streamsResult = load.run(ctx, client, s)
	close(done)
	wg.Wait()
	if ctx.Err() != nil {
		return m, ctx.Err()
	}
	if n := float64(s.N); n > 0 {
		m.CPUTarget = float64((cpuTime(pid) - cpu0).Microseconds()) / n
		m.CPUUpstream = float64((cpuTime(up.pid()) - upCPU0).Microseconds()) / n
	}
	m.PeakRSS = mostRSS
	if hwm, err := peakRSS(pid); m.HWM && err == nil {
		m.PeakRSS = hwm
	}
	m.UpstreamRSS, _ = peakRSS(up.pid())
	return m, nil
}

// summarize fills in the medians over rounds and the ratios.
func (rep *streamsReport) summarize(ts []streamsTarget) {
	for _, t := range ts {
		s := streamsSummary{Target: t.name}
		var peak, idle, per, gper, ttfb, ttfb99, open, length, cpu []float64
		for _, r := range rep.Rounds {
			if r.Target != t.name {
				continue
			}
			rss, g := r.perStream(rep.Streams)
			peak, idle, per = append(peak, float64(r.PeakRSS)/1e6), append(idle, float64(r.IdleRSS)/1e6), append(per, rss/1e3)
			if g >= 0 {
				gper = append(gper, g)
			}
			ttfb, ttfb99 = append(ttfb, float64(r.TTFB50)/1e6), append(ttfb99, float64(r.TTFB99)/1e6)
			open, length = append(open, r.AllOpen.Seconds()), append(length, r.Len50.Seconds())
			cpu = append(cpu, r.CPUTarget)
			s.Errors += r.Errors
		}
		s.PeakRSSMB, s.IdleRSSMB, s.RSSPerStreamKB, s.TTFB50ms, s.TTFB99ms = median(peak), median(idle), median(per), median(ttfb), median(ttfb99)
		s.AllOpenS, s.Len50s, s.CPUTarget = median(open), median(length), median(cpu)
		s.GoroutinesPer = -1
		if len(gper) > 0 {
			s.GoroutinesPer = median(gper)
		}
		rep.Targets = append(rep.Targets, s)
	}
	if len(rep.Targets) == 2 {
		px, mg := rep.Targets[0], rep.Targets[1]
		if px.PeakRSSMB > 0 {
			rep.RSSRatio = mg.PeakRSSMB / px.PeakRSSMB
		}
		if px.TTFB50ms > 0 {
			rep.TTFB = mg.TTFB50ms / px.TTFB50ms
		}
	}
}

// checks are the pass's targets.
func (rep *streamsReport) checks() []check {
	return []check{
		{Name: "many-streams peak RSS modelgate ÷ proxy", Pass: rep.RSSRatio > 0 && rep.RSSRatio <= maxStreamsRSSRatio,
			Got: fmt.Sprintf("%.2f", rep.RSSRatio), Want: fmt.Sprintf("≤ %.2f", maxStreamsRSSRatio)},
		{Name: "many-streams TTFB p50 modelgate ÷ proxy", Pass: rep.TTFB > 0 && rep.TTFB <= maxStreamsTTFBRatio,
			Got: fmt.Sprintf("%.2f", rep.TTFB), Want: fmt.Sprintf("≤ %.2f", maxStreamsTTFBRatio)},
	}
}

func (rep *streamsReport) print(out io.Writer) {
	ramp := "all opened at once"
	if rep.RampS > 0 {
		ramp = fmt.Sprintf("opened over %gs", rep.RampS)
	}
	fmt.Fprintf(out, "\nmany-streams: %d streams of %d chunks %gms apart, %s; per stream = (peak − idle) ÷ %d;\n",
		rep.Streams, rep.Chunks, rep.GapMS, ramp, rep.Streams)
	fmt.Fprintln(out, "  all open: from the first request to the last first byte; length: a stream's, median; most: streams open at once, most seen")
	fmt.Fprintf(out, "  %-5s %-9s %9s %9s %9s %9s %6s %9s %8s %10s %13s %9s %6s\n",
		"round", "target", "TTFB p50", "TTFB p99", "all open", "length", "most", "peak RSS", "idle", "KB/stream", "goroutines", "µs/stream", "errors")
	for _, r := range rep.Rounds {
		rss, g := r.perStream(rep.Streams)
		gs := "?"
		if g >= 0 {
			gs = fmt.Sprintf("%d→%d", r.IdleGoroutines, r.PeakGoroutines)
		}
		fmt.Fprintf(out, "  %-5d %-9s %9s %9s %8.2fs %8.2fs %6d %7.1fMB %6.1fMB %10.1f %13s %9.0f %6d\n",
			r.Round, r.Target, ms(r.TTFB50), ms(r.TTFB99), r.AllOpen.Seconds(), r.Len50.Seconds(), r.MostOpen,
			float64(r.PeakRSS)/1e6, float64(r.IdleRSS)/1e6, rss/1e3, gs, r.CPUTarget, r.Errors)
	}
	for _, s := range rep.Targets {
		g := "goroutines unknown"
		if s.GoroutinesPer >= 0 {
			g = fmt.Sprintf("%.2f goroutines", s.GoroutinesPer)
		}
		fmt.Fprintf(out, "  %-9s median: peak RSS %.1f MB, %.1f KB and %s a stream, TTFB p50 %.1f ms (p99 %.1f ms), %.0f µs CPU a stream\n",
			s.Target, s.PeakRSSMB, s.RSSPerStreamKB, g, s.TTFB50ms, s.TTFB99ms, s.CPUTarget)
	}
	fmt.Fprintf(out, "  modelgate ÷ proxy: peak RSS %.2f, TTFB p50 %.2f\n", rep.RSSRatio, rep.TTFB)
}

// currentRSS returns a process's resident set size (VmRSS) in bytes, or 0.
func currentRSS(pid int) int64 {
	v, _ := procStatus(pid, "VmRSS:")
	return v
}

// resetPeakRSS sets a process's VmHWM to its current RSS (Linux ≥ 4.0),
// so that the next reading is the peak since now.
func resetPeakRSS(pid int) error {
	return os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0)
}

// countGoroutines asks url for a goroutine count: a bare number, or
// Prometheus text with a go_goroutines sample.
func countGoroutines(ctx context.Context, url string) (int, error) {
	if url == "" {
		return 0, fmt.Errorf("no goroutine count")
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept-Encoding", "identity") // spare the target compressing its metrics
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: HTTP %d", url, resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "go_goroutines "); ok {
			line = v
		} else if strings.HasPrefix(line, "#") || strings.ContainsAny(line, " {") {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(line), 64)
		if err == nil {
			return int(f), nil
		}
	}
	return 0, fmt.Errorf("%s: no goroutine count", url)
}

// saveProfiles writes (besides the round's CPU profile, prefix-cpu.pb.gz,
// which measureStreams takes), from the /debug/ served under base: the runtime's
// metrics (runtime/metrics, e.g. /gc/stack/starting-size:bytes) to
// prefix-runtime-metrics.txt; the heap profile's text form, which ends with runtime.MemStats (stacks, heap in
// use, the GC's goal) as they stand, to prefix-memstats.txt; then, after a
// collection, so that it shows what is live, the heap profile to
// prefix-heap.pb.gz; and the goroutine profile to prefix-goroutine.pb.gz
// (for `go tool pprof`).
func saveProfiles(ctx context.Context, base, prefix string) {
	for _, f := range []struct{ path, file string }{
		{"runtime-metrics", "runtime-metrics.txt"},
		{"pprof/heap?debug=1", "memstats.txt"}, {"pprof/heap?gc=1", "heap.pb.gz"}, {"pprof/goroutine", "goroutine.pb.gz"},
	} {
		if err := fetchTo(ctx, base+"/debug/"+f.path, prefix+"-"+f.file); err != nil {
			progress("profile: " + err.Error())
		}
	}
	progress("profiles saved: " + prefix + "-{runtime-metrics.txt,memstats.txt,heap.pb.gz,goroutine.pb.gz}")
}

func fetchTo(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: HTTP %d", url, resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", url, err)
	}
	return f.Close()
}
