//go:build linux

package main

import (
	"fmt"
	"strings"
)

// report renders the run as Markdown: a table per part, the targets with
// their verdicts, and the notes. Every cell is the median over the rounds
// with the smallest and largest round in brackets.
func (r *results) report(pls []placement) string {
	var b strings.Builder
	for _, pl := range pls {
		r.roundTripTable(&b, pl)
	}
	r.compareTable(&b, "Stream throughput, unpinned (MiB/s, higher is better)", tputMetric, direct, "vs direct")
	r.compareTable(&b, "Start and exit of `true` (p50 of the starts, µs)", startMetric, goInit, "vs minimal Go init")
	r.compareTable(&b, "Exec mode, one request of `true` at a time (p50, µs)", execMetric, execBaseline, "vs exec.Command")
	r.rateTable(&b)
	r.compareTable(&b, "One `print(1)` to python3 (and to an exec-mode cat) and its answer, one at a time (p50, ms)", askMetric, askFloor, "vs python3 -i on pipes")
	r.askSpacingTable(&b)
	r.compareTable(&b, "`docker run --rm` of `true` (p50 of the runs, ms)", dockerRunMetric, dockerTini, "vs tini")
	r.compareTable(&b, "One request of `true` into a running container, from the host (p50, ms)", dockerReqMetric, dockerExecName, "vs docker exec")
	r.sessionTable(&b)
	r.scaleTable(&b)
	r.cycleTable(&b)
	r.beforeAfterTable(&b)
	r.idleTable(&b)
	r.stopTable(&b)
	r.stallTable(&b)
	r.syscallTable(&b)
	r.targetTable(&b, pls)
	if len(r.notes) > 0 {
		b.WriteString("Notes:\n\n")
		for _, n := range r.notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// cell is a summary as "median (min–max)".
func (s summary) cell() string {
	if s.n == 1 || s.lo == s.hi {
		return format(s.med)
	}
	return fmt.Sprintf("%s (%s–%s)", format(s.med), format(s.lo), format(s.hi))
}

func (r *results) cell(metric, who string) string {
	if s, ok := r.get(metric, who); ok {
		return s.cell()
	}
	return ""
}

func (r *results) ratioCell(metric, who, base string) string {
	if q, ok := r.ratio(metric, who, base); ok {
		return fmt.Sprintf("%.2fx", q)
	}
	return ""
}

func (r *results) roundTripTable(b *strings.Builder, pl placement) {
	k50, k99, f50, f99 := rtMetric(50, false, pl), rtMetric(99, false, pl), rtMetric(50, true, pl), rtMetric(99, true, pl)
	names := r.whos(k50)
	if len(names) == 0 {
		return
	}
	where := "unpinned"
	if pl == pinned {
		where = "pinned: contender, its child and the client on one CPU"
	}
	fmt.Fprintf(b, "Round trip of a line, %s (µs)\n\n", where)
	b.WriteString("| contender | kept writer p50 | p99 | fresh writer p50 | p99 | p50 vs its floor, kept / fresh |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, n := range names {
		base := floorOf(n)
		vs := r.ratioCell(k50, n, base)
		if f := r.ratioCell(f50, n, base); f != "" {
			vs += " / " + f
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", n,
			r.cell(k50, n), r.cell(k99, n), r.cell(f50, n), r.cell(f99, n), vs)
	}
	b.WriteString("\n")
}

// floorOf is the floor contender name is measured against: the C tty
// floor for the terminal contenders, the C floor for the others.
func floorOf(name string) string {
	if name == bridgeTTY || name == bridgeTTYBefore || name == floorTTY {
		return floorTTY
	}
	return floor
}

// compareTable is one metric for every contender, with its ratio to base.
func (r *results) compareTable(b *strings.Builder, title, metric, base, vs string) {
	names := r.whos(metric)
	if len(names) == 0 {
		return
	}
	fmt.Fprintf(b, "%s\n\n| contender | median (min–max) | %s |\n|---|---|---|\n", title, vs)
	for _, n := range names {
		fmt.Fprintf(b, "| %s | %s | %s |\n", n, r.cell(metric, n), r.ratioCell(metric, n, base))
	}
	b.WriteString("\n")
}

func (r *results) idleTable(b *strings.Builder) {
	if len(r.whos(idleCPUMetric)) == 0 {
		return
	}
	b.WriteString("fifobridge at rest (kept writer and reader, `cat` child)\n\n| metric | median (min–max) |\n|---|---|\n")
	for _, m := range []string{idleCPUMetric, lineCPUMetric, idleRSSMetric} {
		fmt.Fprintf(b, "| %s | %s |\n", m, r.cell(m, bridge))
	}
	b.WriteString("\n")
}

func (r *results) stallTable(b *strings.Builder) {
	s := r.stall
	if s == nil {
		return
	}
	fmt.Fprintf(b, "Round trips through fifobridge under load (%d, kept writer, two busy loops, one run; µs)\n\n", s.n)
	b.WriteString("| p50 | p99 | max | over 1 s |\n|---|---|---|---|\n")
	fmt.Fprintf(b, "| %s | %s | %s | %d |\n\n", format(s.p50), format(s.p99), format(s.max), s.overSecond)
}

func (r *results) syscallTable(b *strings.Builder) {
	if len(r.syscalls) == 0 {
		return
	}
	b.WriteString("System calls per round trip of the bridge process (`strace -c -f -p`, kept writer, one run)\n\n")
	b.WriteString("| contender | calls | most frequent |\n|---|---|---|\n")
	for _, c := range r.syscalls {
		var top []string
		for i, cc := range c.byCall {
			if i == 6 || cc.perRT < 0.05 {
				break
			}
			top = append(top, fmt.Sprintf("%s %.1f", cc.call, cc.perRT))
		}
		fmt.Fprintf(b, "| %s | %.1f | %s |\n", c.name, c.perRT, strings.Join(top, ", "))
	}
	b.WriteString("\n")
}

func (r *results) targetTable(b *strings.Builder, pls []placement) {
	vs := r.verdicts(pls)
	if len(vs) == 0 {
		return
	}
	b.WriteString("Targets (issues 14, 20, 27, 33 and 34; medians over the rounds)\n\n| target | measured | verdict |\n|---|---|---|\n")
	for _, v := range vs {
		fmt.Fprintf(b, "| %s | %s | %s |\n", v.target, v.measured, v.mark())
	}
	b.WriteString("\n")
}

// format prints v with three significant digits or more.
func format(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}
