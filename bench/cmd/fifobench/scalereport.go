//go:build linux

package main

import (
	"fmt"
	"slices"
	"strings"
)

// scaleTable is the scale part: every figure of each contender, a column
// per session count (and one for none open, where measured).
func (r *results) scaleTable(b *strings.Builder) {
	if len(r.scaleNs) == 0 {
		return
	}
	ns := r.scaleNs
	if len(r.whos(scaleMetric(scaleRSS, 0))) > 0 {
		ns = append([]int{0}, ns...)
	}
	b.WriteString("Sessions at scale: bash sessions on terminals, open and idle, on one fifobridge agent and on one tmux server (medians over the rounds, smallest and largest round in brackets)\n\n")
	b.WriteString("| figure | contender |")
	for _, n := range ns {
		fmt.Fprintf(b, " %s |", map[bool]string{true: "none open", false: fmt.Sprint(n)}[n == 0])
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(ns)) + "\n")
	for _, kind := range scaleKinds {
		for _, who := range []string{scaleBridge, scaleTmux} {
			cells := make([]string, len(ns))
			for i, n := range ns {
				cells[i] = r.cell(scaleMetric(kind, n), who)
			}
			if strings.Join(cells, "") == "" {
				continue
			}
			fmt.Fprintf(b, "| %s | %s | %s |\n", kind, who, strings.Join(cells, " | "))
		}
	}
	b.WriteString("\n")
}

// cycleTable is the scale part's whole cycle: each contender's p50 and
// p99, with its p50 over tmux's and over the floor's.
func (r *results) cycleTable(b *strings.Builder) {
	r.cycleOf(b, "A bash session's whole cycle: open, first prompt, `echo hi` and its answer, close",
		cycP50Metric, cycP99Metric, [2]versus{{"tmux", cycTmux}, {"the floor", cycFloor}})
}

// Issue 33's bounds on a session's cost, from the contract.
const (
	scaleMaxKB      = 100  // memory per idle session
	scaleMaxFDs     = 6    // descriptors per idle session
	scaleCPUSlack   = 0.05 // % of a core over the agent with none open: "none of its CPU"
	scaleMaxSlower  = 1.25 // an open, ls or ask at the most sessions over at the fewest: "does not slow"
	scaleMaxAddedMS = 500  // a stop's time over the shells' exit
)

// scaleVerdicts judges the agent at the run's largest session count by
// the contract's line on what a session costs (issue 33), and its whole
// cycle against tmux's.
func (r *results) scaleVerdicts() []verdict {
	if len(r.scaleNs) == 0 {
		return nil
	}
	lo, hi := slices.Min(r.scaleNs), slices.Max(r.scaleNs)
	at := func(kind string) string { return scaleMetric(kind, hi) }
	vs := []verdict{
		r.bounded(fmt.Sprintf("%d sessions idle: ≤ %d kB of the agent's memory each", hi, scaleMaxKB), at(scaleMem), scaleMaxKB, " kB"),
		r.bounded(fmt.Sprintf("%d sessions idle: ≤ %d of the agent's descriptors each", hi, scaleMaxFDs), at(scaleFDs), scaleMaxFDs, ""),
		r.idleVerdict(hi),
		r.bounded(fmt.Sprintf("stop with %d sessions: adds ≤ %d ms to the shells' exit", hi, scaleMaxAddedMS), at(scaleAdded), scaleMaxAddedMS, " ms"),
	}
	if lo < hi {
		for _, kind := range []string{scaleOpen, scaleLs, scaleAsk} {
			vs = append(vs, r.flatVerdict(kind, lo, hi))
		}
	}
	return append(vs, r.atMost("whole cycle of a bash session: p50 ≤ tmux's", cycP50Metric, cycBridge, cycTmux, 1))
}

// bounded judges the agent's median of metric against an upper bound.
func (r *results) bounded(target, metric string, bound float64, unit string) verdict {
	s, ok := r.get(metric, scaleBridge)
	if !ok {
		return verdict{target: target, skip: "not measured"}
	}
	return verdict{target: target, measured: format(s.med) + unit, ok: s.med <= bound}
}

// idleVerdict judges the agent's idle CPU with n sessions open against
// its CPU with none open.
func (r *results) idleVerdict(n int) verdict {
	target := fmt.Sprintf("%d sessions idle: none of the agent's CPU (≤ %.2f %% of a core over none open)", n, scaleCPUSlack)
	none, ok := r.get(scaleMetric(scaleCPU, 0), scaleBridge)
	if !ok {
		return verdict{target: target, skip: "not measured"}
	}
	v := r.bounded(target, scaleMetric(scaleCPU, n), none.med+scaleCPUSlack, " %")
	v.measured += fmt.Sprintf(" (none open: %s %%)", format(none.med))
	return v
}

// flatVerdict judges whether the agent's kind of command is as fast with
// hi sessions open as with lo.
func (r *results) flatVerdict(kind string, lo, hi int) verdict {
	what := map[string]string{scaleOpen: "an open", scaleLs: "an ls", scaleAsk: "an ask"}[kind]
	target := fmt.Sprintf("%s with %d sessions open: ≤ %.2fx with %d", what, hi, scaleMaxSlower, lo)
	a, ok1 := r.get(scaleMetric(kind, hi), scaleBridge)
	z, ok2 := r.get(scaleMetric(kind, lo), scaleBridge)
	if !ok1 || !ok2 || z.med == 0 {
		return verdict{target: target, skip: "not measured"}
	}
	q := a.med / z.med
	return verdict{target: target, measured: fmt.Sprintf("%.2fx (%s against %s ms)", q, format(a.med), format(z.med)), ok: q <= scaleMaxSlower}
}
