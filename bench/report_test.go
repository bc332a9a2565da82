package main

import (
	"math"
	"strings"
	"testing"
)

// TestReportMessagesPasses builds and prints a report of every pass from
// made-up rounds: the translated passes name the proxy's chat figures as
// such, and each Messages pass is compared with its chat pass.
func TestReportMessagesPasses(t *testing.T) {
	passes := allPasses()
	targets := []target{{name: "proxy"}, {name: "modelgate"}}
	// Modelgate's CPU per request per pass (the proxy's is 100 throughout):
	// non-stream 100, stream 200, messages 110, messages-stream 180,
	// translated 120, translated-stream 240.
	mgCPU := map[string]float64{"non-stream": 100, "stream": 200, "messages": 110, "messages-stream": 180, "translated": 120, "translated-stream": 240}
	res := make([][][]measurement, len(passes))
	for p, ps := range passes {
		res[p] = make([][]measurement, len(targets))
		for r := range 4 {
			px := measurement{loadResult: loadResult{Requests: 1000, RPS: 1000, P99: 5e6}, CPUTarget: 100}
			mg := measurement{loadResult: loadResult{Requests: 1000, RPS: 1000, P99: 5e6}, CPUTarget: mgCPU[ps.name] * (1 + float64(r)/100)}
			res[p][0], res[p][1] = append(res[p][0], px), append(res[p][1], mg)
		}
	}
	rep := &report{RSSMB: map[string]float64{"modelgate": 80}, Settings: options{Rounds: 4}, MessagesStreamEvents: messagesStreamEvents}
	rep.build(passes, targets, res)

	for _, c := range []struct {
		pass, proxy, like string
		likeCPU           float64
	}{
		{"non-stream", "proxy", "", 0},
		{"messages", "proxy", "non-stream", 1.1},
		{"messages-stream", "proxy", "stream", 0.9},
		{"translated", "proxy (chat)", "non-stream", 1.2},
		{"translated-stream", "proxy (chat)", "stream", 1.2},
	} {
		var pr *passReport
		for i := range rep.Passes {
			if rep.Passes[i].Pass == c.pass {
				pr = &rep.Passes[i]
			}
		}
		if pr == nil {
			t.Fatalf("no %s pass in the report", c.pass)
		}
		if pr.Targets[0].Target != c.proxy || pr.Targets[1].Target != "modelgate" {
			t.Errorf("%s: targets %q, %q", c.pass, pr.Targets[0].Target, pr.Targets[1].Target)
		}
		if pr.Like != c.like || math.Abs(pr.LikeCPU-c.likeCPU) > 1e-9 {
			t.Errorf("%s: like %q %v, want %q %v", c.pass, pr.Like, pr.LikeCPU, c.like, c.likeCPU)
		}
	}
	var b strings.Builder
	rep.print(&b)
	out := b.String()
	for _, want := range []string{
		"translated-stream CPU per request modelgate ÷ proxy (chat)",
		"messages-stream:    modelgate's CPU per request ÷ its own on the stream pass: 0.90",
		"translated passes: the proxy cannot translate",
		"(Messages streams 26 events)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}

	// Without the chat pass, a Messages pass has nothing to compare with.
	rep = &report{RSSMB: map[string]float64{}}
	rep.build(passes[2:3], targets, res[2:3])
	if rep.Passes[0].Like != "" || rep.Passes[0].LikeCPU != 0 {
		t.Errorf("messages alone: %+v", rep.Passes[0])
	}
}
