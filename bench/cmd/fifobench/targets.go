//go:build linux

package main

import (
	"fmt"
)

// verdict is one target of issues 14, 20, 27, 33 and 34 and how fifobridge did, from the
// medians over the rounds.
type verdict struct {
	target   string
	measured string
	ok       bool
	skip     string // why it could not be judged, if it could not
}

func (v verdict) mark() string {
	switch {
	case v.skip != "":
		return "– " + v.skip
	case v.ok:
		return "✅"
	}
	return "❌"
}

// ratio is fifobridge's (or who's) median over base's median for metric.
func (r *results) ratio(metric, who, base string) (float64, bool) {
	a, ok1 := r.get(metric, who)
	z, ok2 := r.get(metric, base)
	if !ok1 || !ok2 || z.med == 0 {
		return 0, false
	}
	return a.med / z.med, true
}

// atMost judges who/base <= limit for metric; higher-is-better metrics
// use atLeast.
func (r *results) atMost(target, metric, who, base string, limit float64) verdict {
	if _, ok := r.get(metric, who); !ok {
		return verdict{target: target, skip: "not measured"}
	}
	q, ok := r.ratio(metric, who, base)
	if !ok {
		return verdict{target: target, skip: "no " + base + " to compare"}
	}
	return verdict{target: target, measured: fmt.Sprintf("%.2fx", q), ok: q <= limit}
}

func (r *results) atLeast(target, metric, who, base string, limit float64) verdict {
	v := r.atMost(target, metric, who, base, limit)
	if v.skip == "" {
		q, _ := r.ratio(metric, who, base)
		v.ok = q >= limit
	}
	return v
}

// below judges the median of metric against an absolute bound.
func (r *results) below(target, metric string, bound float64, unit string) verdict {
	s, ok := r.get(metric, bridge)
	if !ok {
		return verdict{target: target, skip: "not measured"}
	}
	return verdict{target: target, measured: format(s.med) + unit, ok: s.med < bound}
}

// verdicts judges every target the run measured.
func (r *results) verdicts(pls []placement) []verdict {
	var vs []verdict
	for _, pl := range pls {
		for _, fresh := range []bool{false, true} {
			m50, m99 := rtMetric(50, fresh, pl), rtMetric(99, fresh, pl)
			if _, ok := r.get(m50, bridge); !ok {
				continue
			}
			w := map[bool]string{false: "kept", true: "fresh"}[fresh]
			v := r.atMost(fmt.Sprintf("p50 round trip, %s writer, %s: ≤ 1.1x the C floor, below socat", w, pl), m50, bridge, floor, 1.1)
			if q, ok := r.ratio(m50, bridge, socat); ok {
				v.ok = v.ok && q < 1
				v.measured += fmt.Sprintf(", %.2fx socat", q)
			}
			vs = append(vs, v,
				r.atMost(fmt.Sprintf("p99 round trip, %s writer, %s: ≤ 2x the C floor's p99", w, pl), m99, bridge, floor, 2),
				r.atMost(fmt.Sprintf("terminal mode: p50 round trip, %s writer, %s: ≤ 1.1x the C tty floor", w, pl), m50, bridgeTTY, floorTTY, 1.1))
		}
	}
	vs = append(vs,
		r.atLeast("stream throughput, unpinned: ≥ 0.95x the direct relay", tputMetric, bridge, direct, 0.95),
		r.atMost("`run -restart never -- true`: ≤ 1.25x the minimal Go init", startMetric, bridge, goInit, 1.25),
		r.atMost("exec request: ≤ 1.1x exec.Command+Wait", execMetric, bridgeExec, execBaseline, 1.1),
		r.atMost("exec request: ≤ 1.3x exec.Command+Wait (issue 20's guard rail)", execMetric, bridgeExec, execBaseline, 1.3),
		r.atMost("`docker run --rm` of `true`: within the noise of tini, ≤ 1.1x", dockerRunMetric, bridge, dockerTini, 1.1),
		r.atMost("`fifobridge ask` to python3 -i: p50 ≤ 1.5x `send` to an exec-mode cat (issue 27)", askMetric, askBridge, askSendCat, 1.5),
		r.atMost("kept-open client: p50 ≤ 1.5x pexpect's replwrap (issue 27)", askMetric, askKept, askPexpect, 1.5),
		r.atMost("kept-open client: p50 ≤ 5x python3 -i driven directly (issue 27)", askMetric, askKept, askFloor, 5),
	)
	vs = append(vs, r.askSpacedVerdicts()...)
	vs = append(vs,
		r.below("idle with a kept writer: < 10 ms CPU in 10 s", idleCPUMetric, 10, " ms"),
		r.below("one line per second: < 1% of a core", lineCPUMetric, 1, " %"),
		r.below("idle RSS ≤ 5 MiB", idleRSSMetric, 5.0001, " MiB"),
		r.stopVerdict(),
	)
	vs = append(vs, r.scaleVerdicts()...)
	if s := r.stall; s != nil {
		vs = append(vs, verdict{
			target:   fmt.Sprintf("no round trip over 1 s in %d under two busy loops", s.n),
			measured: fmt.Sprintf("max %s µs, %d over 1 s", format(s.max), s.overSecond),
			ok:       s.overSecond == 0,
		})
	}
	var judged []verdict
	for _, v := range vs {
		if v.skip != "not measured" {
			judged = append(judged, v)
		}
	}
	return judged
}
