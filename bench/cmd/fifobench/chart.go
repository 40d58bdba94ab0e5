//go:build linux

package main

import (
	"fmt"
	"html"
	"strings"
)

// chartGroup is one metric drawn as every contender's median over base's.
type chartGroup struct {
	title, metric, base string
	target              float64 // fifobridge's limit as a ratio, 0 for none
}

func (r *results) chartGroups(pls []placement) []chartGroup {
	var gs []chartGroup
	for _, pl := range pls {
		for _, fresh := range []bool{false, true} {
			for _, p := range []int{50, 99} {
				m := rtMetric(p, fresh, pl)
				limit := map[int]float64{50: 1.1, 99: 2}[p]
				gs = append(gs, chartGroup{strings.TrimSuffix(m, " (µs)") + ", vs the C floor", m, floor, limit})
			}
		}
	}
	gs = append(gs,
		chartGroup{"stream throughput, unpinned, vs direct (higher is better)", tputMetric, direct, 0.95},
		chartGroup{"start and exit of true, vs the minimal Go init", startMetric, goInit, 1.25},
		chartGroup{"exec request, vs exec.Command+Wait", execMetric, execBaseline, 1.1},
		chartGroup{"exec requests per second, 1 sender, vs exec.Command per line (higher is better)", rateMetric(1), execLoop, 0},
		chartGroup{"exec requests per second, 16 senders, vs exec.Command per line (higher is better)", rateMetric(16), execLoop, 0},
		chartGroup{"one print(1) to python3 and its answer, vs send to an exec-mode cat", askMetric, askSendCat, 1.5},
		chartGroup{"docker run --rm of true, vs tini", dockerRunMetric, dockerTini, 1.1},
		chartGroup{"one request into a running container, vs docker exec", dockerReqMetric, dockerExecName, 0},
		chartGroup{"a shell on a terminal: open, one ask, close, vs docker exec -it", sessP50Metric, sessExec, 0},
		chartGroup{"a bash session: open, one ask, close, vs tmux", cycP50Metric, cycTmux, 1},
	)
	return append(gs, r.askSpacedCharts()...)
}

// chartCap is the largest ratio drawn to scale; longer bars are cut.
const chartCap = 4.0

// chart draws, per metric, each contender's median as a ratio to the
// metric's baseline, as SVG: a grey line at 1 (the baseline) and a red
// one at fifobridge's target.
func (r *results) chart(title string, pls []placement) string {
	const width, left, barH, gap, labelW = 900, 250, 14, 3, 190
	scale := func(q, top float64) float64 { return q / top * float64(width-left-labelW) }
	var body strings.Builder
	y := 50
	for _, g := range r.chartGroups(pls) {
		names := r.whos(g.metric)
		if _, ok := r.get(g.metric, g.base); !ok || len(names) == 0 {
			continue
		}
		top := max(g.target, 1) * 1.2
		for _, n := range names {
			q, _ := r.ratio(g.metric, n, g.base)
			top = max(top, min(q, chartCap))
		}
		fmt.Fprintf(&body, `<text x="10" y="%d" font-weight="bold">%s</text>`+"\n", y+barH-3, html.EscapeString(g.title))
		y0 := y + barH + gap
		y = y0
		for _, n := range names {
			q, _ := r.ratio(g.metric, n, g.base)
			w, label := scale(min(q, top), top), fmt.Sprintf("%.2fx", q)
			if q > top {
				label += " (cut)"
			}
			fmt.Fprintf(&body, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-6, y+barH-3, html.EscapeString(n))
			fmt.Fprintf(&body, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", left, y, w, barH, barColor(n, g.base))
			fmt.Fprintf(&body, `<text x="%.1f" y="%d">%s</text>`+"\n", float64(left)+w+5, y+barH-3, label)
			y += barH + gap
		}
		line := func(q float64, color, dash string) {
			x := float64(left) + scale(q, top)
			fmt.Fprintf(&body, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-dasharray="%s"/>`+"\n", x, y0-2, x, y, color, dash)
		}
		line(1, "#444", "2,2")
		if g.target > 0 {
			line(g.target, "#c0392b", "5,3")
		}
		y += 14
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, y+10)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	fmt.Fprintf(&b, `<text x="10" y="16" font-size="13">fifobridge against baselines: the median of each contender over the baseline's (grey line: the baseline; red: the target)</text>`+"\n")
	fmt.Fprintf(&b, `<text x="10" y="32" font-size="11">%s</text>`+"\n", html.EscapeString(title))
	b.WriteString(body.String())
	b.WriteString("</svg>\n")
	return b.String()
}

func barColor(name, base string) string {
	switch {
	case name == base:
		return "#8c8c8c"
	case strings.HasPrefix(name, bridge):
		return "#2b7bb9"
	}
	return "#d98b2b"
}
