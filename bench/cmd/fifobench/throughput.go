//go:build linux

package main

import (
	"fmt"
	"strconv"
)

const tputMetric = "stream throughput, unpinned (MiB/s)"

// throughput streams b.sizeMiB through every pipe contender, unpinned:
// pinned to one CPU, every bridge shares it with cat. The terminal is left
// out: a terminal is not a byte pipe at that rate.
func throughput(b *bench, round int, r *results) error {
	for _, name := range rotate(b.have([]string{direct, floor, socat, bridge, bridgeBefore}, r), round) {
		rate, err := b.tputOnce(name)
		if err != nil {
			return err
		}
		r.add(tputMetric, name, rate)
	}
	return nil
}

func (b *bench) tputOnce(name string) (float64, error) {
	rn, err := b.start(name, unpinned)
	if err != nil {
		return 0, err
	}
	rows, err := b.runClient(unpinned, "-m", "tput", "-b", strconv.Itoa(b.sizeMiB), rn.in, rn.out)
	if serr := rn.stop(); err == nil {
		err = serr
	}
	if err != nil {
		return 0, err
	}
	if len(rows) != 1 || len(rows[0]) != 2 || rows[0][1] <= 0 {
		return 0, fmt.Errorf("tput through %s: client printed %v", name, rows)
	}
	return float64(rows[0][0]) / (1 << 20) / (float64(rows[0][1]) / 1e9), nil
}
