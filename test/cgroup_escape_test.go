//go:build linux

package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestGroupLeftCgroup: a child's background job that ignores TERM, stays
// in the child's process group and moves itself to another cgroup is
// stopped with the child, at the end of its request and at the agent's
// TERM, with cgroups as without.
func TestGroupLeftCgroup(t *testing.T) {
	t.Parallel()
	for _, containment := range []string{"cgroup", "off"} {
		for _, end := range []string{"RequestEnd", "AgentTerm"} {
			t.Run(containment+"/"+end, func(t *testing.T) {
				base := testCgroup(t)
				checkLeaks(t, false)
				agentDir, other := filepath.Join(base, "agent"), filepath.Join(base, "other")
				for _, d := range []string{agentDir, other} {
					if err := os.Mkdir(d, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				cgroup := agentDir
				if containment == "off" {
					cgroup = "off"
				}
				tmp := t.TempDir()
				sync, pidFile := filepath.Join(tmp, "sync"), filepath.Join(tmp, "pid")
				if err := unix.Mkfifo(sync, 0o600); err != nil {
					t.Fatal(err)
				}
				script := fmt.Sprintf(`/bin/sh -c 'trap "" TERM; echo $$ > %[1]s/cgroup.procs && echo $$ > %[2]s.tmp && mv %[2]s.tmp %[2]s; echo moved > %[3]s; exec sleep 60' </dev/null >/dev/null 2>&1 &
read x < %[3]s; echo "$x"`, other, pidFile, sync)
				if end == "AgentTerm" {
					script += "; exec sleep 60"
				}
				a, w, r := startExec(t, agentConfig{program: binSh(script),
					flags: []string{"-cgroup", cgroup, "-stop-timeout", "1s"}})
				defer w.close()
				defer r.close()
				w.writeLine(`{"id":"job"}`)
				if f := readFrame(t, r); f.Type != "start" {
					t.Fatalf("first frame %s, want start", f.line)
				}
				if f := readFrame(t, r); f.Type != "stdout" || f.Data == nil || *f.Data != "moved\n" {
					t.Fatalf("frame %s, want the job's stdout \"moved\"", f.line)
				}
				b, err := os.ReadFile(pidFile)
				if err != nil {
					t.Fatal(err)
				}
				job, err := strconv.Atoi(strings.TrimSpace(string(b)))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { syscall.Kill(job, syscall.SIGKILL) })
				if procs, _ := os.ReadFile(filepath.Join(other, "cgroup.procs")); !strings.Contains(string(procs), fmt.Sprint(job)) {
					t.Fatalf("the job %d is not in the other cgroup (%q); the test needs it there", job, procs)
				}
				if pgid, err := syscall.Getpgid(job); err != nil || pgid == job {
					t.Fatalf("the job %d has group %d (%v); the test needs it in the child's group", job, pgid, err)
				}
				if end == "RequestEnd" {
					if f := readFrame(t, r); f.Type != "exit" {
						t.Fatalf("frame %s, want exit", f.line)
					}
					requireGone(t, "the background job that left the cgroup, after its request ended,", job)
					a.requireRunning()
				} else {
					begin := time.Now()
					if code := a.stop(); code != 0 {
						t.Errorf("agent exited %d after TERM, want 0", code)
					}
					requireGone(t, "the background job that left the cgroup, after the agent's TERM,", job)
					t.Logf("agent stopped in %v", time.Since(begin).Round(time.Millisecond))
				}
			})
		}
	}
}

// An escapee is a grandchild of a child that double-forked (its parent
// exited at once), called setsid and moved itself into the root cgroup:
// neither the child's cgroup nor its process group or session holds it, and
// only being reparented to the agent ties it to the child. It is
// "treereq spawn DIR ROOT stay" (tree_test.go): it ignores TERM, writing a
// line to DIR/orphan.signals for each, so that only SIGKILL ends it.
type escapee struct {
	dir   string
	pid   int // in the test's PID namespace
	start int
}

// escapeeDir makes the directory of one child's escapee, with the FIFOs its
// helpers wait on: gateA for the child, release for the escapee (neither
// is ever written here: the child runs until stopped, the escapee until
// killed).
func escapeeDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"gateA", "release"} {
		if err := unix.Mkfifo(filepath.Join(dir, name), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// waitEscapee waits until the escapee of dir has moved into root (it
// writes its pid once it has) and is reparented to the agent, and checks
// that it left the child's cgroup, group and session.
func waitEscapee(t *testing.T, a *agent, dir, root string) escapee {
	t.Helper()
	e := escapee{dir: dir}
	var st procStat
	if !eventually(hangTimeout, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "orphan.pid"))
		if err != nil {
			return false
		}
		pid, _ := strconv.Atoi(string(b))
		e.pid = a.hostPID(pid) // found only once its parent is the agent
		st, err = readStat(e.pid)
		return err == nil && st.ppid == a.pid
	}) {
		t.Fatalf("the escapee of %s was not reparented to the agent %d; agent's stderr:\n%s", dir, a.pid, a.stderr())
	}
	e.start = st.start
	t.Cleanup(func() { e.kill() })
	if got := cgroupOf(t, e.pid); got != root {
		t.Fatalf("the escapee %d is in cgroup %s; the test needs it in the root cgroup %s", e.pid, got, root)
	}
	if st.session != e.pid || st.pgrp != e.pid {
		t.Fatalf("the escapee %d has group %d and session %d; the test needs its own", e.pid, st.pgrp, st.session)
	}
	return e
}

// running reports whether the escapee is still there, running or a zombie
// nobody reaped.
func (e escapee) running() bool {
	st, err := readStat(e.pid)
	return err == nil && st.start == e.start
}

func (e escapee) kill() {
	if fd, err := unix.PidfdOpen(e.pid, 0); err == nil {
		if e.running() {
			unix.PidfdSendSignal(fd, syscall.SIGKILL, nil, 0)
		}
		unix.Close(fd)
	}
}

// requireEnded fails t unless the escapee got TERM once and then went,
// reaped: no zombie of it is left either.
func (e escapee) requireEnded(t *testing.T, what string) {
	t.Helper()
	if !eventually(5*time.Second, func() bool { return !e.running() }) {
		st, _ := readStat(e.pid)
		t.Errorf("the escapee %s %d is still there:%s", what, e.pid, describe([]procStat{st}))
	}
	if got := readLines(filepath.Join(e.dir, "orphan.signals")); len(got) != 1 {
		t.Errorf("the escapee %s got %q, want one TERM", what, got)
	}
}

// cgroupRoot is the root of the cgroup v2 hierarchy this process is in.
func cgroupRoot(t *testing.T) string {
	t.Helper()
	own, err := ownCgroup()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(own, ownPath(t))
}

// startEscapeeAgent starts an agent with -cgroup cg (its child the
// treereq helper, which -stop-timeout 1s kills) in mode, under wrap, with
// a child or session whose escapee uses dir, and waits for the escapee.
func startEscapeeAgent(t *testing.T, wrap []string, mode, cg, dir string) (*agent, escapee) {
	t.Helper()
	root := cgroupRoot(t)
	cfg := agentConfig{wrap: wrap, helper: "treereq",
		flags: []string{"-cgroup", cg, "-stop-timeout", "1s", "-restart", "never"}}
	args := []string{"spawn", dir, root, "stay"}
	if mode == "stream" {
		cfg.program = helperProgram(args...)
		a := startAgent(t, cfg)
		return a, waitEscapee(t, a, dir, root)
	}
	cfg.program = helperProgram()
	cfg.flags = append(cfg.flags, "-mode", "sessions", "-allow-args")
	a := startAgent(t, cfg)
	a.waitStatus("sessions mode serving", func(st status) bool { return st.Mode == "sessions" && st.State == "running" })
	a.openEscapee("esc", args)
	return a, waitEscapee(t, a, dir, root)
}

// openEscapee opens session name running treereq with args.
func (a *agent) openEscapee(name string, args []string) {
	a.t.Helper()
	var open []string
	for _, arg := range args {
		open = append(open, "-arg", arg)
	}
	a.host("open", append(open, name)...).requireCode(a.t, "open "+name, 0, "")
}

// Issue 32, item 2: an escapee (see above) of a child with -cgroup DIR
// gets the stop signal once and then SIGKILL at -stop-timeout, and is
// reaped, whenever its child's tree stops: at the agent's stop in stream
// mode, when its child ends, at close of its session and at the agent's
// stop in sessions mode; the agent as a subreaper and as PID 1 of a PID
// namespace. No cgroup is left.
func TestCgroupEscapee(t *testing.T) {
	t.Parallel()
	for _, ns := range []struct {
		name string
		wrap []string
	}{{"subreaper", nil}, {"PID 1", []string{"unshare", "-pf", "--mount-proc"}}} {
		t.Run(ns.name, func(t *testing.T) {
			if ns.wrap != nil {
				requirePrivileged(t, "a PID namespace needs root and unshare(1)")
			}
			for _, tc := range []struct{ mode, end string }{
				{"stream", "AgentTerm"}, {"stream", "ChildEnds"},
				{"sessions", "Close"}, {"sessions", "AgentTerm"}, {"sessions", "ChildEnds"},
			} {
				t.Run(tc.mode+"/"+tc.end, func(t *testing.T) {
					cg := testCgroup(t)
					checkLeaks(t, false)
					dir := escapeeDir(t)
					a, e := startEscapeeAgent(t, ns.wrap, tc.mode, cg, dir)
					switch {
					case tc.end == "AgentTerm":
						want := 0 // sessions mode
						if tc.mode == "stream" {
							want = 128 + int(syscall.SIGTERM) // the child's status
						}
						if code := a.stop(); code != want {
							t.Errorf("agent exited %d after TERM, want %d", code, want)
						}
					case tc.end == "ChildEnds":
						openWriter(t, filepath.Join(dir, "gateA")).close()
						if tc.mode == "stream" {
							if code := a.wait(hangTimeout); code != 0 {
								t.Errorf("agent exited %d after its child's 0, want 0", code)
							}
							break
						}
						a.waitStatus("the session closed", func(status) bool { return len(a.statusSessions()) == 0 })
					default:
						a.host("close", "esc").requireCode(t, "close", 0, "")
					}
					e.requireEnded(t, "after "+tc.end)
					requireNoCgroups(t, cg, hangTimeout)
					if !a.exited() {
						requireNoZombies(t, a.pid)
						if code := a.stop(); code != 0 {
							t.Errorf("agent exited %d after TERM, want 0", code)
						}
					}
				})
			}
		})
	}
}

// An escapee is its own session's alone: closing another session, opened
// after it started, leaves it running and unsignalled; closing its own
// session ends it.
func TestCgroupEscapeeSessions(t *testing.T) {
	t.Parallel()
	cg := testCgroup(t)
	checkLeaks(t, false)
	dir := escapeeDir(t)
	a, e := startEscapeeAgent(t, nil, "sessions", cg, dir)
	gate := filepath.Join(dir, "gateB")
	if err := unix.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	a.openEscapee("other", []string{"wait", gate})
	a.host("close", "other").requireCode(t, "close other", 0, "")
	if !e.running() {
		t.Fatalf("the escapee %d of session esc went when session other was closed", e.pid)
	}
	if got := readLines(filepath.Join(dir, "orphan.signals")); len(got) != 0 {
		t.Fatalf("the escapee of session esc got %q when session other was closed", got)
	}
	a.host("close", "esc").requireCode(t, "close esc", 0, "")
	e.requireEnded(t, "after close of its session")
	requireNoCgroups(t, cg, hangTimeout)
	requireNoZombies(t, a.pid)
	if code := a.stop(); code != 0 {
		t.Errorf("agent exited %d after TERM, want 0", code)
	}
}

// An escapee that becomes an orphan during the stop: its parent, in the
// child's cgroup and process group, lives until the stop signal ends it,
// while the child catches TERM and stays until cgroup.kill. The stop finds
// the escapee among the agent's children while it waits for the cgroup to
// empty: it gets TERM once, then SIGKILL, and is reaped.
func TestCgroupEscapeeMidStop(t *testing.T) {
	t.Parallel()
	cg := testCgroup(t)
	checkLeaks(t, false)
	dir := escapeeDir(t)
	root := cgroupRoot(t)
	a := startAgent(t, agentConfig{helper: "treereq", program: helperProgram("linger", dir, root),
		flags: []string{"-cgroup", cg, "-stop-timeout", "1s", "-restart", "never"}})
	e := escapee{dir: dir}
	if !eventually(hangTimeout, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "orphan.pid"))
		e.pid, _ = strconv.Atoi(string(b))
		return err == nil
	}) {
		t.Fatalf("no escapee in %s; agent's stderr:\n%s", dir, a.stderr())
	}
	st, err := readStat(e.pid)
	if err != nil {
		t.Fatal(err)
	}
	e.start = st.start
	t.Cleanup(func() { e.kill() })
	if st.ppid == a.pid || cgroupOf(t, e.pid) != root || st.session != e.pid {
		t.Fatalf("the escapee %d has parent %d (agent %d), cgroup %s, session %d; the test needs a parent of its own, the root cgroup %s and a session of its own",
			e.pid, st.ppid, a.pid, cgroupOf(t, e.pid), st.session, root)
	}
	if code := a.stop(); code != 128+int(syscall.SIGKILL) {
		t.Errorf("agent exited %d after TERM, want %d (its child's status)", code, 128+int(syscall.SIGKILL))
	}
	e.requireEnded(t, "orphaned by the stop")
	requireNoCgroups(t, cg, hangTimeout)
}
