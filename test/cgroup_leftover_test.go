package test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCgroupLeftovers: an agent that is SIGKILLed leaves its child's
// background processes running (only the child gets the parent-death
// signal); the next agent with the same -cgroup ends them at start and
// logs how many, and leaves a second live agent's cgroups alone.
func TestCgroupLeftovers(t *testing.T) {
	dir := testCgroup(t)
	checkLeaks(t, true)
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

	dead.signal(syscall.SIGKILL)
	dead.wait(hangTimeout)
	requireGone(t, "the killed agent's child", child)
	for _, pid := range background {
		if !alive(pid) {
			t.Fatalf("background process %d did not survive the agent's SIGKILL; the test needs it to", pid)
		}
	}
	if n := len(subCgroups(dir)); n != 2 {
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
	if strings.Contains(live.stderr(), "dead agent") {
		t.Errorf("the live agent took the other live agent for dead:\n%s", live.stderr())
	}
	live.stop()
	next.stop()
	requireNoCgroups(t, dir, time.Second)
}
