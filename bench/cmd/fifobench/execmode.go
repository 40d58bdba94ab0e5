//go:build linux

package main

import (
	"fmt"
	"os/exec"
	"strconv"
	"time"
)

const (
	execMetric   = "exec request of `true`, p50 (µs)"
	execBaseline = "exec.Command+Wait"
)

// execMode times b.requests serial requests (one in flight) through
// fifobridge's exec mode, each from writing the line to reading its exit
// frame, against Go's exec.Command(...).Run() of the same program here in
// the harness, both unpinned.
func execMode(b *bench, round int, r *results) error {
	for _, name := range rotate(b.have([]string{bridgeExec, bridgeExecBefore, execBaseline}, r), round) {
		var us []float64
		var err error
		if name == execBaseline {
			us, err = b.execCommand()
		} else {
			us, err = b.execRequests(name)
		}
		if err != nil {
			return err
		}
		r.add(execMetric, name, percentile(us, 50))
	}
	return nil
}

// execRequests times b.requests serial requests through contender name.
func (b *bench) execRequests(name string) ([]float64, error) {
	rn, err := b.start(name, unpinned)
	if err != nil {
		return nil, err
	}
	us, err := b.samples(unpinned, "-m", "req", "-n", strconv.Itoa(b.requests), "-w", "10", rn.in, rn.out)
	if serr := rn.stop(); err == nil {
		err = serr
	}
	return us, err
}

func (b *bench) execCommand() ([]float64, error) {
	us := make([]float64, 0, b.requests)
	for i := -10; i < b.requests; i++ {
		begin := time.Now()
		if err := exec.Command(b.tools["true"]).Run(); err != nil {
			return nil, fmt.Errorf("exec.Command true: %w", err)
		}
		if i >= 0 {
			us = append(us, float64(time.Since(begin).Nanoseconds())/1e3)
		}
	}
	return us, nil
}
