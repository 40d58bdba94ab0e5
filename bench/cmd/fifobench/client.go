//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// placement is where the contender, its child and the client run.
type placement string

const (
	pinned   placement = "pinned"   // all on one CPU (taskset -c CPU)
	unpinned placement = "unpinned" // where the kernel puts them
)

// prefix is the argv that puts a program in the placement.
func (pl placement) prefix(b *bench) []string {
	if pl == pinned {
		return []string{b.tools["taskset"], "-c", strconv.Itoa(b.cpu)}
	}
	return nil
}

// clientTimeout bounds one client run, so that a contender that stopped
// answering fails the run instead of hanging it.
const clientTimeout = 10 * time.Minute

// runClient runs the client with args in placement pl and returns the
// numbers it printed, one slice per line.
func (b *bench) runClient(pl placement, args ...string) ([][]int64, error) {
	argv := append(append(pl.prefix(b), b.client...), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), b.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if err := waitOrKill(cmd, clientTimeout); err != nil {
		return nil, fmt.Errorf("client %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	var rows [][]int64
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if line == "" {
			continue
		}
		var row []int64
		for _, f := range strings.Fields(line) {
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("client printed %q: %w", line, err)
			}
			row = append(row, n)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// samples runs the client and returns its samples in microseconds.
func (b *bench) samples(pl placement, args ...string) ([]float64, error) {
	rows, err := b.runClient(pl, args...)
	if err != nil {
		return nil, err
	}
	us := make([]float64, len(rows))
	for i, row := range rows {
		us[i] = float64(row[0]) / 1e3
	}
	return us, nil
}

// ping measures n round trips through r, with a kept or a fresh writer,
// after warm ones that are not reported.
func (b *bench) ping(r *running, pl placement, n, warm int, fresh bool) ([]float64, error) {
	args := []string{"-m", "ping", "-n", strconv.Itoa(n), "-w", strconv.Itoa(warm)}
	if fresh {
		args = append(args, "-f")
	}
	if s := contenders[r.name].sync; s != "" && !r.synced {
		args = append(args, "-s", s)
		r.synced = true
	}
	return b.samples(pl, append(args, r.in, r.out)...)
}
