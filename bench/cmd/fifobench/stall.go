//go:build linux

package main

import (
	"fmt"
	"os/exec"
	"slices"
)

// stallResult is the one run of round trips under load.
type stallResult struct {
	n             int
	p50, p99, max float64 // µs
	overSecond    int
}

// busyLoops is how many spinning processes compete with the run, as the
// issue asks: two, every CPU of its 2-core VM.
const busyLoops = 2

// stall runs b.stall round trips through fifobridge with a kept writer,
// unpinned, while busy loops keep every CPU busy, and reports the largest.
func stall(b *bench, r *results) error {
	if b.stall <= 0 {
		return nil
	}
	var spinners []*exec.Cmd
	defer func() {
		for _, s := range spinners {
			s.Process.Kill()
			s.Wait()
		}
	}()
	for range busyLoops {
		s := exec.Command(b.tools["sh"], "-c", "while :; do :; done")
		if err := s.Start(); err != nil {
			return fmt.Errorf("start a busy loop: %w", err)
		}
		spinners = append(spinners, s)
	}
	rn, err := b.start(bridge, unpinned)
	if err != nil {
		return err
	}
	us, err := b.ping(rn, unpinned, b.stall, warmUp, false)
	if serr := rn.stop(); err == nil {
		err = serr
	}
	if err != nil {
		return err
	}
	res := stallResult{n: len(us), p50: percentile(us, 50), p99: percentile(us, 99), max: slices.Max(us)}
	for _, v := range us {
		if v > 1e6 {
			res.overSecond++
		}
	}
	r.stall = &res
	return nil
}
