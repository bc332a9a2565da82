package main

// The report: each target's figures per pass, the per-round comparisons,
// the targets' PASS/FAIL checks, and how they are printed.

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// measurement is one target's result for one pass in one round.
type measurement struct {
	loadResult
	CPUTarget   float64    `json:"cpu_target_us_per_req"`   // the proxy's or modelgate's CPU
	CPUUpstream float64    `json:"cpu_upstream_us_per_req"` // the mock upstream's
	CPULoadgen  float64    `json:"cpu_loadgen_us_per_req"`  // this harness's
	Syscalls    float64    `json:"target_syscalls_per_req"` // the target's read+write system calls
	IdlePct     float64    `json:"machine_idle_pct"`        // share of all CPUs left idle
	StealPct    float64    `json:"machine_steal_pct"`       // share taken by the hypervisor
	SinceStart  [2]float64 `json:"window_s_since_modelgate_start"`
}

// summary is the median over rounds of one target's measurements.
type summary struct {
	Target      string        `json:"target"`
	RPS         float64       `json:"rps"`
	P50ms       float64       `json:"p50_ms"`
	P99ms       float64       `json:"p99_ms"`
	TTFB50ms    float64       `json:"ttfb_p50_ms"`
	Errors      int           `json:"errors"` // summed over rounds
	CPUTarget   float64       `json:"cpu_target_us_per_req"`
	CPUUpstream float64       `json:"cpu_upstream_us_per_req"`
	CPULoadgen  float64       `json:"cpu_loadgen_us_per_req"`
	Syscalls    float64       `json:"target_syscalls_per_req"`
	IdlePct     float64       `json:"machine_idle_pct"`
	StealPct    float64       `json:"machine_steal_pct"`
	Rounds      []measurement `json:"rounds"`
}

// passReport compares the targets of one pass. Each comparison is the
// median over rounds of modelgate's figure against the proxy's in the same
// round (measured seconds apart), with the middle half of the per-round
// values (first to third quartile) to show how far one round can be
// trusted.
type passReport struct {
	Pass    string    `json:"pass"`
	Targets []summary `json:"targets"` // proxy, modelgate
	// Ratio is modelgate's throughput ÷ the proxy's.
	Ratio    float64    `json:"throughput_ratio"`
	RatioMid [2]float64 `json:"throughput_ratio_middle_half"`
	// CPURatio is modelgate's CPU time per request ÷ the proxy's.
	CPURatio    float64    `json:"cpu_per_request_ratio"`
	CPURatioMid [2]float64 `json:"cpu_per_request_ratio_middle_half"`
	// AddedP99ms is modelgate's p99 latency − the proxy's.
	AddedP99ms  float64    `json:"p99_added_ms"`
	AddedP99Mid [2]float64 `json:"p99_added_ms_middle_half"`
	// Like is the chat pass this pass is compared with, when it ran too;
	// LikeCPU is modelgate's CPU per request here ÷ there, the median of
	// the per-round values, and LikeCPUMid their middle half.
	Like       string     `json:"like,omitempty"`
	LikeCPU    float64    `json:"modelgate_cpu_per_request_vs_like,omitempty"`
	LikeCPUMid [2]float64 `json:"modelgate_cpu_per_request_vs_like_middle_half,omitzero"`
}

type check struct {
	Name string `json:"name"`
	Pass bool   `json:"pass"`
	Got  string `json:"got"`
	Want string `json:"want"`
}

type report struct {
	Machine              machine             `json:"machine"`
	Settings             options             `json:"settings"`
	Backend              *backend            `json:"backend"`
	DurationS            float64             `json:"duration_s"`
	WarmupS              float64             `json:"warmup_s"`
	LogLevel             string              `json:"modelgate_log_level"`
	UsageRecords         bool                `json:"modelgate_usage_records"`
	PromptBytes          int                 `json:"prompt_bytes"`
	StreamEvents         int                 `json:"stream_data_events"`
	MessagesStreamEvents int                 `json:"messages_stream_events"` // events of the mock's Messages streams
	PIDs                 map[string]int      `json:"pids"`
	Passes               []passReport        `json:"passes"`
	RSSMB                map[string]float64  `json:"peak_rss_mb"` // after the closed-loop passes, before many-streams
	ManyStreams          *streamsReport      `json:"many_streams,omitempty"`
	Checks               []check             `json:"checks"`
	Errors               int                 `json:"errors"`
	FirstErrors          []string            `json:"first_errors,omitempty"`
	ModelgateExit        string              `json:"modelgate_exit"`
	Logs                 map[string][]string `json:"log_tails,omitempty"` // the children's stderr, when not empty
}

// build fills in the summaries, ratios and checks from res[pass][target][round].
func (rep *report) build(passes []pass, targets []target, res [][][]measurement) {
	for p, ps := range passes {
		pr := passReport{Pass: ps.name}
		for t, tg := range targets {
			rounds := res[p][t]
			s := summary{Target: tg.name, Rounds: rounds}
			if l := ps.requestFor(tg).label; l != "" {
				s.Target = l
			}
			var rps, p50, p99, ttfb, ct, cu, cl, sc, idle, steal []float64
			for _, m := range rounds {
				rps = append(rps, m.RPS)
				p50, p99, ttfb = append(p50, float64(m.P50)/1e6), append(p99, float64(m.P99)/1e6), append(ttfb, float64(m.TTFB50)/1e6)
				ct, cu, cl = append(ct, m.CPUTarget), append(cu, m.CPUUpstream), append(cl, m.CPULoadgen)
				sc = append(sc, m.Syscalls)
				idle, steal = append(idle, m.IdlePct), append(steal, m.StealPct)
				s.Errors += m.Errors
				rep.Errors += m.Errors
				for _, e := range m.FirstErrors {
					if len(rep.FirstErrors) < maxErrorTexts {
						rep.FirstErrors = append(rep.FirstErrors, ps.name+" "+tg.name+": "+e)
					}
				}
			}
			s.RPS, s.P50ms, s.P99ms, s.TTFB50ms = median(rps), median(p50), median(p99), median(ttfb)
			s.CPUTarget, s.CPUUpstream, s.CPULoadgen = median(ct), median(cu), median(cl)
			s.Syscalls = median(sc)
			s.IdlePct, s.StealPct = median(idle), median(steal)
			pr.Targets = append(pr.Targets, s)
		}
		rounds := pairRounds(res[p][0], res[p][1])
		pr.Ratio, pr.RatioMid = rounds.throughput.mid()
		pr.CPURatio, pr.CPURatioMid = rounds.cpu.mid()
		pr.AddedP99ms, pr.AddedP99Mid = rounds.addedP99.mid()
		if l := slices.IndexFunc(passes, func(q pass) bool { return q.name == ps.like }); l >= 0 {
			pr.Like = ps.like
			pr.LikeCPU, pr.LikeCPUMid = cpuVersus(res[p][1], res[l][1]).mid()
		}
		rep.Passes = append(rep.Passes, pr)
		proxy := "proxy"
		if ps.proxy != nil {
			proxy = ps.proxy.label
		}
		rep.Checks = append(rep.Checks, check{Name: ps.name + " throughput modelgate ÷ " + proxy, Pass: pr.Ratio >= minRatio,
			Got: fmt.Sprintf("%.3f", pr.Ratio), Want: fmt.Sprintf("≥ %.2f", minRatio)})
		maxCPU := maxCPURatio
		if ps.stream {
			maxCPU = maxCPURatioSt
		}
		rep.Checks = append(rep.Checks, check{Name: ps.name + " CPU per request modelgate ÷ " + proxy, Pass: pr.CPURatio > 0 && pr.CPURatio <= maxCPU,
			Got: fmt.Sprintf("%.2f", pr.CPURatio), Want: fmt.Sprintf("≤ %.2f", maxCPU)})
		rep.Checks = append(rep.Checks, check{Name: ps.name + " p99 latency added", Pass: pr.AddedP99ms < maxAddedP99ms,
			Got: fmt.Sprintf("%.2f ms", pr.AddedP99ms), Want: fmt.Sprintf("< %.0f ms", maxAddedP99ms)})
	}
	if len(passes) > 0 {
		rss, ok := rep.RSSMB["modelgate"]
		rep.Checks = append(rep.Checks, check{Name: "modelgate peak RSS (VmHWM)", Pass: ok && rss < maxRSSBytes/1e6,
			Got: fmt.Sprintf("%.1f MB", rss), Want: fmt.Sprintf("< %.0f MB", maxRSSBytes/1e6)})
	}
	if ms := rep.ManyStreams; ms != nil {
		rep.Checks = append(rep.Checks, ms.checks()...)
		for _, r := range ms.Rounds {
			rep.Errors += r.Errors
			for _, e := range r.FirstErrors {
				if len(rep.FirstErrors) < maxErrorTexts {
					rep.FirstErrors = append(rep.FirstErrors, fmt.Sprintf("many-streams round %d %s: %s", r.Round, r.Target, e))
				}
			}
		}
	}
}

func (rep *report) print(out io.Writer) {
	m, s := rep.Machine, rep.Settings
	fmt.Fprintf(out, "machine:  %d CPUs, GOMAXPROCS %d, %s %s", m.CPUs, m.GOMAXPROCS, m.Go, m.OSArch)
	if m.CPUModel != "" {
		fmt.Fprintf(out, ", %s", m.CPUModel)
	}
	fmt.Fprint(out, "\nsettings: ")
	if len(rep.Passes) > 0 {
		fmt.Fprintf(out, "%d clients, %gs measured after %gs warm-up, %d round(s) (median reported), ", s.Clients, rep.DurationS, rep.WarmupS, s.Rounds)
	}
	fmt.Fprintf(out, "prompt %d B of text\n", rep.PromptBytes)
	if s.Tenants > 1 {
		fmt.Fprintf(out, "          requests spread over %d accounts with a key each, every client taking the keys in turn\n", s.Tenants)
	}
	if s.Usage != "" {
		fmt.Fprintf(out, "          modelgate's usage section: %s\n", s.Usage)
	}
	if s.Group != "" {
		fmt.Fprintf(out, "          modelgate's default group: %s\n", s.Group)
	}
	if s.Extra != "" {
		fmt.Fprintf(out, "          modelgate's config also has: %s\n", s.Extra)
	}
	if b := rep.Backend; b != nil && b.Name != "sqlite" {
		fmt.Fprintf(out, "          modelgate's state: %s %s, redis %s\n", b.Name, b.Database, b.Redis)
	}
	if ms := rep.ManyStreams; ms != nil && ms.Metrics {
		fmt.Fprintln(out, "          modelgate's metrics listener on (for go_goroutines), added by the many-streams pass")
	}
	fmt.Fprintf(out, "          modelgate log level %s, request logging %t, usage records on; streams carry %d data events",
		rep.LogLevel, s.LogRequests, rep.StreamEvents)
	if slices.ContainsFunc(rep.Passes, func(p passReport) bool { return strings.HasPrefix(p.Pass, "messages") }) {
		fmt.Fprintf(out, " (Messages streams %d events)", rep.MessagesStreamEvents)
	}
	fmt.Fprint(out, "\n\n")

	if len(rep.Passes) > 0 {
		rep.printClosedLoop(out)
	}
	if rep.ManyStreams != nil {
		rep.ManyStreams.print(out)
	}
	fmt.Fprintf(out, "peak RSS (VmHWM): modelgate %.1f MB, proxy %.1f MB, upstream %.1f MB",
		rep.RSSMB["modelgate"], rep.RSSMB["proxy"], rep.RSSMB["upstream"])
	if rep.ManyStreams != nil {
		fmt.Fprint(out, " before the many-streams pass")
	}
	fmt.Fprintf(out, "\nmodelgate: %s", rep.ModelgateExit)
	if len(rep.Logs["modelgate"]) == 0 {
		fmt.Fprint(out, "; nothing logged at warn or above")
	}
	fmt.Fprintln(out)
	for _, name := range []string{"modelgate", "proxy", "upstream"} {
		if lines := rep.Logs[name]; len(lines) > 0 {
			fmt.Fprintf(out, "%s stderr (last lines):\n    %s\n", name, strings.Join(lines, "\n    "))
		}
	}
	if len(rep.Passes) > 0 {
		rep.printWindows(out)
	}
	fmt.Fprintln(out, "\ntargets:")
	for _, c := range rep.Checks {
		verdict := "PASS"
		if !c.Pass {
			verdict = "FAIL"
		}
		fmt.Fprintf(out, "  %s  %-56s %s (want %s)\n", verdict, c.Name, c.Got, c.Want)
	}
	if rep.Errors > 0 {
		fmt.Fprintf(out, "\n%d requests FAILED; first errors:\n", rep.Errors)
		for _, e := range rep.FirstErrors {
			fmt.Fprintln(out, "  "+e)
		}
	}
}

// printClosedLoop prints the closed-loop passes' table and comparisons.
func (rep *report) printClosedLoop(out io.Writer) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "pass\ttarget\treq/s\tp50\tp99\tTTFB p50\terrors\tCPU µs/req: target\tupstream\tloadgen\tsyscalls/req\tmachine idle\tsteal\t")
	for _, p := range rep.Passes {
		for _, t := range p.Targets {
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.2fms\t%.2fms\t%.2fms\t%d\t%.0f\t%.0f\t%.0f\t%.1f\t%.0f%%\t%.0f%%\t\n", p.Pass, t.Target, t.RPS,
				t.P50ms, t.P99ms, t.TTFB50ms, t.Errors, t.CPUTarget, t.CPUUpstream, t.CPULoadgen, t.Syscalls, t.IdlePct, t.StealPct)
		}
	}
	_ = tw.Flush()

	fmt.Fprintln(out)
	for _, p := range rep.Passes {
		fmt.Fprintf(out, "%-19s modelgate ÷ proxy: throughput %.3f, CPU per request %.2f; p99 added %.2f ms\n", p.Pass+":", p.Ratio, p.CPURatio, p.AddedP99ms)
		if len(p.Targets[0].Rounds) >= 4 {
			fmt.Fprintf(out, "%-19s middle half of the rounds:  %.3f–%.3f,          %.2f–%.2f;        %.2f–%.2f ms\n", "",
				p.RatioMid[0], p.RatioMid[1], p.CPURatioMid[0], p.CPURatioMid[1], p.AddedP99Mid[0], p.AddedP99Mid[1])
		}
	}
	for _, p := range rep.Passes {
		if p.Like == "" {
			continue
		}
		fmt.Fprintf(out, "%-19s modelgate's CPU per request ÷ its own on the %s pass: %.2f", p.Pass+":", p.Like, p.LikeCPU)
		if len(p.Targets[1].Rounds) >= 4 {
			fmt.Fprintf(out, " (middle half %.2f–%.2f)", p.LikeCPUMid[0], p.LikeCPUMid[1])
		}
		fmt.Fprintln(out)
	}
	if slices.ContainsFunc(rep.Passes, func(p passReport) bool { return strings.HasPrefix(p.Pass, "translated") }) {
		fmt.Fprintln(out, "translated passes: the proxy cannot translate, so their proxy figures are its chat passes' (the same chat request, measured in the same rounds)")
	}
}

// printWindows prints when each closed-loop window was measured, to match
// a profile taken of the whole run.
func (rep *report) printWindows(out io.Writer) {
	fmt.Fprintf(out, "\nfor profiling: modelgate pid %d; measured windows (s since modelgate started):\n", rep.PIDs["modelgate"])
	type window struct {
		m     measurement
		label string
	}
	var ws []window
	for _, p := range rep.Passes {
		for _, t := range p.Targets {
			for i, r := range t.Rounds {
				ws = append(ws, window{r, fmt.Sprintf("round %d %-10s %-9s", i+1, p.Pass, t.Target)})
			}
		}
	}
	slices.SortFunc(ws, func(a, b window) int { return a.m.Start.Compare(b.m.Start) })
	for _, w := range ws {
		fmt.Fprintf(out, "  %s %s – %s  (+%.1fs – +%.1fs)\n", w.label,
			w.m.Start.Format("15:04:05.000"), w.m.End.Format("15:04:05.000"), w.m.SinceStart[0], w.m.SinceStart[1])
	}
}
