package main

import (
	"testing"
	"time"
)

func TestPairRounds(t *testing.T) {
	round := func(rps, cpu float64, p99ms int) measurement {
		m := measurement{CPUTarget: cpu}
		m.RPS, m.P99 = rps, time.Duration(p99ms)*time.Millisecond
		if rps > 0 {
			m.Requests = int(rps)
		}
		return m
	}
	cases := []struct {
		name             string
		proxy, modelgate []measurement
		thr, cpu, p99    float64
		cpuMid           [2]float64
	}{
		{
			name:      "one round",
			proxy:     []measurement{round(100, 200, 10)},
			modelgate: []measurement{round(90, 250, 12)},
			thr:       0.9, cpu: 1.25, p99: 2, cpuMid: [2]float64{1.25, 1.25},
		},
		{
			// The proxy's own speed moves from round to round; each round
			// is compared with the proxy's in the same round (the ratio of
			// the two medians would be 150/120 = 1.25 here).
			name:      "paired, not medians of each",
			proxy:     []measurement{round(100, 100, 10), round(50, 300, 20), round(80, 120, 12)},
			modelgate: []measurement{round(100, 150, 11), round(50, 330, 22), round(80, 132, 13)},
			thr:       1, cpu: 1.1, p99: 1, cpuMid: [2]float64{1.1, 1.5},
		},
		{
			name:      "a round where the proxy served nothing has no ratio",
			proxy:     []measurement{round(0, 0, 0), round(100, 100, 10), round(100, 100, 10)},
			modelgate: []measurement{round(90, 120, 20), round(80, 130, 13), round(120, 90, 9)},
			thr:       1, cpu: 1.1, p99: 1, cpuMid: [2]float64{0.9, 1.3},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pr := pairRounds(c.proxy, c.modelgate)
			thr, _ := pr.throughput.mid()
			cpu, cpuMid := pr.cpu.mid()
			p99, _ := pr.addedP99.mid()
			if !near(thr, c.thr) || !near(cpu, c.cpu) || !near(p99, c.p99) || !near(cpuMid[0], c.cpuMid[0]) || !near(cpuMid[1], c.cpuMid[1]) {
				t.Errorf("throughput %.3f cpu %.3f %v p99 %.3f; want %.3f %.3f %v %.3f", thr, cpu, cpuMid, p99, c.thr, c.cpu, c.cpuMid, c.p99)
			}
		})
	}
}

func TestSpreadQuartiles(t *testing.T) {
	cases := []struct {
		in     spread
		med    float64
		lo, hi float64
	}{
		{nil, 0, 0, 0},
		{spread{5}, 5, 5, 5},
		{spread{4, 1, 3, 2}, 2.5, 2, 3},
		{spread{9, 1, 5, 3, 7}, 5, 3, 7},
		{spread{10, 1, 2, 3, 4, 5, 6, 7, 8}, 5, 3, 7},
	}
	for _, c := range cases {
		med, q := c.in.mid()
		if !near(med, c.med) || !near(q[0], c.lo) || !near(q[1], c.hi) {
			t.Errorf("mid(%v) = %v %v, want %v [%v %v]", c.in, med, q, c.med, c.lo, c.hi)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
