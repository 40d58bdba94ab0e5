//go:build linux

package main

import (
	"fmt"
	"strings"
	"time"
)

// askSpacingTable puts the ask part's contenders that keep one REPL side
// by side at every spacing measured: each one's p50 at each, and its p50
// over pexpect's replwrap's and over the floor's at the same spacing.
func (r *results) askSpacingTable(b *strings.Builder) {
	if len(r.askGaps) < 2 {
		return // back to back alone: the ask table has it all
	}
	var names []string
	for _, n := range askSpaced {
		if _, ok := r.get(askMetricAt(r.askGaps[len(r.askGaps)-1]), n); ok {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return
	}
	var cols []string
	for _, g := range r.askGaps {
		cols = append(cols, gapLabel(g))
	}
	fmt.Fprintf(b, "One `print(1)` to python3 and its answer, asked back to back and spaced (p50, ms; spacings: %s)\n\n", strings.Join(cols, ", "))
	b.WriteString("| contender | " + strings.Join(cols, " | ") + " | vs pexpect replwrap | vs the floor |\n|---|")
	b.WriteString(strings.Repeat("---|", len(cols)+2) + "\n")
	for _, n := range names {
		fmt.Fprintf(b, "| %s |", n)
		var vsPexpect, vsFloor []string
		for _, g := range r.askGaps {
			m := askMetricAt(g)
			fmt.Fprintf(b, " %s |", r.cell(m, n))
			vsPexpect = append(vsPexpect, r.ratioCell(m, n, askPexpect))
			vsFloor = append(vsFloor, r.ratioCell(m, n, askFloor))
		}
		fmt.Fprintf(b, " %s | %s |\n", strings.Join(vsPexpect, " / "), strings.Join(vsFloor, " / "))
	}
	b.WriteString("\n")
}

// gapLabel names a spacing in a table's header.
func gapLabel(g time.Duration) string {
	if g == 0 {
		return "back to back"
	}
	return g.String() + " apart"
}

// askSpacedVerdicts are issue 34's targets of the ask part: the kept-open
// client, of a session and of a stream agent's conversation, within 1.5x
// pexpect's replwrap back to back and at every other spacing.
func (r *results) askSpacedVerdicts() []verdict {
	var vs []verdict
	for _, g := range r.askGaps {
		for _, who := range []string{askKeptSess, askKept} {
			if g == 0 && who == askKept {
				continue // issue 27's
			}
			vs = append(vs, r.atMost(fmt.Sprintf("%s, asks %s: p50 ≤ 1.5x pexpect's replwrap (issue 34)", who, gapLabel(g)),
				askMetricAt(g), who, askPexpect, 1.5))
		}
	}
	return vs
}

// askSpacedCharts draws the spaced asks against pexpect's replwrap.
func (r *results) askSpacedCharts() []chartGroup {
	var gs []chartGroup
	for _, g := range r.askGaps {
		if g > 0 {
			gs = append(gs, chartGroup{fmt.Sprintf("one print(1) to python3, asked %s after the last, vs pexpect's replwrap", g), askMetricAt(g), askPexpect, 1.5})
		}
	}
	return gs
}
