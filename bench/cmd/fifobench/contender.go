//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The data-path contenders: each bridges DIR/in and DIR/out to a cat
// child, or is cat itself.
const (
	direct     = "direct cat"  // cat <>in >out: no bridge, two hops
	floor      = "C floor"     // bench/floor.c: poll+splice, one thread
	floorTTY   = "C tty floor" // bench/ttyfloor.c: poll+read/write on a terminal
	socat      = "socat"       // socat OPEN:in,rdwr!!OPEN:out,wronly EXEC:cat
	bridge     = "fifobridge"  // fifobridge run -- cat
	bridgeTTY  = "fifobridge -tty"
	bridgeExec = "fifobridge exec mode"
	execLoop   = "exec.Command per line" // bench/execloop: a goroutine per request
)

// The same contenders run by the -before binary.
const (
	before           = " before"
	bridgeBefore     = bridge + before
	bridgeTTYBefore  = bridgeTTY + before
	bridgeExecBefore = bridgeExec + before
)

// isBefore says whether contender name runs the -before binary.
func isBefore(name string) bool { return strings.HasSuffix(name, before) }

// binOf is the fifobridge binary contender name runs.
func (b *bench) binOf(name string) string {
	if isBefore(name) {
		return b.before
	}
	return b.bin
}

// runArgv is how contender name runs fifobridge on dir: run, then what
// args gives (flags, --, the child).
func runArgv(name string, args func(b *bench) []string) func(b *bench, dir, in, out string) []string {
	return func(b *bench, dir, _, _ string) []string {
		return append([]string{b.binOf(name), "run", "-dir", dir, "-log-level", "error"}, args(b)...)
	}
}

// The arguments after -dir and -log-level of each way fifobridge runs.
func catArgs(b *bench) []string { return []string{"--", b.tools["cat"]} }

// A terminal echoes and turns \n into \r\n: the child makes it raw
// first, so the round trip is the same line as through a pipe.
func ttyArgs(b *bench) []string { return []string{"-tty", "--", b.tools["sh"], "-c", rawCat} }

// Up to 16 requests at once, as many as the most senders of execrate.
func execArgs(b *bench) []string {
	return []string{"-mode", "exec", "-max-concurrent", "16", "--", b.tools["true"]}
}

// contender is a program started on a pair of FIFOs.
type contender struct {
	name string
	// sync is the byte a terminal child prints once it is ready; the
	// client reads up to it before it measures.
	sync string
	argv func(b *bench, dir, in, out string) []string
}

var contenders = map[string]contender{
	direct: {name: direct, argv: func(b *bench, _, in, out string) []string {
		return []string{b.tools["sh"], "-c", `exec cat <>"$1" >"$2"`, "sh", in, out}
	}},
	floor: {name: floor, argv: func(b *bench, _, in, out string) []string {
		return []string{b.floor, in, out, b.tools["cat"]}
	}},
	floorTTY: {name: floorTTY, sync: "R", argv: func(b *bench, _, in, out string) []string {
		return []string{b.ttyFloor, in, out, b.tools["sh"], "-c", rawCat}
	}},
	socat: {name: socat, argv: func(b *bench, _, in, out string) []string {
		return []string{b.tools["socat"], "-b", "131072", "OPEN:" + in + ",rdwr!!OPEN:" + out + ",wronly", "EXEC:" + b.tools["cat"]}
	}},
	bridge:           {name: bridge, argv: runArgv(bridge, catArgs)},
	bridgeBefore:     {name: bridgeBefore, argv: runArgv(bridgeBefore, catArgs)},
	bridgeTTY:        {name: bridgeTTY, sync: "R", argv: runArgv(bridgeTTY, ttyArgs)},
	bridgeTTYBefore:  {name: bridgeTTYBefore, sync: "R", argv: runArgv(bridgeTTYBefore, ttyArgs)},
	bridgeExec:       {name: bridgeExec, argv: runArgv(bridgeExec, execArgs)},
	bridgeExecBefore: {name: bridgeExecBefore, argv: runArgv(bridgeExecBefore, execArgs)},
	bridgeStop:       {name: bridgeStop, argv: runArgv(bridgeStop, stopArgs)},
	askBridge:        {name: askBridge, argv: runArgv(askBridge, askArgs)},
	askKept:          {name: askKept, argv: runArgv(askKept, askArgs)},
	askKeptBefore:    {name: askKeptBefore, argv: runArgv(askKeptBefore, askArgs)},
	askKeptSess:      {name: askKeptSess, argv: runArgv(askKeptSess, askSessArgs)},
	askSendCat:       {name: askSendCat, argv: runArgv(askSendCat, catExecArgs)},
	askExec:          {name: askExec, argv: runArgv(askExec, pyExecArgs)},
	sessBridge:       {name: sessBridge, argv: runArgv(sessBridge, sessArgs)},
	scaleBridge:      {name: scaleBridge, argv: runArgv(scaleBridge, scaleArgs)},
	execLoop: {name: execLoop, argv: func(b *bench, _, in, _ string) []string {
		return []string{b.execloop, in, b.tools["true"]}
	}},
}

// rawCat is the terminal contenders' child: cat on a raw terminal, which
// says R once it is raw.
const rawCat = "stty raw -echo && printf R && exec cat"

// available says whether the programs contender name needs are there.
func (b *bench) available(name string) bool {
	switch name {
	case floor:
		return b.floor != ""
	case floorTTY:
		return b.ttyFloor != ""
	case socat:
		return b.tools["socat"] != ""
	case askFloor, askKept, askKeptSess, askBridge, askExec:
		return b.tools["python3"] != ""
	case askPexpect:
		return b.tools["python3"] != "" && b.pexpect
	case askKeptBefore:
		return b.tools["python3"] != "" && b.before != ""
	}
	if isBefore(name) {
		return b.before != ""
	}
	return true
}

// running is a started contender.
type running struct {
	name    string
	in, out string
	cmd     *exec.Cmd
	held    []*os.File // the FIFOs, held so that their 1 MiB stays
	synced  bool       // the client has read the terminal child's ready byte
}

// start starts contender name on new FIFOs, in placement pl. Every
// contender gets FIFOs with the 1 MiB buffers fifobridge asks for, so that
// the comparison is of the bridges, not of buffer sizes; a FIFO's size
// lives while it is open, so the harness holds both (read-write, which
// also means the client's opens never wait for the contender).
func (b *bench) start(name string, pl placement) (*running, error) {
	dir, err := os.MkdirTemp(b.work, "fifos-")
	if err != nil {
		return nil, err
	}
	r := &running{name: name, in: filepath.Join(dir, "in"), out: filepath.Join(dir, "out")}
	for _, p := range []string{r.in, r.out} {
		if err := unix.Mkfifo(p, 0o600); err != nil {
			r.release()
			return nil, fmt.Errorf("mkfifo %s: %w", p, err)
		}
		f, err := os.OpenFile(p, os.O_RDWR|unix.O_NONBLOCK, 0)
		if err != nil {
			r.release()
			return nil, err
		}
		unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, 1<<20)
		r.held = append(r.held, f)
	}
	argv := append(pl.prefix(b), contenders[name].argv(b, dir, r.in, r.out)...)
	r.cmd = exec.Command(argv[0], argv[1:]...)
	r.cmd.Stderr = os.Stderr
	if err := r.cmd.Start(); err != nil {
		r.release()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return r, nil
}

// pid is the contender's own process (taskset execs it).
func (r *running) pid() int { return r.cmd.Process.Pid }

// stop asks the contender to stop with SIGTERM, waits for it, and waits
// until every process it had started is gone too, killing what is left
// after a few seconds: no run leaves a process behind.
func (r *running) stop() error {
	_, err := r.timedStop()
	return err
}

// timedStop is stop, and says how long the contender itself took from
// SIGTERM to its exit.
func (r *running) timedStop() (time.Duration, error) {
	tree := openTree(r.pid())
	begin := time.Now()
	r.cmd.Process.Signal(unix.SIGTERM)
	err := waitOrKill(r.cmd, stopPatience)
	took := time.Since(begin)
	tree.waitGone(stopPatience)
	r.release()
	if err != nil && !endedByTERM(err) {
		return took, fmt.Errorf("stop %s: %w", r.name, err)
	}
	return took, nil
}

func (r *running) release() {
	for _, f := range r.held {
		f.Close()
	}
	os.RemoveAll(filepath.Dir(r.in))
}

// endedByTERM says whether a contender's exit is its answer to SIGTERM:
// killed by it, or exiting 143 as its child was, or 129 as a terminal
// child stopped with HUP (-tty's stop signal) was.
func endedByTERM(err error) bool {
	exit, ok := err.(*exec.ExitError)
	if !ok {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && (ws.Signal() == syscall.SIGTERM || ws.ExitStatus() == 128+int(syscall.SIGTERM) ||
		ws.ExitStatus() == 128+int(syscall.SIGHUP))
}
