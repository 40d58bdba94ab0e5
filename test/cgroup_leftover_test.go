//go:build linux

package test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/cgroup/cgrouptest"
)

// TestCgroupLeftovers: an agent that is SIGKILLed leaves its child's
// background processes running (only the child gets the parent-death
// signal); the next agent with the same -cgroup ends them at start and
// logs how many, removes the killed agent's cgroups, its anchor (the
// empty cgroup it held locked) included, and leaves a second live agent's
// alone: its child's cgroup, which holds no lock, and its anchor, still
// locked.
func TestCgroupLeftovers(t *testing.T) {
	t.Parallel()
	dir := testCgroup(t)
	checkLeaks(t, false)
	pidFile := filepath.Join(t.TempDir(), "pids")
	dead := startAgent(t, agentConfig{
		program: binSh(`for i in 1 2 3; do setsid sleep 60 </dev/null >/dev/null & echo $! >>` + pidFile + `; done; echo ready; exec sleep 60`),
		flags:   []string{"-cgroup", dir},
	})
	openReader(t, dead.out).expectLine("ready")
	child := dead.waitChild()
	var background []int
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		background = append(background, pid)
	}
	if len(background) != 3 {
		t.Fatalf("child started %d background processes, want 3", len(background))
	}

	// A second agent, live all along: started while the first one runs,
	// it finds nothing to end.
	live := startAgent(t, agentConfig{program: helperProgram(), helper: "sleep", flags: []string{"-cgroup", dir}})
	openReader(t, live.out).expectLine("ready")
	liveChild := live.waitChild()
	liveCgroup := cgroupOf(t, liveChild)
	liveCgroups := agentCgroups(dir, live.pid)
	deadCgroups := agentCgroups(dir, dead.pid)
	for what, cgs := range map[string][]string{"killed": deadCgroups, "live": liveCgroups} {
		if len(cgs) != 2 || !cgrouptest.IsAnchor(cgs[0]) && !cgrouptest.IsAnchor(cgs[1]) {
			t.Fatalf("the %s agent has cgroups %v, want its anchor and its child's", what, cgs)
		}
	}

	dead.signal(syscall.SIGKILL)
	dead.wait(hangTimeout)
	requireGone(t, "the killed agent's child", child)
	for _, pid := range background {
		if !alive(pid) {
			t.Fatalf("background process %d did not survive the agent's SIGKILL; the test needs it to", pid)
		}
	}
	if n := len(subCgroups(dir)); n != 4 {
		t.Fatalf("%d cgroups, want the killed agent's and the live one's: %v", n, subCgroups(dir))
	}

	next := startAgent(t, agentConfig{program: helperProgram(), helper: "sleep", flags: []string{"-cgroup", dir}})
	openReader(t, next.out).expectLine("ready")
	next.waitChild()
	if !strings.Contains(next.stderr(), "removed cgroups a dead agent left") || !strings.Contains(next.stderr(), "processes=3") {
		t.Errorf("the new agent did not log ending 3 processes of a dead agent:\n%s", next.stderr())
	}
	for _, pid := range background {
		requireGone(t, "the dead agent's background process", pid)
	}
	if !alive(liveChild) {
		t.Errorf("the live agent's child %d was killed", liveChild)
	}
	if _, err := os.Stat(liveCgroup); err != nil {
		t.Errorf("the live agent's cgroup was removed: %v", err)
	}
	for _, cg := range deadCgroups {
		if _, err := os.Stat(filepath.Join(dir, cg)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the killed agent's cgroup %s is still there (%v)", cg, err)
		}
	}
	for _, cg := range liveCgroups {
		path := filepath.Join(dir, cg)
		if _, err := os.Stat(path); err != nil {
			t.Errorf("the live agent's cgroup %s was removed: %v", cg, err)
		} else if cgrouptest.IsAnchor(cg) && lockFree(path) == nil {
			t.Errorf("the live agent's anchor %s is not locked", cg)
		}
	}
	if strings.Contains(live.stderr(), "dead agent") {
		t.Errorf("the live agent took the other live agent for dead:\n%s", live.stderr())
	}
	live.stop()
	next.stop()
	requireNoCgroups(t, dir, time.Second)
}

// TestCgroupLeftoversPidNS: the rule holds across PID namespaces. An agent
// that is SIGKILLed in one namespace leaves background processes in its
// cgroup; the next agent on the same -cgroup, started from another
// namespace, ends them at start, and leaves alone the cgroups of a live
// agent of a third namespace.
func TestCgroupLeftoversPidNS(t *testing.T) {
	t.Parallel()
	requirePrivileged(t, "PID namespaces need root and unshare(1)")
	newNS := []string{"unshare", "--pid", "--fork", "--mount-proc"}
	for _, tc := range []struct {
		name       string
		dead, next []string // wrappers: nil runs in this namespace
	}{
		{"DeadInNewNS", newNS, nil},
		{"NextInNewNS", nil, newNS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testCgroup(t)
			checkLeaks(t, false)
			script := `for i in 1 2 3; do setsid sleep 60 </dev/null >/dev/null & done; echo ready; exec sleep 60`
			cfg := agentConfig{program: binSh(script), flags: []string{"-cgroup", dir}}
			if tc.dead != nil {
				// The namespace's init is a shell that outlives the agent,
				// so that the background processes outlive it too.
				cfg.wrap = append(append([]string(nil), tc.dead...), "--", "/bin/sh", "-c", `"$@" & exec sleep 600`, "sh")
			}
			dead := startAgent(t, cfg)
			openReader(t, dead.out).expectLine("ready")
			agentPID := dead.pid
			if tc.dead != nil {
				// unshare's end ends the namespace's init (--kill-child),
				// and with it what is left in the namespace.
				t.Cleanup(func() { dead.cmd.Process.Kill(); <-dead.done })
			}
			var background, children []int
			deadCgroups := subCgroups(dir)
			for _, sub := range deadCgroups {
				b, _ := os.ReadFile(filepath.Join(dir, sub, "cgroup.procs"))
				for _, f := range strings.Fields(string(b)) {
					pid, _ := strconv.Atoi(f)
					if st, err := readStat(pid); err == nil && st.ppid != agentPID {
						background = append(background, pid)
					} else if err == nil {
						children = append(children, pid)
					}
				}
			}
			if len(background) != 3 {
				t.Fatalf("the killed agent's cgroups hold %d background processes, want 3", len(background))
			}

			liveCfg := agentConfig{program: helperProgram(), helper: "sleep", flags: []string{"-cgroup", dir}, wrap: newNS}
			live := startAgent(t, liveCfg)
			openReader(t, live.out).expectLine("ready")
			var liveCgroups []string
			for _, cg := range subCgroups(dir) {
				if indexOf(deadCgroups, cg) < 0 {
					liveCgroups = append(liveCgroups, cg)
				}
			}

			if err := syscall.Kill(agentPID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			if tc.dead == nil {
				dead.wait(hangTimeout)
			} else {
				requireGone(t, "the killed agent", agentPID)
			}
			// The agent's own child dies of its parent-death signal, which
			// a busy machine may not have acted on yet: the next agent
			// must find the background processes alone.
			for _, pid := range children {
				requireGone(t, "the killed agent's child", pid)
			}
			for _, pid := range background {
				if !alive(pid) {
					t.Fatalf("background process %d did not survive the agent's SIGKILL; the test needs it to", pid)
				}
			}

			next := startAgent(t, agentConfig{program: helperProgram(), helper: "sleep", flags: []string{"-cgroup", dir}, wrap: tc.next})
			openReader(t, next.out).expectLine("ready")
			if !strings.Contains(next.stderr(), "removed cgroups a dead agent left") || !strings.Contains(next.stderr(), "processes=3") {
				t.Errorf("the new agent did not log ending 3 processes of a dead agent:\n%s", next.stderr())
			}
			for _, pid := range background {
				requireGone(t, "the dead agent's background process", pid)
			}
			if len(liveCgroups) != 2 {
				t.Errorf("the live agent has cgroups %v, want its anchor and its child's", liveCgroups)
			}
			for _, cg := range liveCgroups {
				b, err := os.ReadFile(filepath.Join(dir, cg, "cgroup.procs"))
				if err != nil || len(b) == 0 && !cgrouptest.IsAnchor(cg) {
					t.Errorf("the live agent's cgroup %s was emptied or removed (%v)", cg, err)
				}
			}
			for _, cg := range deadCgroups {
				if indexOf(subCgroups(dir), cg) >= 0 {
					t.Errorf("the dead agent's cgroup %s is still there", cg)
				}
			}
			if strings.Contains(live.stderr(), "dead agent") {
				t.Errorf("the live agent took the other live agent for dead:\n%s", live.stderr())
			}
			live.stop()
			next.stop()
			requireNoCgroups(t, dir, time.Second)
		})
	}
}
