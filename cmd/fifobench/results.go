package main

import (
	"fmt"
	"html"
	"slices"
	"strings"
)

// results holds every sample, by metric and contender, in the order they
// were first added.
type results struct {
	metrics []string
	names   map[string][]string
	samples map[string]map[string][]float64
}

func newResults() *results {
	return &results{names: map[string][]string{}, samples: map[string]map[string][]float64{}}
}

func (r *results) add(metric, name string, v float64) {
	if r.samples[metric] == nil {
		r.metrics = append(r.metrics, metric)
		r.samples[metric] = map[string][]float64{}
	}
	if r.samples[metric][name] == nil {
		r.names[metric] = append(r.names[metric], name)
	}
	r.samples[metric][name] = append(r.samples[metric][name], v)
}

func (r *results) median(metric, name string) float64 {
	return percentile(r.samples[metric][name], 50)
}

// target is what the issue asks of fifobridge for a metric: a ratio to the
// baseline contender, or an absolute bound.
type target struct {
	baseline  string
	ratio     float64 // fifobridge / baseline must be <= ratio, or >= for higher-is-better
	bound     float64 // absolute upper bound, when baseline is ""
	higher    bool    // higher is better
	alsoBelow string  // fifobridge must also be below this contender
}

var targets = map[string]target{
	"stream text (MiB/s)":               {baseline: direct, ratio: 0.9, higher: true},
	"stream binary (MiB/s)":             {baseline: direct, ratio: 0.9, higher: true},
	"round trip p50, kept writer (µs)":  {baseline: direct, ratio: 1.5, alsoBelow: socat},
	"round trip p50, fresh writer (µs)": {baseline: direct, ratio: 1.5, alsoBelow: socat},
	"exec per request (µs)":             {baseline: "direct spawn", ratio: 1.5},
	"RSS idle (MiB)":                    {bound: 5},
}

// verdict says how fifobridge did against the metric's target.
func (r *results) verdict(metric string) string {
	t, ok := targets[metric]
	if !ok {
		return ""
	}
	fb := r.median(metric, bridge)
	if t.baseline == "" {
		return mark(fb <= t.bound, fmt.Sprintf("≤ %g", t.bound))
	}
	ratio := fb / r.median(metric, t.baseline)
	ok = ratio <= t.ratio
	want := fmt.Sprintf("%.2fx (want ≤ %gx", ratio, t.ratio)
	if t.higher {
		ok = ratio >= t.ratio
		want = fmt.Sprintf("%.2fx (want ≥ %gx", ratio, t.ratio)
	}
	if t.alsoBelow != "" {
		ok = ok && fb < r.median(metric, t.alsoBelow)
		want += ", below " + t.alsoBelow
	}
	return mark(ok, want+")")
}

func mark(ok bool, s string) string {
	if ok {
		return "✅ " + s
	}
	return "❌ " + s
}

// table renders the medians as Markdown.
func (r *results) table() string {
	var b strings.Builder
	b.WriteString("| metric (median) | direct / baseline | socat / peer | fifobridge | fifobridge vs target |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, m := range r.metrics {
		cells := make([]string, 3)
		var others []string
		for _, name := range r.names[m] {
			v := fmt.Sprintf("%s: %s", name, format(r.median(m, name)))
			switch name {
			case direct, "direct spawn", "true":
				cells[0] = v
			case socat:
				cells[1] = v
			case bridge:
				cells[2] = format(r.median(m, name))
			default:
				others = append(others, v)
			}
		}
		if len(others) > 0 {
			cells[1] = strings.Join(others, ", ")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", m, cells[0], cells[1], cells[2], r.verdict(m))
	}
	return b.String()
}

func format(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func percentile(vs []float64, p float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	i := int(p / 100 * float64(len(s)-1))
	return s[i]
}

// chart draws, per metric, one bar per contender, scaled to the metric's
// largest median, as SVG.
func (r *results) chart(title string) string {
	const (
		width, left, barH, gap, labelW = 900, 330, 16, 3, 150
	)
	colors := map[string]string{bridge: "#2b7bb9", direct: "#8c8c8c", socat: "#d98b2b"}
	var b strings.Builder
	y := 40
	var body strings.Builder
	for _, m := range r.metrics {
		names := r.names[m]
		top := 0.0
		for _, n := range names {
			top = max(top, r.median(m, n))
		}
		fmt.Fprintf(&body, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", y+barH-3, html.EscapeString(m))
		for _, n := range names {
			v := r.median(m, n)
			w := 0.0
			if top > 0 {
				w = v / top * float64(width-left-labelW)
			}
			color := colors[n]
			if color == "" {
				color = "#8c8c8c"
			}
			fmt.Fprintf(&body, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", left, y, w, barH, color)
			fmt.Fprintf(&body, `<text x="%.1f" y="%d">%s %s</text>`+"\n", float64(left)+w+5, y+barH-3, html.EscapeString(n), format(v))
			y += barH + gap
		}
		y += 12
	}
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, y+10)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="13">fifobridge benchmarks (medians; bars scaled per metric). %s</text>`+"\n", html.EscapeString(title))
	b.WriteString(body.String())
	b.WriteString("</svg>\n")
	return b.String()
}
