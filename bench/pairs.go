package main

import "slices"

// pairedRounds holds, for each round of a pass, modelgate's figures against
// the proxy's from the same round. The VM's speed moves within seconds
// (the proxy's CPU per streamed request by a fifth between two adjacent
// 2 s windows), so a figure is only compared with one measured next to it.
type pairedRounds struct {
	throughput, cpu, addedP99 spread
}

// pairRounds pairs proxy[r] with modelgate[r]; a round where the proxy
// served nothing has no ratio.
func pairRounds(proxy, modelgate []measurement) pairedRounds {
	var pr pairedRounds
	for r := range min(len(proxy), len(modelgate)) {
		px, mg := proxy[r], modelgate[r]
		if px.RPS > 0 {
			pr.throughput = append(pr.throughput, mg.RPS/px.RPS)
		}
		if px.CPUTarget > 0 {
			pr.cpu = append(pr.cpu, mg.CPUTarget/px.CPUTarget)
		}
		if px.Requests > 0 && mg.Requests > 0 {
			pr.addedP99 = append(pr.addedP99, float64(mg.P99-px.P99)/1e6)
		}
	}
	return pr
}

// cpuVersus returns, round by round, one target's CPU per request in a
// pass ÷ the same target's in another pass of the same round.
func cpuVersus(this, other []measurement) spread {
	var s spread
	for r := range min(len(this), len(other)) {
		if other[r].CPUTarget > 0 {
			s = append(s, this[r].CPUTarget/other[r].CPUTarget)
		}
	}
	return s
}

// spread is one value per round.
type spread []float64

// mid returns the median and the first and third quartiles (nearest rank),
// zeros for no rounds.
func (s spread) mid() (med float64, quartiles [2]float64) {
	if len(s) == 0 {
		return 0, quartiles
	}
	sorted := slices.Sorted(slices.Values(s))
	rank := func(q float64) float64 {
		return sorted[min(int(q*float64(len(sorted)-1)+0.5), len(sorted)-1)]
	}
	return median([]float64(s)), [2]float64{rank(0.25), rank(0.75)}
}
