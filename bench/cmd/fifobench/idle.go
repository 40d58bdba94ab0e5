//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

const (
	idleCPUMetric  = "idle CPU, kept writer, per 10 s (ms)"
	lineCPUMetric  = "CPU at one line per second (% of a core)"
	idleRSSMetric  = "idle RSS (MiB)"
	idleSettleTime = time.Second
)

// idle measures fifobridge with a kept writer and a reader and no traffic:
// the CPU time of all its threads over b.idle, then over b.idle at one
// line a second, and its resident memory.
func idle(b *bench, round int, r *results) error {
	rn, err := b.start(bridge, unpinned)
	if err != nil {
		return err
	}
	err = b.idleOnce(rn, r)
	if serr := rn.stop(); err == nil {
		err = serr
	}
	return err
}

func (b *bench) idleOnce(rn *running, r *results) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := openReader(ctx, rn.out)
	if err != nil {
		return err
	}
	defer out.Close()
	in, err := openWriter(ctx, rn.in)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := echo(in, out); err != nil { // it is up
		return err
	}
	time.Sleep(idleSettleTime)
	pid := rn.pid()

	before := cpuTime(pid)
	time.Sleep(b.idle)
	used := cpuTime(pid) - before
	r.add(idleCPUMetric, bridge, float64(used.Microseconds())/1e3*float64(10*time.Second)/float64(b.idle))
	r.add(idleRSSMetric, bridge, float64(rssKiB(pid))/1024)

	before = cpuTime(pid)
	begin := time.Now()
	for i := range int(b.idle / time.Second) {
		time.Sleep(time.Until(begin.Add(time.Duration(i) * time.Second)))
		if err := echo(in, out); err != nil {
			return err
		}
	}
	time.Sleep(time.Until(begin.Add(b.idle)))
	used = cpuTime(pid) - before
	r.add(lineCPUMetric, bridge, 100*used.Seconds()/time.Since(begin).Seconds())
	return nil
}

// echo writes a line and reads it back.
func echo(in, out *os.File) error {
	if _, err := in.Write([]byte("x\n")); err != nil {
		return fmt.Errorf("idle: write: %w", err)
	}
	got := make([]byte, 2)
	if _, err := io.ReadFull(out, got); err != nil || string(got) != "x\n" {
		return fmt.Errorf("idle: echo %q: %v", got, err)
	}
	return nil
}
