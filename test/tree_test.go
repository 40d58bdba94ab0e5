//go:build linux

package test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func init() {
	helpers["treereq"] = helperTreeRequest
	helpers["treeorphanparent"] = helperTreeOrphanParent
	helpers["treelingerparent"] = helperTreeLingerParent
	helpers["treeorphan"] = helperTreeOrphan
	helpers["treecount"] = helperTreeCount
}

// treereq wait FIFO: exit 0 once FIFO's writer is done.
// treereq spawn DIR [CGROUP [stay]]: leave a setsid'ed orphan to the agent
// (its parent exits at once; "treeorphan DIR [CGROUP [stay]]"), then wait
// for DIR/gateA like "wait".
// treereq linger DIR CGROUP: catch TERM and go on; start "treelingerparent
// DIR CGROUP", which the stop signal makes leave its setsid'ed orphan to
// the agent; then wait for DIR/gateA like "wait".
func helperTreeRequest(args []string) int {
	gate := args[1]
	if args[0] == "linger" {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM) // a handler: the exec'd parent dies of TERM
		c := exec.Command(self(), args[1:]...)
		c.Env = append(os.Environ(), helperEnv+"=treelingerparent")
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "treereq: %v\n", err)
			return 2
		}
		gate = filepath.Join(args[1], "gateA")
	}
	if args[0] == "spawn" {
		c := exec.Command(self(), args[1:]...)
		c.Env = append(os.Environ(), helperEnv+"=treeorphanparent")
		c.Stderr = os.Stderr
		if err := c.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "treereq: %v\n", err)
			return 2
		}
		gate = filepath.Join(args[1], "gateA")
	}
	return waitFIFO(gate)
}

// treeorphanparent DIR [CGROUP [stay]]: start "treeorphan DIR [CGROUP
// [stay]]" in a session of its own and exit without waiting for it, so that
// it is reparented to the agent.
func helperTreeOrphanParent(args []string) int {
	c := exec.Command(self(), args...)
	c.Env = append(os.Environ(), helperEnv+"=treeorphan")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "treeorphanparent: %v\n", err)
		return 2
	}
	return 0
}

// treelingerparent DIR CGROUP: start "treeorphan DIR CGROUP stay" in a
// session of its own, then run until a signal (the stop's TERM) ends it,
// so that the orphan is reparented to the agent only then.
func helperTreeLingerParent(args []string) int {
	c := exec.Command(self(), args[0], args[1], "stay")
	c.Env = append(os.Environ(), helperEnv+"=treeorphan")
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "treelingerparent: %v\n", err)
		return 2
	}
	return waitFIFO(filepath.Join(args[0], "release")) // never written
}

// treeorphan DIR [CGROUP [stay]]: move itself into the cgroup v2 directory
// CGROUP when one is given, then write its pid to DIR/orphan.pid, then run
// until DIR/release's writer is done or a TERM comes; it writes a line to
// DIR/orphan.signals for each TERM, staying a little after the first to
// see a second come, or, with "stay", until killed.
func helperTreeOrphan(args []string) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM)
	if len(args) > 1 {
		// "0" is the writer itself.
		if err := os.WriteFile(filepath.Join(args[1], "cgroup.procs"), []byte("0"), 0); err != nil {
			fmt.Fprintf(os.Stderr, "treeorphan: %v\n", err)
			return 2
		}
	}
	stay := len(args) > 2 && args[2] == "stay"
	tmp := filepath.Join(args[0], "orphan.pid.tmp")
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return 2
	}
	if err := os.Rename(tmp, filepath.Join(args[0], "orphan.pid")); err != nil {
		return 2
	}
	released := make(chan int, 1)
	go func() { released <- waitFIFO(filepath.Join(args[0], "release")) }()
	var linger <-chan time.Time
	for {
		select {
		case code := <-released:
			return code
		case <-sigs:
			appendLine(filepath.Join(args[0], "orphan.signals"), "TERM")
			if linger == nil && !stay {
				linger = time.After(100 * time.Millisecond) // see above
			}
		case <-linger:
			return 0
		}
	}
}

// self is the test binary, as seen from a helper (selfBin is set only
// where tests run).
func self() string {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "find the test binary: %v\n", err)
		os.Exit(2)
	}
	return exe
}

func waitFIFO(path string) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "wait for %s: %v\n", path, err)
		return 2
	}
	defer f.Close()
	io.Copy(io.Discard, f)
	return 0
}

// TestTreeOrphanAttribution runs two requests at once; one leaves a
// setsid'ed helper to the agent. The end of the other request must not kill
// it (it cannot be told whose it is while both run); the end of its own
// request does, and so does a stop of the agent, with one TERM.
func TestTreeOrphanAttribution(t *testing.T) {
	t.Parallel()
	t.Run("requests end", func(t *testing.T) {
		checkLeaks(t, false)
		o := startOrphanRequests(t)
		openWriter(t, filepath.Join(o.dir, "gateB")).close()
		collect(t, o.r, o.all, "B")
		o.all["B"].requireExit(t, 0, "")
		// Active drops to 1 once B's stop, the rest of its tree included, is over.
		o.a.waitExecStatus("B finished", func(st status) bool { return st.Requests.Active == 1 })
		if !alive(o.helper) {
			t.Fatalf("A's helper %d was killed when B ended", o.helper)
		}

		openWriter(t, filepath.Join(o.dir, "gateA")).close()
		collect(t, o.r, o.all, "A")
		o.all["A"].requireExit(t, 0, "")
		requireGone(t, "A's helper after A ended", o.helper)
		if got := readLines(filepath.Join(o.dir, "orphan.signals")); len(got) != 1 {
			t.Errorf("A's helper got %q, want one TERM", got)
		}
		if code := o.a.stop(); code != 0 {
			t.Fatalf("agent exited with %d, want 0", code)
		}
	})
	t.Run("agent stops", func(t *testing.T) {
		checkLeaks(t, false)
		o := startOrphanRequests(t)
		if code := o.a.stop(); code != 0 {
			t.Fatalf("agent exited with %d, want 0", code)
		}
		requireGone(t, "A's helper after the agent stopped", o.helper)
		if got := readLines(filepath.Join(o.dir, "orphan.signals")); len(got) != 1 {
			t.Errorf("A's helper got %q, want one TERM", got)
		}
	})
}

type orphanRequests struct {
	a      *agent
	r      *fifoEnd
	dir    string
	all    map[string]*response
	helper int // the pid of A's setsid'ed helper
}

// startOrphanRequests starts an exec agent and requests B, which waits
// for DIR/gateB, and A, which leaves a setsid'ed helper to the agent and
// waits for DIR/gateA.
func startOrphanRequests(t *testing.T) orphanRequests {
	t.Helper()
	o := orphanRequests{dir: t.TempDir(), all: map[string]*response{}}
	for _, name := range []string{"gateA", "gateB", "release"} {
		if err := syscall.Mkfifo(filepath.Join(o.dir, name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var w *fifoEnd
	o.a, w, o.r = startExec(t, agentConfig{
		program: helperProgram(), helper: "treereq",
		flags: []string{"-max-concurrent", "2", "-allow-args", "-stop-timeout", "5s"},
	})
	// B starts first, so that the helper A leaves starts after both.
	for _, req := range []struct {
		id   string
		args []string
	}{{"B", []string{"wait", filepath.Join(o.dir, "gateB")}}, {"A", []string{"spawn", o.dir}}} {
		w.writeLine(jsonLine(t, map[string]any{"id": req.id, "args": req.args}))
		f := readFrame(t, o.r)
		if f.Type != "start" || f.ID != req.id {
			t.Fatalf("want %s's start frame, got %s", req.id, f.line)
		}
		o.all[f.ID] = &response{id: f.ID}
		o.all[f.ID].add(t, f)
	}
	if !eventually(hangTimeout, func() bool {
		b, err := os.ReadFile(filepath.Join(o.dir, "orphan.pid"))
		o.helper, _ = strconv.Atoi(string(b))
		st, _ := readStat(o.helper)
		return err == nil && st.ppid == o.a.pid // its parent is gone
	}) {
		t.Fatalf("the helper %d was not reparented to the agent %d", o.helper, o.a.pid)
	}
	return o
}

// treecount DIR N: a tree that counts the signals it gets. The child starts
// N-1 processes in its group and one that calls setsid, all children of
// it; every process writes "ready PID" to DIR/ready once it catches TERM,
// INT and HUP, and "PID SIG" to DIR/signals for each one it gets. After
// the first TERM or INT a process stays a little to see a second come.
func helperTreeCount(args []string) int {
	dir, n := args[0], atoi(args[1])
	var kids []*exec.Cmd
	for i := 1; i <= n; i++ {
		c := exec.Command(self(), dir, "0")
		c.Env = append(os.Environ(), helperEnv+"=treecount")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: i == n}
		if err := c.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "treecount: %v\n", err)
			return 2
		}
		kids = append(kids, c)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	appendLine(filepath.Join(dir, "ready"), fmt.Sprintf("ready %d", os.Getpid()))
	var linger <-chan time.Time
	for {
		select {
		case s := <-sigs:
			appendLine(filepath.Join(dir, "signals"), fmt.Sprintf("%d %s", os.Getpid(), signalName(s)))
			if linger == nil && s != syscall.SIGHUP {
				// Not synchronisation: the window in which a second
				// stop signal, sent right after the first, is seen.
				linger = time.After(100 * time.Millisecond)
			}
		case <-linger:
			for _, c := range kids {
				c.Wait()
			}
			return 0
		}
	}
}

var appendMu sync.Mutex

// appendLine appends line to path with one write(2) in O_APPEND mode, so
// that lines of several processes do not mix.
func appendLine(path, line string) {
	appendMu.Lock()
	defer appendMu.Unlock()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintf(os.Stderr, "append to %s: %v\n", path, err)
		return
	}
	f.WriteString(line + "\n")
	f.Close()
}

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "TERM"
	case syscall.SIGINT:
		return "INT"
	case syscall.SIGHUP:
		return "HUP"
	}
	return s.String()
}

// TestTreeStopSignalOnce checks a stop of the agent, by TERM or by INT,
// gives every process of the child's tree the stop signal exactly once:
// the child, three processes of its group and one that left it with setsid;
// 50 runs of each (5 with -short).
func TestTreeStopSignalOnce(t *testing.T) {
	t.Parallel()
	runs, procs := soak("", 5, 50), 5
	for _, tc := range []struct {
		name  string
		sig   syscall.Signal
		flags []string
		want  string
	}{
		{"TERM", syscall.SIGTERM, nil, "TERM"},
		{"INT", syscall.SIGINT, nil, "TERM"},
		{"INT as stop signal", syscall.SIGINT, []string{"-stop-signal", "INT"}, "INT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range runs {
				t.Run(strconv.Itoa(i), func(t *testing.T) {
					t.Parallel()
					checkLeaks(t, false)
					dir := t.TempDir()
					a := startAgent(t, agentConfig{
						program: helperProgram(dir, strconv.Itoa(procs-1)), helper: "treecount",
						flags: append([]string{"-restart", "never", "-stop-timeout", "5s"}, tc.flags...),
					})
					openReader(t, a.out)
					requireStopSignalOnce(t, a, dir, procs, tc.sig, tc.want)
				})
			}
		})
	}
}

// readLines returns the lines of path; none if it does not exist.
func readLines(path string) []string {
	b, _ := os.ReadFile(path)
	var lines []string
	for sc := bufio.NewScanner(bytes.NewReader(b)); sc.Scan(); {
		lines = append(lines, sc.Text())
	}
	return lines
}

// TestTreeStopSignalOnceExec: in exec mode too, a stop of the agent gives
// every process of a running request's tree the stop signal once, whether
// the tree is stopped through its cgroup or by a scan.
func TestTreeStopSignalOnceExec(t *testing.T) {
	t.Parallel()
	runs, procs := soak("", 2, 10), 5
	for _, containment := range []string{"auto", "off"} {
		t.Run(containment, func(t *testing.T) {
			for i := range runs {
				t.Run(strconv.Itoa(i), func(t *testing.T) {
					checkLeaks(t, false)
					dir := t.TempDir()
					a, w, _ := startExec(t, agentConfig{
						program: helperProgram(dir, strconv.Itoa(procs-1)), helper: "treecount",
						flags: []string{"-cgroup", containment, "-stop-timeout", "5s"},
					})
					w.writeLine(`{"id":"tree"}`)
					requireStopSignalOnce(t, a, dir, procs, syscall.SIGTERM, "TERM")
				})
			}
		})
	}
}

// requireStopSignalOnce waits until the procs processes of a treecount
// tree in dir are ready, sends sig to the agent a, and checks that it
// exits with 0 and that each process got want exactly once.
func requireStopSignalOnce(t *testing.T, a *agent, dir string, procs int, sig syscall.Signal, want string) {
	t.Helper()
	var ready []string
	if !eventually(hangTimeout, func() bool { ready = readLines(filepath.Join(dir, "ready")); return len(ready) == procs }) {
		t.Fatalf("want %d ready processes, got %q", procs, ready)
	}
	a.signal(sig)
	if code := a.wait(hangTimeout); code != 0 {
		t.Fatalf("agent exited with %d, want 0", code)
	}
	got := map[string][]string{}
	for _, l := range readLines(filepath.Join(dir, "signals")) {
		pid, s, _ := strings.Cut(l, " ")
		got[pid] = append(got[pid], s)
	}
	for _, l := range ready {
		pid := strings.TrimPrefix(l, "ready ")
		if s := got[pid]; len(s) != 1 || s[0] != want {
			t.Errorf("process %s got %q, want [%s] once", pid, s, want)
		}
	}
}
