//go:build linux

package main

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// results holds one value per round for every metric and contender, in
// the order they were first added.
type results struct {
	order   []key
	samples map[key][]float64
	notes   []string // what was skipped, and why

	// Measured once per run, not per round.
	stall    *stallResult
	syscalls []syscallCount
	scaleNs  []int           // the scale part's session counts, once it ran
	askGaps  []time.Duration // the ask part's spacings, once it ran
}

type key struct{ metric, who string }

func newResults() *results {
	return &results{samples: map[key][]float64{}}
}

func (r *results) add(metric, who string, v float64) {
	k := key{metric, who}
	if _, ok := r.samples[k]; !ok {
		r.order = append(r.order, k)
	}
	r.samples[k] = append(r.samples[k], v)
}

// note records something the reader of the table must know once.
func (r *results) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if !slices.Contains(r.notes, s) {
		r.notes = append(r.notes, s)
	}
}

// summary is a metric's median over the rounds, with the smallest and
// largest round.
type summary struct {
	med, lo, hi float64
	n           int
}

func (r *results) get(metric, who string) (summary, bool) {
	vs := r.samples[key{metric, who}]
	if len(vs) == 0 {
		return summary{}, false
	}
	return summary{percentile(vs, 50), slices.Min(vs), slices.Max(vs), len(vs)}, true
}

// whos lists the contenders measured for metric, in the order added.
func (r *results) whos(metric string) []string {
	var names []string
	for _, k := range r.order {
		if k.metric == metric {
			names = append(names, k.who)
		}
	}
	return names
}

// percentile is the nearest-rank percentile p of vs (the median of an even
// count is the mean of the middle two).
func percentile(vs []float64, p float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if p == 50 && len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	i := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(i-1, 0), len(s)-1)]
}
