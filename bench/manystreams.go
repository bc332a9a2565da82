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
	Rounds   []streamsRound   `json:"rounds"`   // in the order measured
	Targets  []streamsSummary `json:"targets"`  // proxy, modelgate
	Together bool             `json:"together"` // both targets measured at once in each round
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
//
// First, unmeasured, the same streams go straight to the mock at upBase:
// the harness and the mock then hold, before any target is measured, the
// memory and goroutines that many streams take, which the first target
// would otherwise see them grow into (page faults, collections) while it
// is measured and the second would not.
func runManyStreams(ctx context.Context, o options, key string, up *child, upBase string, ts []streamsTarget) (*streamsReport, error) {
	p := pacing{chunks: o.StreamChunks, gap: o.StreamGap}
	body := chatBody(pacedModel, true)
	client := streamsClient(2 * o.Streams)
	defer client.CloseIdleConnections()
	rep := &streamsReport{Streams: o.Streams, Chunks: p.chunks, GapMS: float64(p.gap) / 1e6, RampS: o.StreamRamp.Seconds(), Together: o.StreamTogether}
	held := o.Streams // at once in a round
	if o.StreamTogether {
		held *= len(ts)
	}
	progress(fmt.Sprintf("many-streams warm-up: %d streams straight to the mock", held))
	var warm streamsLoad
	w := warm.run(ctx, client, streamsSpec{URL: upBase + pacedPath, Key: key, Body: body, N: held, Ramp: o.StreamRamp,
		Events: p.events(), Timeout: o.StreamRamp + p.length() + 2*time.Minute})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if w.Errors > 0 {
		return nil, fmt.Errorf("many-streams warm-up: %d of %d streams straight to the mock failed: %v", w.Errors, held, w.FirstErrors)
	}
	for r := range o.StreamRounds {
		if o.StreamTogether {
			progress(fmt.Sprintf("many-streams round %d/%d: %d streams of %d chunks %s apart through each target at once", r+1, o.StreamRounds, o.Streams, p.chunks, p.gap))
			ms, err := measureStreams(ctx, client, key, body, ts, up, p, o, r+1)
			if err != nil {
				return nil, err
			}
			rep.Rounds = append(rep.Rounds, ms...)
			continue
		}
		order := []int{0, 1}
		if r%2 == 1 {
			order = []int{1, 0}
		}
		for _, i := range order {
			progress(fmt.Sprintf("many-streams round %d/%d %s: %d streams of %d chunks %s apart", r+1, o.StreamRounds, ts[i].name, o.Streams, p.chunks, p.gap))
			ms, err := measureStreams(ctx, client, key, body, ts[i:i+1], up, p, o, r+1)
			if err != nil {
				return nil, err
			}
			rep.Rounds = append(rep.Rounds, ms...)
		}
	}
	rep.summarize(ts)
	return rep, nil
}

// measureStreams runs one round through each of ts at once (one target, or
// both with -stream-together): it lets the targets settle, notes their
// idle figures, resets their peak RSS, holds the streams while sampling,
// and returns the round's figures, one per target.
func measureStreams(ctx context.Context, client *http.Client, key string, body []byte, ts []streamsTarget, up *child, p pacing, o options, round int) ([]streamsRound, error) {
	client.CloseIdleConnections() // the last round's connections, to this target or another
	if !sleepUntil(ctx, time.Now().Add(2*time.Second)) {
		return nil, ctx.Err()
	}
	_ = resetPeakRSS(up.pid())
	upCPU0 := cpuTime(up.pid())
	specs := make([]streamsSpec, len(ts))
	ws := make([]*watch, len(ts))
	for i, t := range ts {
		specs[i] = streamsSpec{URL: t.url, Key: key, Body: body, N: o.Streams, Ramp: o.StreamRamp, Events: p.events(),
			Timeout: o.StreamRamp + p.length() + 2*time.Minute}
		ws[i] = startWatch(ctx, t, specs[i], p, o.StreamPprof, round)
	}
	var wg sync.WaitGroup
	res := make([]streamsResult, len(ts))
	for k := range ts {
		i := k
		if round%2 == 0 {
			i = len(ts) - 1 - k // the targets' loads start in turn first
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = ws[i].load.run(ctx, client, specs[i])
		}()
	}
	wg.Wait()
	upCPU := cpuTime(up.pid()) - upCPU0
	upRSS, _ := peakRSS(up.pid())
	out := make([]streamsRound, len(ts))
	for i, w := range ws {
		m := w.finish(res[i])
		m.CPUUpstream = float64(upCPU.Microseconds()) / float64(o.Streams*len(ts)) // the mock served them all
		m.UpstreamRSS = upRSS
		rss, g := m.perStream(o.Streams)
		progress(fmt.Sprintf("many-streams round %d/%d %s: TTFB p50 %s p99 %s, peak RSS %.1f MB (idle %.1f MB, %.1f KB a stream), goroutines %d→%d (%.2f a stream), errors %d",
			round, o.StreamRounds, m.Target, ms(m.TTFB50), ms(m.TTFB99), float64(m.PeakRSS)/1e6, float64(m.IdleRSS)/1e6, rss/1e3,
			m.IdleGoroutines, m.PeakGoroutines, g, m.Errors))
		out[i] = m
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return out, nil
}

// watch follows one target through a round: its idle figures, then its
// RSS, goroutines and open streams every 250 ms (goroutines every second)
// until finish, and with -stream-pprof its profiles.
type watch struct {
	t       streamsTarget
	m       streamsRound
	load    streamsLoad
	cpu0    time.Duration
	mostRSS int64
	done    chan struct{}
	wg      sync.WaitGroup
	stop    func() // ends the profiles' timers, waits for saves under way
}

func startWatch(ctx context.Context, t streamsTarget, s streamsSpec, p pacing, pprofDir string, round int) *watch {
	w := &watch{t: t, m: streamsRound{Round: round, Target: t.name, IdleGoroutines: -1, PeakGoroutines: -1},
		done: make(chan struct{}), stop: func() {}}
	pid := t.proc.pid()
	w.m.IdleRSS = currentRSS(pid)
	if n, err := countGoroutines(ctx, t.goroutines); err == nil {
		w.m.IdleGoroutines, w.m.PeakGoroutines = n, n
	}
	w.m.HWM = resetPeakRSS(pid) == nil
	w.cpu0 = cpuTime(pid)
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
		w.stop = func() {
			late.Stop()
			profileOnce.Do(func() {}) // returns once a save under way is over
			<-cpu
		}
	}
	w.wg.Add(1)
	go func() { // samples until done
		defer w.wg.Done()
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
			// Only this goroutine writes these until finish has waited for it.
			w.mostRSS = max(w.mostRSS, currentRSS(pid))
			if i%4 == 0 { // a second apart: asking costs the target a little
				if n, err := countGoroutines(ctx, t.goroutines); err == nil {
					w.m.PeakGoroutines = max(w.m.PeakGoroutines, n)
				}
			}
			open := w.load.Open()
			w.m.MostOpen = max(w.m.MostOpen, open)
			if open >= s.N*95/100 {
				profile()
			}
		}
	}()
	return w
}

// finish stops the sampling and returns the target's figures for the
// round, r being its load's result.
func (w *watch) finish(r streamsResult) streamsRound {
	close(w.done)
	w.wg.Wait()
	w.stop()
	m := w.m
	m.streamsResult = r
	pid := w.t.proc.pid()
	if r.Streams+r.Errors > 0 {
		m.CPUTarget = float64((cpuTime(pid) - w.cpu0).Microseconds()) / float64(r.Streams+r.Errors)
	}
	m.PeakRSS = w.mostRSS
	if hwm, err := peakRSS(pid); m.HWM && err == nil {
		m.PeakRSS = hwm
	}
	return m
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
	if rep.Together {
		ramp += ", through both targets together"
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
