//go:build linux

package test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The stop budget of exec mode: in every state where one of its writes can
// block (a full output FIFO nobody reads, reply FIFOs whose readers stall,
// a full rejection queue, trees that ignore the stop signal), a TERM ends
// the agent within -stop-timeout + 1 s, trial after trial, with busySlack
// on top for a busy machine: a write that holds the stop up for ever, or
// a -stop-timeout per tree, still fails. How close to -stop-timeout the
// stop comes (+ 0.5 s, in the state of a full output FIFO and children
// that ignore TERM) is the benchmark's to judge, on a quiet machine:
// cmd/fifobench, part stop.

const (
	// budgetStopTimeout is the agents' -stop-timeout: short, so that the
	// trials are.
	budgetStopTimeout = time.Second
)

// budgetTrials is how many stops in a row each state must pass; -short
// runs a few only.
func budgetTrials() int {
	if testing.Short() {
		return 3
	}
	return 20
}

// ignoreTermReady is a child that ignores TERM (so only SIGKILL at
// -stop-timeout ends it), then creates the file named on its stdin's
// first line, then sleeps.
var ignoreTermReady = binSh(`read ready; trap "" TERM; : >"$ready"; exec sleep 60`)

// TestExecStopBudget checks the stop budget in each state, budgetTrials
// times in a row, and logs the slowest stop of each.
func TestExecStopBudget(t *testing.T) {
	t.Parallel()
	// Where children ignore TERM, no stop can end before -stop-timeout:
	// one that does means the state was not what the test made.
	states := []struct {
		name    string
		setup   func(t *testing.T) (*agent, func())
		atLeast time.Duration
	}{
		{"full output fifo nobody reads", budgetFullOutput, budgetStopTimeout},
		{"stalled reply fifos", budgetStalledReplies, budgetStopTimeout},
		{"rejection queue full", budgetRejectionsFull, 0},
		{"30 running and 20 queued ignore TERM", budgetRunningAndQueued, budgetStopTimeout},
	}
	for _, s := range states {
		t.Run(s.name, func(t *testing.T) {
			var took []time.Duration
			for i := range budgetTrials() {
				ok := t.Run(strconv.Itoa(i), func(t *testing.T) {
					checkLeaks(t, false)
					a, after := s.setup(t)
					took = append(took, timeStop(t, a))
					if last := took[len(took)-1]; last < s.atLeast {
						t.Errorf("stop took %v, less than -stop-timeout: a child did not ignore TERM", last)
					}
					if after != nil {
						after()
					}
				})
				if !ok {
					break
				}
			}
			if len(took) > 0 {
				slices.Sort(took)
				t.Logf("stops: fastest %v, median %v, slowest %v (the contract's bound %v)", took[0].Round(time.Millisecond),
					took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond), budgetStopTimeout+time.Second)
			}
		})
	}
}

// timeStop sends the agent TERM and fails t unless it exits 0 within
// stopBound(budgetStopTimeout); it returns how long the agent took.
func timeStop(t *testing.T, a *agent) time.Duration {
	t.Helper()
	exited := make(chan time.Time, 1)
	go func() { <-a.done; exited <- time.Now() }()
	begin := time.Now()
	a.signal(syscall.SIGTERM)
	var took time.Duration
	select {
	case at := <-exited:
		took = at.Sub(begin)
	case <-time.After(hangTimeout):
		t.Fatalf("agent did not exit within %v of TERM", hangTimeout)
	}
	if took > stopBound(budgetStopTimeout) {
		t.Errorf("stop took %v; want at most -stop-timeout + 1 s", took.Round(time.Millisecond))
	}
	if a.code != 0 {
		t.Errorf("agent exited %d, want 0", a.code)
	}
	return took
}

// budgetAgent starts an exec agent with the budget's -stop-timeout.
func budgetAgent(t *testing.T, program []string, flags ...string) *agent {
	t.Helper()
	flags = append([]string{"-mode", "exec", "-stop-timeout", budgetStopTimeout.String()}, flags...)
	a := startAgent(t, agentConfig{flags: flags, program: program})
	waitServing(t, a)
	return a
}

// readyFile names a file a child of ignoreTermReady creates once it
// ignores TERM; waitReady waits for it.
func readyFile(t *testing.T, name string) string {
	return filepath.Join(t.TempDir(), name)
}

func waitReady(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if !eventually(hangTimeout, func() bool { _, err := os.Stat(p); return err == nil }) {
			t.Fatalf("child never said ready (%s)", p)
		}
	}
}

// fillFIFO fills the FIFO at path with raw non-blocking writes (an
// *os.File would wait for room); someone must have it open for reading.
func fillFIFO(t *testing.T, path string) {
	t.Helper()
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open %s for writing: %v", path, err)
	}
	defer unix.Close(fd)
	chunk := bytes.Repeat([]byte("#"), 64<<10)
	for {
		if _, err := unix.Write(fd, chunk); err != nil {
			if err != unix.EAGAIN {
				t.Fatalf("fill %s: %v", path, err)
			}
			chunk = chunk[:len(chunk)/2]
			if len(chunk) == 0 {
				return
			}
		}
	}
}

// budgetFullOutput: the output FIFO is full and nobody reads it; a request
// whose child ignores TERM waits to write its start frame there.
func budgetFullOutput(t *testing.T) (*agent, func()) {
	a := budgetAgent(t, ignoreTermReady)
	openReader(t, a.out) // held, never read
	fillFIFO(t, a.out)
	ready := readyFile(t, "ready")
	w := openWriter(t, a.in)
	w.writeLine(jsonLine(t, map[string]any{"id": "full", "stdin": ready + "\n"}))
	waitReady(t, ready)
	return a, w.close
}

// budgetStalledReplies: three requests answer on reply FIFOs that are
// open for reading, full and never read; their children ignore TERM.
func budgetStalledReplies(t *testing.T) (*agent, func()) {
	a := budgetAgent(t, ignoreTermReady)
	w := openWriter(t, a.in)
	var ready []string
	for i := range 3 {
		name := fmt.Sprintf("stall%d", i)
		stalledReply(t, a.dir, name, true)
		ready = append(ready, readyFile(t, name))
		w.writeLine(jsonLine(t, map[string]any{"id": name, "reply": name, "stdin": ready[i] + "\n"}))
	}
	waitReady(t, ready...)
	return a, w.close
}

// budgetRejectionsFull: the output FIFO is full and nobody reads it, and
// more error frames than the rejection queue holds wait for it.
func budgetRejectionsFull(t *testing.T) (*agent, func()) {
	a := budgetAgent(t, binSh("cat"))
	openReader(t, a.out) // held, never read
	fillFIFO(t, a.out)
	w := openWriter(t, a.in)
	// About 300 bytes of frame each: 300 KB, more than the queue's 256 KiB.
	const n = 1000
	var lines bytes.Buffer
	for i := range n {
		fmt.Fprintf(&lines, `{"id":"bad-%04d-%s", nope`+"\n", i, strings.Repeat("x", 200))
	}
	w.write(lines.Bytes())
	waitRejected(t, a, n)
	return a, w.close
}

// budgetRunningAndQueued: 30 requests run children that ignore TERM and 20
// more wait in the agent's queue; a reader takes every frame.
func budgetRunningAndQueued(t *testing.T) (*agent, func()) {
	const running, queued = 30, 20
	a, w, r := startExec(t, agentConfig{
		flags:   []string{"-max-concurrent", strconv.Itoa(running), "-stop-timeout", budgetStopTimeout.String()},
		program: binSh(`trap "" TERM; echo ready; exec sleep 60`),
	})
	var lines strings.Builder
	for i := range running + queued {
		fmt.Fprintf(&lines, `{"id":"t%d"}`+"\n", i)
	}
	w.write([]byte(lines.String()))
	all := map[string]*response{}
	for ready := 0; ready < running; {
		if f := readFrame(t, r); addFrame(t, all, f).done() {
			t.Fatalf("a request ended before the stop:%s", all[f.ID])
		} else if f.Type == "stdout" {
			ready++
		}
	}
	if !eventually(hangTimeout, func() bool { return endHolds(w) == 0 }) {
		t.Fatalf("the agent did not read the %d queued requests", queued)
	}
	return a, func() {
		for ended := 0; ended < running+queued; {
			if addFrame(t, all, readFrame(t, r)).done() {
				ended++
			}
		}
		killed := 0
		for id, resp := range all {
			switch {
			case resp.exit != nil && resp.exit.Signal == "KILL":
				killed++
			case resp.err == nil || !strings.Contains(resp.err.Error, "stopping"):
				t.Errorf("request %s: want an exit frame saying KILL, or an error frame saying the agent stops:%s", id, resp)
			}
		}
		if killed != running {
			t.Errorf("%d exit frames say KILL, want %d", killed, running)
		}
		w.close()
	}
}

// endHolds returns how many bytes the FIFO e is an end of holds.
func endHolds(e *fifoEnd) int {
	rc, err := e.f.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	rc.Control(func(fd uintptr) {
		if m, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
			n = m
		}
	})
	return n
}
