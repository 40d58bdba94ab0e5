//go:build linux

package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// The scale part's contenders, each holding N bash sessions on
// terminals, and what it measures of them at each N.
const (
	scaleBridge  = "fifobridge agent" // run -mode sessions -tty -prompt: the agent's process
	scaleTmux    = "tmux server"      // one tmux server: its process
	scaleCommand = "echo hi"
	scaleAnswer  = "hi\n"
	// scaleSettle is how long the sessions sit before memory and
	// descriptors are read: their shells print their prompts and the
	// agent's work for each open ends.
	scaleSettle = time.Second
	// scaleStopPatience bounds a stop with every session open.
	scaleStopPatience = 30 * time.Second
)

// The kinds of figure at each session count; scaleMetric names one at N.
const (
	scaleMem     = "memory per session (kB of VmRSS over the process with none open)"
	scaleFDs     = "descriptors per session"
	scaleRSS     = "memory of the process (MiB, VmRSS)"
	scaleFDTotal = "descriptors of the process"
	scaleCPU     = "CPU while all sit idle (% of a core)"
	scaleOpen    = "open one more (ms)"
	scaleLs      = "ls, list-sessions (ms)"
	scaleAsk     = "ask `echo hi` of one, its answer (ms)"
	scaleClose   = "close one (ms)"
	scaleStop    = "stop: signal to the process's exit (ms)"
	scaleKids    = "stop: signal to the last shell's exit (ms)"
	scaleAdded   = "stop: added to the shells' exit (ms)"
)

// scaleKinds are the rows of the scale table, in order.
var scaleKinds = []string{scaleMem, scaleFDs, scaleRSS, scaleFDTotal, scaleCPU, scaleOpen, scaleLs, scaleAsk, scaleClose, scaleStop, scaleKids, scaleAdded}

func scaleMetric(kind string, n int) string { return kind + ", " + strconv.Itoa(n) + " sessions" }

// scaleSide is a contender of the scale part, started, with its sessions
// named as the harness opened them. Each call is one command, as a
// script runs it.
type scaleSide interface {
	// pid is the process whose memory, descriptors and CPU are measured.
	pid() int
	// open opens session name: fifobridge's returns at its first
	// prompt, tmux's once its pane exists.
	open(name string) error
	// settle returns once session name's shell has read all it was
	// typed and is at its prompt (tmux); fifobridge's open did so.
	settle(name string) error
	ls() error
	// ask asks session name `echo hi` and returns its answer.
	ask(name string) (string, error)
	close(name string) error
	// stop stops the process and every session, and says when each went.
	stop() (stopTimes, error)
}

// stopTimes is a stop: from its start to the process's exit, and to the
// last of the sessions' processes' exits.
type stopTimes struct{ process, kids time.Duration }

// scalePart opens b.scaleNs[i] bash sessions on terminals on a new
// fifobridge agent and on a new tmux server (when tmux is installed),
// in a rotated order, and measures each with them open: memory and
// descriptors per session over the process with none open, CPU while
// all sit idle, one more open, an ls, an ask and a close, and a stop.
// Then it times whole cycles of one session (scaleCycles).
func scalePart(b *bench, round int, r *results) error {
	if b.tools["bash"] == "" {
		r.note("sessions at scale: skipped (bash is not installed)")
		return nil
	}
	sides := []string{scaleBridge}
	if b.tools["tmux"] != "" {
		sides = append(sides, scaleTmux)
	} else {
		r.note("sessions at scale: tmux is not installed, fifobridge is measured alone")
	}
	r.scaleNs = b.scaleNs
	for i, n := range b.scaleNs {
		for _, who := range rotate(sides, round+i) {
			fmt.Fprintf(os.Stderr, "scale: %s, %d sessions\n", who, n)
			if err := b.scaleAt(who, n, i == 0, r); err != nil {
				return fmt.Errorf("%s, %d sessions: %w", who, n, err)
			}
		}
	}
	return b.scaleCycle(round, r)
}

// startSide starts contender who with no session open.
func (b *bench) startSide(who string) (scaleSide, error) {
	if who == scaleTmux {
		s, err := b.startTmux()
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	s, err := b.startSessionsAgent(scaleBridge)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// scaleAt measures contender who, newly started, with n sessions open;
// with none, it also measures the process with none open.
func (b *bench) scaleAt(who string, n int, none bool, r *results) (err error) {
	side, err := b.startSide(who)
	if err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			side.stop()
		}
	}()
	if err := openSettled(side, "warm"); err != nil { // what a first session costs once
		return err
	}
	if err := side.close("warm"); err != nil {
		return err
	}
	time.Sleep(scaleSettle)
	base := usageOf(side.pid())
	if none {
		r.add(scaleMetric(scaleRSS, 0), who, float64(base.rssKiB)/1024)
		r.add(scaleMetric(scaleFDTotal, 0), who, float64(base.fds))
		r.add(scaleMetric(scaleCPU, 0), who, idleCPU(side.pid(), b.scaleIdle))
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("s%03d", i) // none a prefix of another: tmux's targets match prefixes
		if err := openSettled(side, names[i]); err != nil {
			return err
		}
	}
	time.Sleep(scaleSettle)
	u := usageOf(side.pid())
	r.add(scaleMetric(scaleMem, n), who, float64(u.rssKiB-base.rssKiB)/float64(n))
	r.add(scaleMetric(scaleFDs, n), who, float64(u.fds-base.fds)/float64(n))
	r.add(scaleMetric(scaleRSS, n), who, float64(u.rssKiB)/1024)
	r.add(scaleMetric(scaleFDTotal, n), who, float64(u.fds))
	r.add(scaleMetric(scaleCPU, n), who, idleCPU(side.pid(), b.scaleIdle))
	if err := b.scaleTimes(side, who, n, names[0], r); err != nil {
		return err
	}
	stopped = true
	st, err := side.stop()
	if err != nil {
		return err
	}
	r.add(scaleMetric(scaleStop, n), who, millis(st.process))
	r.add(scaleMetric(scaleKids, n), who, millis(st.kids))
	r.add(scaleMetric(scaleAdded, n), who, millis(max(st.process-st.kids, 0)))
	return nil
}

// scaleTimes times b.scaleTries times each of: one more session opened,
// an ls, an ask of session asked, the new session closed; and adds the
// median of each.
func (b *bench) scaleTimes(side scaleSide, who string, n int, asked string, r *results) error {
	var open, ls, ask, cls []float64
	for range b.scaleTries {
		begin := time.Now()
		if err := side.open("extra"); err != nil {
			return err
		}
		open = append(open, millis(time.Since(begin)))
		begin = time.Now()
		if err := side.ls(); err != nil {
			return err
		}
		ls = append(ls, millis(time.Since(begin)))
		begin = time.Now()
		got, err := side.ask(asked)
		if err != nil {
			return err
		}
		if got != scaleAnswer {
			return fmt.Errorf("ask %s: answer %q, want %q", asked, got, scaleAnswer)
		}
		ask = append(ask, millis(time.Since(begin)))
		begin = time.Now()
		if err := side.close("extra"); err != nil {
			return err
		}
		cls = append(cls, millis(time.Since(begin)))
	}
	for kind, v := range map[string][]float64{scaleOpen: open, scaleLs: ls, scaleAsk: ask, scaleClose: cls} {
		r.add(scaleMetric(kind, n), who, percentile(v, 50))
	}
	return nil
}

// openSettled opens session name and waits until its shell is at its
// prompt.
func openSettled(side scaleSide, name string) error {
	if err := side.open(name); err != nil {
		return err
	}
	return side.settle(name)
}

// usage is a process's resident memory and open descriptors.
type usage struct{ rssKiB, fds int }

func usageOf(pid int) usage {
	fds, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	return usage{rssKiB: rssKiB(pid), fds: len(fds)}
}

// idleCPU is the CPU pid's threads use over d, in % of a core.
func idleCPU(pid int, d time.Duration) float64 {
	before := cpuTime(pid)
	begin := time.Now()
	time.Sleep(d)
	return 100 * float64(cpuTime(pid)-before) / float64(time.Since(begin))
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
