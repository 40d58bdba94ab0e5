//go:build linux

package test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestChildDescriptors checks children start with exactly fds 0, 1 and 2,
// whatever the agent inherited (with or without close-on-exec) or opened.
func TestChildDescriptors(t *testing.T) {
	// Not parallel: it puts a descriptor without close-on-exec into this
	// process, which every process the others started meanwhile would inherit.
	for _, tc := range []struct {
		name, mode string
		flags      []string
	}{
		{"first child", "exit", []string{"-restart", "never"}},
		{"restarted child after traffic", "serve", []string{"-restart", "on-failure", "-backoff-min", "10ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t, true)
			report := filepath.Join(t.TempDir(), "fds")
			extra := inheritedFiles(t)
			// A descriptor without close-on-exec outside ExtraFiles: the
			// agent inherits it at the same number.
			const dupFD = 77
			if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, dupFD, syscall.F_GETFD, 0); errno != syscall.EBADF {
				t.Fatalf("fd %d is already in use", dupFD)
			}
			if err := syscall.Dup3(int(extra[0].Fd()), dupFD, 0); err != nil {
				t.Fatalf("dup3: %v", err)
			}
			// Go's runtime keeps cgroup files open for GOMAXPROCS updates
			// unless told not to; busybox env tells only the child.
			requireBusybox(t)
			program := append([]string{busybox, "env", "GODEBUG=containermaxprocs=0"}, helperProgram(report, tc.mode)...)
			a := startAgent(t, agentConfig{flags: tc.flags, program: program, helper: "fds", extraFiles: extra})
			syscall.Close(dupFD)
			for _, f := range extra {
				f.Close()
			}
			listings := 1
			if tc.mode == "serve" {
				r := openReader(t, a.out)
				r.expectLine("ready")
				roundTrip(t, a.in, r, "hello")
				w := openWriter(t, a.in)
				w.writeLine("fail")
				r.expectLine("ready")
				roundTrip(t, a.in, r, "again")
				w.close()
				listings = 2
			} else if code := a.wait(hangTimeout); code != 0 {
				t.Fatalf("agent exited with %d, want 0", code)
			}
			b, err := os.ReadFile(report)
			if err != nil {
				t.Fatalf("child wrote no report: %v", err)
			}
			got := strings.Split(strings.TrimSuffix(string(b), "--\n"), "--\n")
			if len(got) != listings {
				t.Fatalf("got %d descriptor listings, want %d:\n%s", len(got), listings, b)
			}
			for i, l := range got {
				if fds := fdNumbers(l); fmt.Sprint(fds) != "[0 1 2]" {
					t.Errorf("child %d has descriptors %v, want [0 1 2]:\n%s", i+1, fds, l)
				}
			}
		})
	}
}

// inheritedFiles returns files for cmd.ExtraFiles: a regular file and both
// ends of a pipe.
func inheritedFiles(t *testing.T) []*os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "inherited"))
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	return []*os.File{f, r, w}
}

func fdNumbers(listing string) []int {
	var fds []int
	for _, line := range strings.Split(strings.TrimSpace(listing), "\n") {
		if n, err := strconv.Atoi(strings.Fields(line + " x")[0]); err == nil {
			fds = append(fds, n)
		}
	}
	sort.Ints(fds)
	return fds
}

// TestReaping runs children that leave orphans behind, with the agent as PID
// 1 of a new PID namespace and as a child subreaper.
func TestReaping(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		wrap []string
	}{
		{"PID 1", []string{"unshare", "-pf", "--mount-proc"}},
		{"subreaper", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireBusybox(t)
			if tc.wrap != nil {
				requirePrivileged(t, "a PID namespace needs root and unshare(1)")
			}

			t.Run("500 orphans are reaped", func(t *testing.T) {
				checkLeaks(t, false)
				a := startAgent(t, agentConfig{
					wrap:    tc.wrap,
					program: append(sh(t, `FIFOBRIDGE_TEST_HELPER=orphans "$0" 500 0 600; echo spawned; exec "$1" sleep 1000`), busybox),
				})
				r := openReader(t, a.out)
				r.expectLine("spawned")
				// The orphans sleep until killed here, so that a slow
				// machine cannot end them before they are counted.
				kids := childrenOf(a.pid)
				orphans := 0
				for _, k := range kids {
					cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", k.pid))
					if string(cmd) == "sleep\x00600\x00" {
						orphans++
						syscall.Kill(k.pid, syscall.SIGKILL)
					}
				}
				if orphans != 500 {
					t.Fatalf("agent %d has %d orphans among its %d children, want 500: not a subreaper?", a.pid, orphans, len(kids))
				}
				if !eventually(hangTimeout, func() bool { kids = childrenOf(a.pid); return len(kids) == 1 }) {
					t.Fatalf("orphans did not end: %d children left", len(kids))
				}
				requireNoZombies(t, a.pid)
				a.requireRunning()
			})

			t.Run("exit code exact while orphans exit", func(t *testing.T) {
				checkLeaks(t, false)
				codes := []int{3, 42, 7, 0, 1, 255, 100}
				for i := range soak("", len(codes), 50) {
					want := codes[i%len(codes)]
					a := startAgent(t, agentConfig{
						wrap: tc.wrap, flags: []string{"-restart", "never"},
						program: helperProgram("50", fmt.Sprint(want), "0"), helper: "orphans",
					})
					if code := a.wait(hangTimeout); code != want {
						t.Fatalf("run %d: agent exited with %d, want the child's %d", i, code, want)
					}
				}
			})
		})
	}
}

// TestSignals checks how the agent passes signals on to its child.
func TestSignals(t *testing.T) {
	t.Parallel()
	t.Run("TERM reaches the child which exits 0", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{program: helperProgram(), helper: "signals"})
		openReader(t, a.out).expectLine("ready")
		if code := a.stop(); code != 0 {
			t.Fatalf("agent exited with %d, want the child's 0", code)
		}
	})

	t.Run("INT stops the child gracefully", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{program: helperProgram(), helper: "signals"})
		openReader(t, a.out).expectLine("ready")
		a.signal(syscall.SIGINT)
		if code := a.wait(hangTimeout); code != 0 {
			t.Fatalf("agent exited with %d, want the child's 0", code)
		}
	})

	t.Run("child killed by TERM", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{program: helperProgram(), helper: "sleep"})
		openReader(t, a.out).expectLine("ready")
		if code := a.stop(); code != 143 {
			t.Fatalf("agent exited with %d, want 143", code)
		}
	})

	t.Run("child ignoring TERM is killed after stop timeout", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{program: helperProgram(), helper: "ignoreterm", flags: []string{"-stop-timeout", "1s"}})
		openReader(t, a.out).expectLine("ready")
		start := time.Now()
		a.signal(syscall.SIGTERM)
		code := a.wait(hangTimeout)
		took := time.Since(start)
		if code != 137 {
			t.Errorf("agent exited with %d, want 137", code)
		}
		if took > stopBound(time.Second) {
			t.Errorf("agent stopped %v after SIGTERM, want within -stop-timeout 1s + 1s", took.Round(time.Millisecond))
		}
		if took < 900*time.Millisecond {
			t.Errorf("agent killed the child %v after SIGTERM, before -stop-timeout 1s", took.Round(time.Millisecond))
		}
	})

	t.Run("HUP QUIT USR1 USR2 WINCH are forwarded", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{program: helperProgram(), helper: "signals"})
		r := openReader(t, a.out)
		r.expectLine("ready")
		pid := a.waitChild()
		for _, s := range []struct {
			sig  syscall.Signal
			name string
		}{
			{syscall.SIGHUP, "HUP"}, {syscall.SIGQUIT, "QUIT"}, {syscall.SIGUSR1, "USR1"},
			{syscall.SIGUSR2, "USR2"}, {syscall.SIGWINCH, "WINCH"}, {syscall.SIGHUP, "HUP"},
		} {
			a.signal(s.sig)
			r.expectLine(s.name)
		}
		a.requireRunning()
		if st, err := a.readStatus(); err != nil || st.Child.PID != pid || st.Child.Starts != 1 || !alive(pid) {
			t.Fatalf("child did not keep running: status %+v, %v; child %d alive: %v", st, err, pid, alive(pid))
		}
		if code := a.stop(); code != 0 {
			t.Fatalf("agent exited with %d, want 0", code)
		}
	})
}

// treeScript starts two background sleepers and one in a new session, says
// "started" and waits for a line before it exits 3.
const treeScript = `"$1" sleep 1000 & "$1" sleep 1000 & "$1" setsid "$1" sleep 1000 & echo started; read x; exit 3`

// TestTreeKill checks nothing of a child's process tree survives the child
// or the agent.
func TestTreeKill(t *testing.T) {
	t.Parallel()
	start := func(t *testing.T, flags ...string) (*agent, *fifoEnd, []procStat) {
		t.Helper()
		a := startAgent(t, agentConfig{flags: flags, program: append(sh(t, treeScript), busybox)})
		r := openReader(t, a.out)
		r.expectLine("started")
		child := a.waitChild()
		childStat, err := readStat(child)
		if err != nil {
			t.Fatal(err)
		}
		var tree []procStat
		if !eventually(hangTimeout, func() bool {
			tree = tree[:0]
			setsid := false
			for _, p := range markedProcs(marker(t)) {
				if p.pid != a.pid && p.pid != child && strings.HasSuffix(" "+cmdline(p.pid), " sleep 1000") {
					tree = append(tree, p)
					setsid = setsid || p.session != childStat.session
				}
			}
			return len(tree) == 3 && setsid
		}) {
			t.Fatalf("the child's tree did not start:%s", describe(tree))
		}
		return a, r, tree
	}

	t.Run("child exits", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		a, _, _ := start(t, "-restart", "never")
		openWriter(t, a.in).writeLine("go")
		if code := a.wait(hangTimeout); code != 3 {
			t.Fatalf("agent exited with %d, want 3", code)
		}
		// checkLeaks finds any survivor.
	})

	t.Run("child exits and is restarted", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		a, r, tree := start(t, "-restart", "on-failure", "-backoff-min", "10ms")
		openWriter(t, a.in).writeLine("go")
		r.expectLine("started")
		var left []procStat
		if !eventually(5*time.Second, func() bool {
			left = left[:0]
			for _, p := range tree {
				if alive(p.pid) {
					st, _ := readStat(p.pid)
					left = append(left, st)
				}
			}
			return len(left) == 0
		}) {
			t.Fatalf("the first child's tree survives it:%s", describe(left))
		}
		a.requireRunning()
	})

	t.Run("agent stops on TERM", func(t *testing.T) {
		t.Parallel()
		checkLeaks(t, false)
		a, _, _ := start(t)
		a.stop()
	})
}

// TestAgentKilled checks SIGKILL of the agent takes its child down and
// leaves nobody holding the FIFOs.
func TestAgentKilled(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	// The child neither reads its stdin nor writes: only the parent-death
	// signal ends it.
	a := startAgent(t, agentConfig{program: helperProgram(), helper: "sleep"})
	r := openReader(t, a.out)
	r.expectLine("ready")
	w := openWriter(t, a.in)
	w.writeLine("hello")
	child := a.waitChild()
	a.signal(syscall.SIGKILL)
	if code := a.wait(hangTimeout); code != 137 {
		t.Fatalf("agent exited with %d after SIGKILL", code)
	}
	if !eventually(5*time.Second, func() bool { return !alive(child) }) {
		t.Errorf("child %d survives the agent", child)
	}
	var h map[int][]string
	if !eventually(5*time.Second, func() bool { h = holders(a.in, a.out); return len(h) == 0 }) {
		t.Errorf("processes still hold the FIFOs open: %v", h)
	}
}

// TestRestartPolicy checks -restart, -max-restarts and the backoff.
func TestRestartPolicy(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	run := func(t *testing.T, flags []string, program []string, helper string) (code int, starts []time.Time) {
		t.Helper()
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{flags: flags, program: program, helper: helper})
		code = a.wait(hangTimeout)
		b, _ := os.ReadFile(program[len(program)-2])
		for _, l := range strings.Fields(string(b)) {
			ns, _ := strconv.ParseInt(l, 10, 64)
			starts = append(starts, time.Unix(0, ns))
		}
		return code, starts
	}
	record := func(t *testing.T, base int) []string {
		return helperProgram(filepath.Join(t.TempDir(), "starts"), fmt.Sprint(base))
	}

	t.Run("on-failure restarts with doubling backoff, then gives up", func(t *testing.T) {
		code, starts := run(t, []string{"-restart", "on-failure", "-max-restarts", "3", "-backoff-min", "100ms", "-backoff-max", "10s"},
			record(t, 10), "record")
		if len(starts) != 4 {
			t.Fatalf("child started %d times, want 1 + 3 restarts", len(starts))
		}
		if code != 13 {
			t.Errorf("agent exited with %d, want the last child's 13", code)
		}
		var gaps []time.Duration
		for i := 1; i < len(starts); i++ {
			gaps = append(gaps, starts[i].Sub(starts[i-1]))
		}
		// Each gap is the backoff and the child's own start and run,
		// which a busy machine may stretch but never shorten: the
		// backoff doubles from -backoff-min if every restart waits at
		// least its share.
		for i, gap := range gaps {
			if want := 100 * time.Millisecond << i; gap < want*9/10 {
				t.Errorf("restart %d after %v, want at least %v, -backoff-min doubled %d times (delays %v)", i+1, gap, want, i, gaps)
			}
		}
	})

	t.Run("on-failure does not restart after exit 0", func(t *testing.T) {
		code, starts := run(t, []string{"-restart", "on-failure", "-backoff-min", "10ms"}, record(t, 0), "record")
		if len(starts) != 1 || code != 0 {
			t.Fatalf("child started %d times, agent exited %d; want 1 start, 0", len(starts), code)
		}
	})

	t.Run("on-failure restarts after death by signal", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "starts")
		program := append(sh(t, `"$1" date +%s >>"$2"; kill -KILL $$`), busybox, file, "x")
		code, _ := run(t, []string{"-restart", "on-failure", "-max-restarts", "1", "-backoff-min", "10ms"}, program, "")
		b, _ := os.ReadFile(file)
		if n := strings.Count(string(b), "\n"); n != 2 || code != 137 {
			t.Fatalf("child started %d times, agent exited %d; want 2 starts, 137", n, code)
		}
	})

	t.Run("never", func(t *testing.T) {
		code, starts := run(t, []string{"-restart", "never", "-backoff-min", "10ms"}, record(t, 5), "record")
		if len(starts) != 1 || code != 5 {
			t.Fatalf("child started %d times, agent exited %d; want 1 start, 5", len(starts), code)
		}
	})

	t.Run("always restarts after exit 0 too", func(t *testing.T) {
		code, starts := run(t, []string{"-restart", "always", "-max-restarts", "2", "-backoff-min", "10ms"}, record(t, 0), "record")
		if len(starts) != 3 {
			t.Fatalf("child started %d times, want 1 + 2 restarts", len(starts))
		}
		if code != 2 {
			t.Errorf("agent exited with %d, want the last child's 2", code)
		}
	})
}

// TestExitCodes checks the exit codes of run.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	noExec := filepath.Join(t.TempDir(), "noexec")
	if err := os.WriteFile(noExec, []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		program []string
		helper  string
		want    int
	}{
		{"exit 0", helperProgram("0"), "exit", 0},
		{"exit 1", helperProgram("1"), "exit", 1},
		{"exit 42", helperProgram("42"), "exit", 42},
		{"exit 255", helperProgram("255"), "exit", 255},
		{"killed by KILL", helperProgram("9"), "killself", 137},
		{"killed by TERM", helperProgram("15"), "killself", 143},
		{"shell exit 42", []string{busybox, "sh", "-c", "exit 42"}, "", 42},
		{"not found by path", []string{"/nonexistent/program"}, "", 127},
		{"not found in PATH", []string{"fifobridge-no-such-program"}, "", 127},
		{"not executable", []string{noExec}, "", 126},
		{"a directory", []string{t.TempDir()}, "", 126},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			flags := []string{"-restart", "never"}
			if tc.want >= 126 && tc.helper == "" {
				flags = nil // the default policy must not change these
			}
			a := startAgent(t, agentConfig{flags: flags, program: tc.program, helper: tc.helper})
			if code := a.wait(hangTimeout); code != tc.want {
				t.Fatalf("agent exited with %d, want %d", code, tc.want)
			}
		})
	}

	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		says string // in the one line, when set
	}{
		{"unknown flag", nil, []string{"run", "-no-such-flag", "--", busybox, "cat"}, ""},
		{"bad -restart", nil, []string{"run", "-restart", "sometimes", "--", busybox, "cat"}, ""},
		{"bad -mode", nil, []string{"run", "-mode", "batch", "--", busybox, "cat"}, ""},
		{"bad -stop-timeout", nil, []string{"run", "-stop-timeout", "soon", "--", busybox, "cat"}, ""},
		{"bad FIFOBRIDGE_STOP_TIMEOUT", []string{"FIFOBRIDGE_STOP_TIMEOUT=soon"}, []string{"run", "--", busybox, "cat"}, ""},
		{"no PROGRAM", nil, []string{"run"}, "docker run IMAGE my-cli"},
		{"directory not creatable", nil, []string{"run", "-dir", notDir + "/fb", "--", busybox, "cat"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			args := tc.args
			if !slicesContains(args, "-dir") {
				args = append([]string{args[0], "-dir", filepath.Join(t.TempDir(), "fb")}, args[1:]...)
			}
			code, stderr := runAgent(t, tc.env, args...)
			if code != 125 {
				t.Errorf("fifobridge %q exited with %d, want 125", args, code)
			}
			requireOneLine(t, fmt.Sprintf("fifobridge %q", args), stderr)
			if !strings.Contains(stderr, tc.says) {
				t.Errorf("fifobridge %q says %q, not %q", args, stderr, tc.says)
			}
		})
	}
}
