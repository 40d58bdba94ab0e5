//go:build linux

package main

import (
	"fmt"
	"slices"
)

// streamContenders are the data-path contenders, in table order.
var streamContenders = []string{direct, floor, socat, bridge, bridgeBefore, floorTTY, bridgeTTY, bridgeTTYBefore}

// rtMetric names a round-trip statistic: p is 50 or 99.
func rtMetric(p int, fresh bool, pl placement) string {
	w := "kept"
	if fresh {
		w = "fresh"
	}
	return fmt.Sprintf("round trip p%d, %s writer, %s (µs)", p, w, pl)
}

// roundTrip measures, in both placements and with both writers, every
// data-path contender once, in an order rotated by round.
func roundTrip(b *bench, round int, r *results) error {
	for _, pl := range b.placements() {
		for _, fresh := range []bool{false, true} {
			for _, name := range rotate(b.have(streamContenders, r), round) {
				us, err := b.pingOnce(name, pl, fresh)
				if err != nil {
					return err
				}
				r.add(rtMetric(50, fresh, pl), name, percentile(us, 50))
				r.add(rtMetric(99, fresh, pl), name, percentile(us, 99))
			}
		}
	}
	return nil
}

func (b *bench) pingOnce(name string, pl placement, fresh bool) ([]float64, error) {
	rn, err := b.start(name, pl)
	if err != nil {
		return nil, err
	}
	us, err := b.ping(rn, pl, b.pings, warmUp, fresh)
	if serr := rn.stop(); err == nil {
		err = serr
	}
	return us, err
}

// warmUp is how many round trips or starts go unreported first: the first
// ones include the contender's own start.
const warmUp = 50

// placements are the CPU placements a run measures: pinned needs taskset.
func (b *bench) placements() []placement {
	if b.tools["taskset"] == "" {
		return []placement{unpinned}
	}
	return []placement{pinned, unpinned}
}

// have is names less the contenders whose programs are missing, noted,
// and less those of the -before binary when there is none.
func (b *bench) have(names []string, r *results) []string {
	var ok []string
	for _, n := range names {
		if isBefore(n) && b.before == "" {
			continue
		}
		if b.available(n) {
			ok = append(ok, n)
		} else {
			r.note("%s: skipped (%s)", n, missingWhy(n))
		}
	}
	return ok
}

func missingWhy(name string) string {
	switch name {
	case floor:
		return "no C compiler to build bench/floor.c"
	case askFloor, askKept, askKeptBefore, askKeptSess, askBridge, askExec:
		return "python3 is not installed"
	case askPexpect:
		return "python3 has no pexpect: apt-get install python3-pexpect"
	}
	return "not installed"
}

// rotate is names rotated left by round, so that no contender always
// runs first or right after the same other.
func rotate(names []string, round int) []string {
	if len(names) == 0 {
		return nil
	}
	k := round % len(names)
	return slices.Concat(names[k:], names[:k])
}
