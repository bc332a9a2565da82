package web

import (
	"encoding/xml"
	"reflect"
	"strings"
	"testing"
)

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		max     float64
		integer bool
		want    []float64
	}{
		{0, false, []float64{0}},
		{-1, false, []float64{0}},
		{1, false, []float64{0, 0.25, 0.5, 0.75, 1}},
		{1, true, []float64{0, 1}},
		{3, true, []float64{0, 1, 2, 3}},
		{7, false, []float64{0, 2, 4, 6, 8}},
		{9, true, []float64{0, 5, 10}},
		{10, false, []float64{0, 2.5, 5, 7.5, 10}},
		{100, false, []float64{0, 25, 50, 75, 100}},
		{101, false, []float64{0, 50, 100, 150}},
		{0.3, false, []float64{0, 0.1, 0.2, 0.3}},
		{0.000123, false, []float64{0, 0.00005, 0.0001, 0.00015}},
		{1_234_567, true, []float64{0, 500_000, 1_000_000, 1_500_000}},
	} {
		if got := NiceTicks(tc.max, tc.integer); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("NiceTicks(%v, %v) = %v, want %v", tc.max, tc.integer, got, tc.want)
		}
	}
}

// parseSVG checks the chart is well-formed XML (and so escaped).
func parseSVG(t *testing.T, s string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader("<root>" + s + "</root>"))
	for {
		_, err := d.Token()
		if err != nil {
			if err.Error() == "EOF" {
				return
			}
			t.Fatalf("chart is not well-formed: %v\n%s", err, s)
		}
	}
}

func TestChart(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []float64
		bars   int
		empty  bool
	}{
		{"thirty", []float64{1, 2, 3, 0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30}, 30, false},
		{"one day", []float64{4.2}, 1, false},
		{"all zero", []float64{0, 0, 0}, 0, true},
		{"none", nil, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			labels := make([]string, len(tc.values))
			for i := range labels {
				labels[i] = "d" + string(rune('a'+i%26))
			}
			out := string(BarChart("Test <chart>", labels, tc.values, nil))
			parseSVG(t, out)
			if got := strings.Count(out, `<g class="bar">`); got != tc.bars {
				t.Errorf("%d bars, want %d", got, tc.bars)
			}
			if strings.Contains(out, "No usage in this period") != tc.empty {
				t.Errorf("empty text shown: %v, want %v", !tc.empty, tc.empty)
			}
			if !strings.Contains(out, `role="img"`) || !strings.Contains(out, `aria-label="Test &lt;chart&gt;"`) || !strings.Contains(out, `viewBox="0 0 800 200"`) {
				t.Errorf("missing role, escaped label or viewBox: %s", out[:200])
			}
			if strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
				t.Errorf("NaN or Inf in %s", out)
			}
		})
	}
}

func TestChartEscapesLabels(t *testing.T) {
	out := string(BarChart("x", []string{`<script>alert(1)</script>`, `"&'`}, []float64{1, 2}, []string{`<b>t</b>`, `a&b`}))
	parseSVG(t, out)
	for _, bad := range []string{"<script>", "<b>", `"&'`} {
		if strings.Contains(out, bad) {
			t.Errorf("unescaped %q in %s", bad, out)
		}
	}
	if !strings.Contains(out, "&lt;script&gt;") || !strings.Contains(out, "<title>&lt;b&gt;t&lt;/b&gt;</title>") {
		t.Errorf("labels not escaped as expected: %s", out)
	}
}

func TestStackedChart(t *testing.T) {
	days := sampleDays(7, false)
	out := string(TokensChart(days))
	parseSVG(t, out)
	// Drawn twice: wide and narrow.
	if got := strings.Count(out, `<g class="bar">`); got != 2*7 {
		t.Errorf("%d bars, want 2×7", got)
	}
	if strings.Count(out, `chart-wide`) != 1 || strings.Count(out, `chart-narrow`) != 1 || strings.Count(out, `role="img"`) != 2 {
		t.Errorf("want a wide and a narrow variant: %s", out)
	}
	if strings.Count(out, `class="s1"`) != 2*6 || strings.Count(out, `class="legend"`) != 1 {
		t.Errorf("want a completion segment on the 6 non-zero days and a legend: %s", out)
	}
	if !strings.Contains(out, "prompt + ") {
		t.Error("bar titles missing")
	}
	costs := string(CostChart(days, "USD"))
	parseSVG(t, costs)
	if !strings.Contains(costs, `class="tick"`) || !strings.Contains(costs, ">$0.8<") {
		t.Errorf("cost ticks missing: %s", costs)
	}
	spark := string(Sparkline(days, "USD"))
	parseSVG(t, spark)
	if strings.Contains(spark, `class="tick"`) || strings.Count(spark, `<g class="bar">`) != 7 || strings.Contains(spark, "legend") {
		t.Errorf("sparkline: %s", spark)
	}
}

func TestCompact(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 0.25: "0.25", 1500: "1.5k", 2_000_000: "2M", 250_000: "250k", 3e9: "3B"} {
		if got := Compact(in); got != want {
			t.Errorf("Compact(%v) = %q, want %q", in, got, want)
		}
	}
}
