//go:build linux

package main

import (
	"fmt"
	"strings"
)

// rateTable is execrate's requests per second, a column per sender count,
// with each contender's ratio to the exec.Command loop.
func (r *results) rateTable(b *strings.Builder) {
	names := r.whos(rateMetric(senderCounts[0]))
	if len(names) == 0 {
		return
	}
	b.WriteString("Exec requests of `true` per second, with 1, 4 and 16 concurrent senders (higher is better)\n\n| contender |")
	for _, k := range senderCounts {
		fmt.Fprintf(b, " %d |", k)
	}
	b.WriteString(" vs exec.Command per line |\n|---|")
	b.WriteString(strings.Repeat("---|", len(senderCounts)+1) + "\n")
	for _, n := range names {
		fmt.Fprintf(b, "| %s |", n)
		var vs []string
		for _, k := range senderCounts {
			fmt.Fprintf(b, " %s |", r.cell(rateMetric(k), n))
			vs = append(vs, r.ratioCell(rateMetric(k), n, execLoop))
		}
		fmt.Fprintf(b, " %s |\n", strings.Join(vs, " / "))
	}
	b.WriteString("\n")
}

// afterOf pairs each contender of the -before binary with the one under
// test.
var afterOf = map[string]string{bridgeBefore: bridge, bridgeTTYBefore: bridgeTTY, bridgeExecBefore: bridgeExec, askKeptBefore: askKept}

// beforeAfterTable puts side by side every figure measured for both
// binaries, with after over before.
func (r *results) beforeAfterTable(b *strings.Builder) {
	var rows []string
	for _, k := range r.order {
		after, ok := afterOf[k.who]
		if !ok {
			continue
		}
		if _, ok := r.get(k.metric, after); !ok {
			continue
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s |\n", k.metric, after,
			r.cell(k.metric, k.who), r.cell(k.metric, after), r.ratioCell(k.metric, after, k.who)))
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("Before and after (-before's binary and the one under test, alternating in every round)\n\n")
	b.WriteString("| metric | contender | before | after | after / before |\n|---|---|---|---|---|\n")
	b.WriteString(strings.Join(rows, ""))
	b.WriteString("\n")
}

// sessionTable is the sessions part: each contender's p50 and p99 of a
// whole cycle, with its p50 over the floor's and over docker exec's.
func (r *results) sessionTable(b *strings.Builder) {
	r.cycleOf(b, "A shell on a terminal: open, first prompt, `echo x` and its answer, close",
		sessP50Metric, sessP99Metric, [2]versus{{"the floor", sessFloor}, {"docker exec -it", sessExec}})
}

// versus names a contender a p50 is divided by, and its label.
type versus struct{ label, who string }

// cycleOf writes a table of whole cycles, titled what: each contender's
// p50 and p99 metrics, and its p50 over each of vs's.
func (r *results) cycleOf(b *strings.Builder, what, p50, p99 string, vs [2]versus) {
	names := r.whos(p50)
	if len(names) == 0 {
		return
	}
	b.WriteString(what + " (ms; medians over the rounds of each round's p50 and p99)\n\n")
	fmt.Fprintf(b, "| contender | p50 | p99 | p50 vs %s | p50 vs %s |\n|---|---|---|---|---|\n", vs[0].label, vs[1].label)
	for _, n := range names {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", n, r.cell(p50, n), r.cell(p99, n),
			r.ratioCell(p50, n, vs[0].who), r.ratioCell(p50, n, vs[1].who))
	}
	b.WriteString("\n")
}
