package web

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/money"
)

// Bar is one column of a chart: its x label, its stacked values (one per
// series, bottom first) and the hover text of its <title>.
type Bar struct {
	Label  string
	Values []float64
	Title  string
}

// Chart is a bar chart drawn as SVG on the server. It scales with its
// container (viewBox, width 100% in the stylesheet); colors come from the
// classes s0, s1… in console.css.
type Chart struct {
	Label   string   // the aria-label: what the chart shows
	Series  []string // the stacked series' names; more than one adds a legend
	Bars    []Bar
	Tick    func(float64) string // formats a y tick; nil: a compact number
	Integer bool                 // ticks are whole numbers (counts)
	Spark   bool                 // small, without axes or labels
	Empty   string               // shown when every value is zero
	// Width, Height and XLabels are the viewBox's size and the most x
	// labels; zero: 800, 200 and 6.
	Width, Height float64
	XLabels       int
	Class         string // extra classes on the <svg>
}

// Chart geometry in viewBox units.
const (
	chartW, chartH             = 800.0, 200.0
	padTop, padBottom, padSide = 18.0, 30.0, 4.0
	sparkW, sparkH             = 300.0, 56.0
	maxXLabels                 = 6
)

// NiceTicks returns evenly spaced ticks from 0 to a round top ≥ max, the
// step being 1, 2, 2.5 or 5 × 10^n and about four intervals. integer
// forbids fractional steps. A max ≤ 0 gives [0].
func NiceTicks(max float64, integer bool) []float64 {
	if !(max > 0) || math.IsInf(max, 0) {
		return []float64{0}
	}
	rough := max / 4
	mag := math.Pow(10, math.Floor(math.Log10(rough)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		s := m * mag
		if m*mag >= rough*(1-1e-9) && (!integer || s == math.Trunc(s)) {
			step = s
			break
		}
	}
	if integer && step < 1 {
		step = 1
	}
	n := int(math.Ceil(max/step - 1e-9))
	ticks := make([]float64, n+1)
	for i := range ticks {
		// Round away float noise (0.30000000000000004).
		v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(i)*step, 'g', 12, 64), 64)
		ticks[i] = v
	}
	return ticks
}

// Compact formats a tick: 1500 → "1.5k", 2000000 → "2M", 0.25 → "0.25".
func Compact(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return trimFloat(v/1e9) + "B"
	case a >= 1e6:
		return trimFloat(v/1e6) + "M"
	case a >= 1e3:
		return trimFloat(v/1e3) + "k"
	}
	return trimFloat(v)
}

func trimFloat(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// SVG draws the chart.
func (c Chart) SVG() template.HTML {
	w, h, top, bottom := chartW, chartH, padTop, padBottom
	if c.Width > 0 && c.Height > 0 {
		w, h = c.Width, c.Height
	}
	maxLabels := maxXLabels
	if c.XLabels > 0 {
		maxLabels = c.XLabels
	}
	cls := "chart-svg"
	if c.Class != "" {
		cls += " " + c.Class
	}
	if c.Spark {
		w, h, top, bottom, cls = sparkW, sparkH, 2, 2, "chart-svg spark"
	}
	tick := c.Tick
	if tick == nil {
		tick = Compact
	}
	max := 0.0
	for _, b := range c.Bars {
		sum := 0.0
		for _, v := range b.Values {
			if v > 0 {
				sum += v
			}
		}
		max = math.Max(max, sum)
	}
	esc := template.HTMLEscapeString
	var s strings.Builder
	fmt.Fprintf(&s, `<svg class="%s" viewBox="0 0 %g %g" role="img" aria-label="%s" preserveAspectRatio="xMidYMid meet">`, cls, w, h, esc(c.Label))
	fmt.Fprintf(&s, `<title>%s</title>`, esc(c.Label))
	plotH := h - top - bottom
	base := top + plotH
	if max == 0 {
		fmt.Fprintf(&s, `<line class="axis" x1="0" y1="%g" x2="%g" y2="%g"/>`, base, w, base)
		if !c.Spark {
			empty := c.Empty
			if empty == "" {
				empty = "No usage in this period"
			}
			fmt.Fprintf(&s, `<text class="empty" x="%g" y="%g" text-anchor="middle">%s</text>`, w/2, top+plotH/2, esc(empty))
		}
		s.WriteString(`</svg>`)
		return template.HTML(s.String())
	}
	ticks := []float64{0, max}
	if !c.Spark {
		ticks = NiceTicks(max, c.Integer)
	}
	topV := ticks[len(ticks)-1]
	y := func(v float64) float64 { return base - v/topV*plotH }
	if !c.Spark {
		for _, t := range ticks {
			gy := round2(y(t))
			class := "grid"
			if t == 0 {
				class = "axis"
			}
			fmt.Fprintf(&s, `<line class="%s" x1="0" y1="%g" x2="%g" y2="%g"/>`, class, gy, w, gy)
		}
	}
	n := len(c.Bars)
	slot := (w - 2*padSide) / float64(n)
	bw := math.Min(slot*0.72, 48)
	if slot-bw < 1 {
		bw = math.Max(slot-1, 0.5)
	}
	every := (n + maxLabels - 1) / maxLabels
	for i, b := range c.Bars {
		x := padSide + float64(i)*slot
		s.WriteString(`<g class="bar">`)
		if b.Title != "" {
			fmt.Fprintf(&s, `<title>%s</title>`, esc(b.Title))
		}
		fmt.Fprintf(&s, `<rect class="hit" x="%g" y="%g" width="%g" height="%g"/>`, round2(x), top, round2(slot), plotH)
		acc := 0.0
		for j, v := range b.Values {
			if v <= 0 {
				continue
			}
			y0, y1 := y(acc), y(acc+v)
			acc += v
			fmt.Fprintf(&s, `<rect class="s%d" x="%g" y="%g" width="%g" height="%g"/>`, j, round2(x+(slot-bw)/2), round2(y1), round2(bw), round2(math.Max(y0-y1, 0.5)))
		}
		s.WriteString(`</g>`)
		if !c.Spark && (n-1-i)%every == 0 {
			cx := x + slot/2
			anchor := "middle"
			if n > 1 && cx < 40 {
				anchor = "start"
			} else if n > 1 && cx > w-40 {
				anchor = "end"
			}
			minor := ""
			if ((n-1-i)/every)%2 == 1 {
				minor = " minor"
			}
			fmt.Fprintf(&s, `<text class="xl%s" x="%g" y="%g" text-anchor="%s">%s</text>`, minor, round2(cx), h-8, anchor, esc(b.Label))
		}
	}
	// Tick labels go last so that they sit above the bars.
	if !c.Spark {
		for _, t := range ticks[1:] { // the baseline is plainly zero
			fmt.Fprintf(&s, `<text class="tick" x="0" y="%g">%s</text>`, round2(y(t)-5), esc(tick(t)))
		}
	}
	s.WriteString(`</svg>`)
	return template.HTML(s.String())
}

// Legend lists the series of a stacked chart ("" for one series).
func (c Chart) Legend() template.HTML {
	if len(c.Series) < 2 || c.Spark {
		return ""
	}
	var s strings.Builder
	s.WriteString(`<ul class="legend">`)
	for j, name := range c.Series {
		fmt.Fprintf(&s, `<li><span class="swatch s%d" aria-hidden="true"></span>%s</li>`, j, template.HTMLEscapeString(name))
	}
	s.WriteString(`</ul>`)
	return template.HTML(s.String())
}

// Responsive draws the chart twice, a wide 800×200 one and a narrow
// 400×240 one with fewer labels, and the stylesheet shows the one that fits
// (class chart-wide or chart-narrow), so the text stays legible at every
// width; then the legend.
func (c Chart) Responsive() template.HTML {
	wide, narrow := c, c
	wide.Width, wide.Height, wide.XLabels, wide.Class = 800, 200, 6, "chart-wide"
	narrow.Width, narrow.Height, narrow.XLabels, narrow.Class = 400, 240, 4, "chart-narrow"
	return wide.SVG() + narrow.SVG() + c.Legend()
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// BarChart is a one-series chart of labelled values; titles are the bars'
// hover texts (nil: the label and the value).
func BarChart(label string, labels []string, values []float64, titles []string) template.HTML {
	c := Chart{Label: label}
	for i, l := range labels {
		b := Bar{Label: l, Values: []float64{values[i]}}
		if titles != nil {
			b.Title = titles[i]
		} else {
			b.Title = l + ": " + Compact(values[i])
		}
		c.Bars = append(c.Bars, b)
	}
	return c.SVG() + c.Legend()
}

// dayLabel turns "2026-11-24" into "Nov 24" ("11月24日" in Chinese).
func (lc locale) dayLabel(d string) string {
	t, err := time.Parse(time.DateOnly, d)
	if err != nil {
		return d
	}
	return monthDayIn(lc.lang, t)
}

func (lc locale) dayTitle(d string) string {
	t, err := time.Parse(time.DateOnly, d)
	if err != nil {
		return d
	}
	return dateIn(lc.lang, t)
}

func units(m money.Micros) float64 { return float64(m) / float64(money.Unit) }

func moneyTick(currency string) func(float64) string {
	return func(v float64) string {
		return symbolOr(currency) + Compact(v)
	}
}

func symbolOr(currency string) string {
	if s, ok := symbols[strings.ToUpper(currency)]; ok {
		return s
	}
	return ""
}

// CostChart is the cost per day (Responsive), in English.
func CostChart(days []Day, currency string) template.HTML { return english().costChart(days, currency) }

// RequestsChart is the requests per day (Responsive), in English.
func RequestsChart(days []Day) template.HTML { return english().requestsChart(days) }

// TokensChart is the tokens per day, prompt and completion stacked
// (Responsive), in English.
func TokensChart(days []Day) template.HTML { return english().tokensChart(days) }

// Sparkline is a small cost-per-day chart without axes, in English.
func Sparkline(days []Day, currency string) template.HTML { return english().sparkline(days, currency) }

// emptyText is what a chart of days says when all its values are zero:
// when there were requests, the chart is not empty of usage, only of what
// it draws (free requests have no cost; images no tokens).
func (lc locale) emptyText(days []Day, zeroKey string) string {
	for _, d := range days {
		if d.Requests > 0 {
			return lc.t(zeroKey)
		}
	}
	return lc.t("chart.empty")
}

func (lc locale) costChart(days []Day, currency string) template.HTML {
	c := Chart{Label: lc.t("chart.cost_label", currency), Tick: moneyTick(currency), Empty: lc.emptyText(days, "chart.free")}
	for _, d := range days {
		c.Bars = append(c.Bars, Bar{Label: lc.dayLabel(d.Date), Values: []float64{units(d.Cost)},
			Title: lc.dayTitle(d.Date) + ": " + Money(d.Cost, currency)})
	}
	return c.Responsive()
}

func (lc locale) requestsChart(days []Day) template.HTML {
	c := Chart{Label: lc.t("chart.requests_label"), Integer: true, Empty: lc.t("chart.empty")}
	for _, d := range days {
		c.Bars = append(c.Bars, Bar{Label: lc.dayLabel(d.Date), Values: []float64{float64(d.Requests)},
			Title: lc.t("chart.requests_title", lc.dayTitle(d.Date), Int(d.Requests))})
	}
	return c.Responsive()
}

func (lc locale) tokensChart(days []Day) template.HTML {
	c := Chart{Label: lc.t("chart.tokens_label"), Integer: true, Empty: lc.emptyText(days, "chart.no_tokens"), Series: []string{lc.t("chart.prompt"), lc.t("chart.completion")}}
	for _, d := range days {
		c.Bars = append(c.Bars, Bar{Label: lc.dayLabel(d.Date),
			Values: []float64{float64(d.PromptTokens), float64(d.CompletionTokens)},
			Title:  lc.t("chart.tokens_title", lc.dayTitle(d.Date), Int(d.PromptTokens), Int(d.CompletionTokens))})
	}
	return c.Responsive()
}

func (lc locale) sparkline(days []Day, currency string) template.HTML {
	c := Chart{Label: lc.t("chart.spark_label"), Spark: true}
	for _, d := range days {
		c.Bars = append(c.Bars, Bar{Label: lc.dayLabel(d.Date), Values: []float64{units(d.Cost)},
			Title: lc.dayTitle(d.Date) + ": " + Money(d.Cost, currency)})
	}
	return c.SVG()
}
