//go:build linux

package test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// agentConfig describes one "fifobridge run".
type agentConfig struct {
	flags      []string   // run flags besides -dir
	program    []string   // PROGRAM ARG...
	helper     string     // helper the test binary runs as PROGRAM (sets helperEnv)
	env        []string   // more environment for the agent
	unsetEnv   []string   // names removed from the agent's environment
	extraFiles []*os.File // descriptors the agent inherits from fd 3 on
	// wrap is a command the agent runs under, e.g. unshare: it gets the
	// agent's command line, through the launcher that reports the agent's
	// pid (wrapped_test.go).
	wrap []string
	// wrapExecs says wrap execs the agent's command line itself (no
	// launcher): the agent is the process started. Use it for a wrapper
	// that sets a signal state the agent must inherit as it is.
	wrapExecs bool
	dir       string // FIFO directory; default: a fresh, not yet existing one
	// cred, if set, is the user the agent runs as (raw uid, gid and
	// groups: no passwd entry needed); default: this process's.
	cred *syscall.Credential
}

// helperProgram returns PROGRAM ARG... that runs helper name of the test
// binary; set agentConfig.helper to name as well.
func helperProgram(args ...string) []string {
	return append([]string{selfBin}, args...)
}

// sh returns PROGRAM ARG... for a shell script run by /bin/sh; $0 is the
// test binary. Scripts use POSIX sh and the base system's commands only.
func sh(t *testing.T, script string) []string {
	t.Helper()
	return []string{busybox, "sh", "-c", script, selfBin}
}

// requireBusybox is kept for tests written when a shell needed busybox:
// "busybox APPLET" now runs the base system's APPLET, always there.
func requireBusybox(t *testing.T) { t.Helper() }

// agent is a running "fifobridge run" and its FIFO directory.
type agent struct {
	t      *testing.T
	dir    string
	in     string
	out    string
	status string
	logDir string
	cmd    *exec.Cmd
	done   chan struct{}
	code   int // exit code, 128+N for signal N; valid after done closed
	pid    int // the agent's pid in this PID namespace
}

// startAgent starts the agent; it is stopped (and its logs printed if t
// failed) when t ends.
func startAgent(t *testing.T, cfg agentConfig) *agent {
	t.Helper()
	requireKnownSignals(t)
	a := &agent{t: t, dir: cfg.dir, logDir: t.TempDir(), done: make(chan struct{})}
	if a.dir == "" {
		a.dir = filepath.Join(t.TempDir(), "fb")
	}
	a.in, a.out, a.status = filepath.Join(a.dir, "in"), filepath.Join(a.dir, "out"), filepath.Join(a.dir, "status.json")

	args := append([]string{agentBin, "run", "-dir", a.dir}, cfg.flags...)
	args = append(append(args, "--"), cfg.program...)
	env := append(agentEnv(t), cfg.env...)
	env = slices.DeleteFunc(env, func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(cfg.unsetEnv, name)
	})
	if cfg.helper != "" {
		env = append(env, helperEnv+"="+cfg.helper)
	}
	files := cfg.extraFiles
	var report *pidReport
	if len(cfg.wrap) > 0 && !cfg.wrapExecs {
		// The agent runs through the launcher, which reports its pid.
		var err error
		if report, err = newPIDReport(); err != nil {
			t.Fatal(err)
		}
		defer report.close()
		files = append(append([]*os.File(nil), files...), report.theirs)
		args = append([]string{selfBin, fmt.Sprintf("%s%d", execReportArg, 2+len(files))}, args...)
	}
	args = append(killWithWrapper(cfg.wrap), args...)
	a.cmd = exec.Command(args[0], args[1:]...)
	a.cmd.Env = env
	a.cmd.ExtraFiles = files
	a.cmd.SysProcAttr = dieWithTest()
	a.cmd.SysProcAttr.Credential = cfg.cred
	stdout, stderr := a.logFile("stdout"), a.logFile("stderr")
	a.cmd.Stdout, a.cmd.Stderr = stdout, stderr
	err := a.cmd.Start()
	stdout.Close()
	stderr.Close()
	if report != nil {
		report.theirs.Close()
	}
	if err != nil {
		t.Fatalf("start %q: %v", args, err)
	}
	go func() {
		a.cmd.Wait()
		a.code = exitCode(a.cmd.ProcessState)
		close(a.done)
	}()
	a.pid = a.cmd.Process.Pid
	t.Cleanup(a.cleanup)
	if report != nil {
		if a.pid, err = report.pid(hangTimeout); err != nil {
			t.Fatalf("agent under %s did not start: %v; stderr:\n%s", a.cmd.Path, err, a.stderr())
		}
	}
	return a
}

// agentEnv is this process's environment without FIFOBRIDGE_ variables
// (they would configure the agent), plus the test's marker.
func agentEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FIFOBRIDGE_") {
			env = append(env, kv)
		}
	}
	return append(env, markerEnv+"="+marker(t))
}

func (a *agent) logFile(name string) *os.File {
	f, err := os.Create(filepath.Join(a.logDir, name))
	if err != nil {
		a.t.Fatalf("create log file: %v", err)
	}
	return f
}

func (a *agent) stderr() string {
	b, _ := os.ReadFile(filepath.Join(a.logDir, "stderr"))
	return string(b)
}

func (a *agent) stdout() string {
	b, _ := os.ReadFile(filepath.Join(a.logDir, "stdout"))
	return string(b)
}

func (a *agent) exited() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

func (a *agent) cleanup() {
	t := a.t
	if !a.exited() {
		if !t.Failed() {
			if z := zombiesOf(a.pid); len(z) > 0 && !eventually(5*time.Second, func() bool { return len(zombiesOf(a.pid)) == 0 }) {
				t.Errorf("agent %d leaves zombie children:%s", a.pid, describe(zombiesOf(a.pid)))
			}
		}
		a.signal(syscall.SIGTERM)
		select {
		case <-a.done:
		case <-time.After(15 * time.Second):
			t.Errorf("agent %d did not stop within 15s of SIGTERM", a.pid)
			syscall.Kill(a.pid, syscall.SIGKILL)
			a.cmd.Process.Kill()
			<-a.done
		}
	}
	if out := a.stdout(); out != "" {
		t.Errorf("agent wrote on its stdout (logs belong on stderr):\n%s", out)
	}
	checkRace(t, "agent", a.stderr())
	if t.Failed() {
		t.Logf("agent %q exited with %d\nstderr:\n%s\nstdout:\n%s", a.cmd.Args, a.code, a.stderr(), a.stdout())
	}
}

// signal sends sig to the agent.
func (a *agent) signal(sig syscall.Signal) {
	if err := syscall.Kill(a.pid, sig); err != nil && !a.exited() {
		a.t.Errorf("signal agent %d: %v", a.pid, err)
	}
}

// wait waits for the agent to exit, at most timeout, and returns its exit
// code (128+N when killed by signal N).
func (a *agent) wait(timeout time.Duration) int {
	a.t.Helper()
	select {
	case <-a.done:
		return a.code
	case <-time.After(timeout):
		a.t.Fatalf("agent %d did not exit within %v", a.pid, timeout)
		return -1
	}
}

// stop sends SIGTERM and returns the exit code.
func (a *agent) stop() int {
	a.t.Helper()
	a.signal(syscall.SIGTERM)
	return a.wait(15 * time.Second)
}

// requireRunning fails the test if the agent has exited.
func (a *agent) requireRunning() {
	a.t.Helper()
	if a.exited() {
		a.t.Fatalf("agent exited early with %d", a.code)
	}
}

func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// status is the part of DIR/status.json the tests read.
type status struct {
	PID       int       `json:"pid"`
	Mode      string    `json:"mode"`
	State     string    `json:"state"`
	UpdatedAt time.Time `json:"updated_at"`
	In        string    `json:"in"`
	Out       string    `json:"out"`
	FDs       int       `json:"fds"`
	// Containment is "cgroup" or "tree".
	Containment string `json:"containment"`
	// Goroutines is reported by this implementation for leak checks; it
	// is not part of the contract, so it is used only when present.
	Goroutines *int `json:"goroutines"`
	Requests   struct {
		Accepted  int `json:"accepted"`
		Rejected  int `json:"rejected"`
		Active    int `json:"active"`
		Completed int `json:"completed"`
	} `json:"requests"`
	Child struct {
		PID      int `json:"pid"`
		Starts   int `json:"starts"`
		Restarts int `json:"restarts"`
		// RecentRestarts counts the restarts inside -restart-window.
		RecentRestarts int `json:"recent_restarts"`
		LastExit       *struct {
			Code   int    `json:"code"`
			Signal string `json:"signal"`
		} `json:"last_exit"`
	} `json:"child"`
}

func (a *agent) readStatus() (status, error) {
	var st status
	b, err := os.ReadFile(a.status)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("parse %s: %w: %q", a.status, err, b)
	}
	return st, nil
}

// waitStatus waits until the status file satisfies cond.
func (a *agent) waitStatus(what string, cond func(status) bool) status {
	a.t.Helper()
	var st status
	var err error
	if !eventually(hangTimeout, func() bool {
		st, err = a.readStatus()
		return err == nil && cond(st) || a.exited()
	}) || a.exited() {
		a.t.Fatalf("status never showed %s (exited: %v, last: %+v, err: %v)", what, a.exited(), st, err)
	}
	return st
}

// waitChild waits until the status shows a running child that is
// alive and returns its pid.
func (a *agent) waitChild() int {
	a.t.Helper()
	st := a.waitStatus("a running child", func(st status) bool {
		return st.State == "running" && st.Child.PID > 0 && alive(a.hostPID(st.Child.PID))
	})
	return st.Child.PID
}

// hostPID maps a pid reported by the agent to this PID namespace: for
// agents in a namespace of their own it is looked up via NSpid.
func (a *agent) hostPID(pid int) int {
	if pid <= 0 || !a.ownPIDNamespace() {
		return pid
	}
	for _, p := range pids() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "NSpid:" && f[2] == fmt.Sprint(pid) {
				if st, err := readStat(p); err == nil && (st.ppid == a.pid || p == a.pid) {
					return p
				}
			}
		}
	}
	return -1
}

// ownPIDNamespace reports whether the agent runs in another PID namespace
// than the test.
func (a *agent) ownPIDNamespace() bool {
	mine, _ := os.Readlink("/proc/self/ns/pid")
	its, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", a.pid))
	return err == nil && its != mine
}

// run runs a short command and returns its combined output.
func runQuiet(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

// runAgent runs "fifobridge ARGS..." to completion (at most hangTimeout)
// and returns its exit code and stderr.
func runAgent(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, agentBin, args...)
	cmd.Env = append(agentEnv(t), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.WaitDelay = 2 * time.Second
	cmd.SysProcAttr = dieWithTest()
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run fifobridge %q: %v", args, err)
	}
	checkRace(t, "fifobridge "+strings.Join(args, " "), stderr.String())
	if ctx.Err() != nil {
		t.Fatalf("fifobridge %q did not exit within %v; stderr:\n%s", args, hangTimeout, stderr.String())
	}
	return exitCode(cmd.ProcessState), stderr.String()
}

// dieWithTest makes a process the harness starts get SIGKILL when the test
// process dies, also when a -timeout panic ends it without cleanups.
// (PR_SET_PDEATHSIG fires when the forking thread exits; the runtime keeps
// its threads, and the tests lock none to a goroutine, so in practice it
// fires with the process. Anything left is killed by the next run's
// cleanDeadRuns.)
func dieWithTest() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// killWithWrapper returns a copy of wrap, with unshare(1) told to kill its
// child (the agent, PID 1 of the new namespace, and so the namespace) when
// it dies itself.
func killWithWrapper(wrap []string) []string {
	wrap = append([]string(nil), wrap...)
	if len(wrap) > 0 && filepath.Base(wrap[0]) == "unshare" && !slices.ContainsFunc(wrap, func(a string) bool {
		return strings.HasPrefix(a, "--kill-child")
	}) {
		wrap = slices.Insert(wrap, 1, "--kill-child")
	}
	return wrap
}

// checkRace fails t when a race-built process (or the race-built test
// binary as a helper) reported a data race on the stderr it wrote.
func checkRace(t *testing.T, what, stderr string) {
	t.Helper()
	if strings.Contains(stderr, "WARNING: DATA RACE") {
		t.Errorf("%s reported a data race:\n%s", what, stderr)
	}
}
