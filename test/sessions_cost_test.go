//go:build linux

package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// costSessions is how many sessions TestSessionsIdleCost keeps open:
// the contract's 100, in -short too.
const costSessions = 100

// sessionFDs is the contract's bound on the agent's descriptors per open,
// idle session.
const sessionFDs = 6

// idleWindow is how long the agent's CPU time is watched while idle: one
// status file rewrite falls in it (every 5 s), with or without sessions.
const idleWindow = 5 * time.Second

// idleSlack is what an agent with costSessions idle sessions may use over
// idleWindow beyond what it uses with none, in clock ticks: the larger
// status file (it lists every session, and is rewritten every 2 s) and
// the truncation of utime and stime to whole ticks. Nothing per session:
// 100 sessions that each woke the agent once a second cost 9 to 11 ticks
// (14 in a -race build, whose status rewrites alone take 3 or 4: it gets
// raceIdleSlack).
const (
	idleSlack     = 3
	raceIdleSlack = 8
)

// Issue 33: a session costs what a terminal window costs tmux. With 100
// sessions open (terminals, with a prompt, /bin/sh -i) in one agent and
// idle, the agent holds at most 6 descriptors per session (what each
// holds is docs/sessions.md's list), and its CPU time does not move over
// 5 s beyond what an agent with none open uses in the same time: nothing
// polls for an idle session. Once all are closed, nothing of them is
// left: descriptors, terminals, children, cgroups.
func TestSessionsIdleCost(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	cg := testCgroup(t)
	a := startSessions(t, []string{"-tty", "-prompt", shPrompt, "-cgroup", cg,
		"-max-sessions", strconv.Itoa(costSessions)}, []string{"/bin/sh", "-i"})
	pid := strconv.Itoa(a.pid)
	// One session opened and closed first makes what every later one
	// shares (the runtime's threads and buffers, the agent's one inotify
	// instance), as the bench measures it too.
	a.mustOpen("warm", nil)
	if f := a.closeSession("warm"); f.typ() != "closed" {
		t.Fatalf("close warm: %v", f)
	}
	a.waitStatus("no session open", func(status) bool { return len(a.statusSessions()) == 0 })
	base, baseList := settledFDs(t, a), fdTargets(pid)
	noneUsed := idleCPUTicks(t, a)

	names := make([]string, costSessions)
	for i := range names {
		names[i] = fmt.Sprintf("s%d", i)
		a.mustOpen(names[i], nil) // answered once its shell shows its prompt
	}
	a.waitStatus("every session listed", func(status) bool { return len(a.statusSessions()) == costSessions })
	if fds := fdCount(pid); fds > base+sessionFDs*costSessions {
		t.Errorf("%d sessions open and idle: the agent has %d descriptors, %d with none open: %.2f per session, want at most %d\n"+
			"with none open:\n%swith the sessions open:\n%s",
			costSessions, fds, base, float64(fds-base)/costSessions, sessionFDs, baseList, fdTargets(pid))
	}
	if n := terminalsOf(pid); n != costSessions {
		t.Errorf("the agent holds %d terminal masters for %d sessions", n, costSessions)
	}
	used := idleCPUTicks(t, a)
	t.Logf("CPU over %v: %d clock ticks with %d idle sessions, %d with none open", idleWindow, used, costSessions, noneUsed)
	slack := idleSlack
	if raceBuild {
		slack = raceIdleSlack
	}
	if used > noneUsed+slack {
		t.Errorf("%d idle sessions: the agent used %d clock ticks of CPU in %v, with none open %d: want at most %d more",
			costSessions, used, idleWindow, noneUsed, slack)
	}

	for _, name := range names {
		if f := a.closeSession(name); f.typ() != "closed" {
			t.Fatalf("close %s: %v", name, f)
		}
	}
	var after int
	if !eventually(hangTimeout, func() bool { after = fdCount(pid); return after == base }) {
		t.Errorf("after every session closed the agent has %d descriptors, %d before they opened\nbefore:\n%safter:\n%s",
			after, base, baseList, fdTargets(pid))
	}
	if n := terminalsOf(pid); n != 0 {
		t.Errorf("after every session closed the agent holds %d terminal masters", n)
	}
	if kids := childrenOf(a.pid); len(kids) > 0 {
		t.Errorf("after every session closed the agent has children:%s", describe(kids))
	}
	requireNoZombies(t, a.pid)
	requireNoCgroups(t, cg, hangTimeout)
	if left, _ := os.ReadDir(filepath.Join(a.dir, "sessions")); len(left) > 0 {
		t.Errorf("session directories left: %v", left)
	}
	a.requireRunning()
}

// settledFDs returns the agent's descriptor count once it holds no reply
// FIFO: the last answer's is closed just after it was written.
func settledFDs(t *testing.T, a *agent) int {
	t.Helper()
	replies := filepath.Join(a.dir, "replies") + "/"
	pid := strconv.Itoa(a.pid)
	if !eventually(hangTimeout, func() bool { return !strings.Contains(fdTargets(pid), replies) }) {
		t.Fatalf("the agent keeps a reply FIFO open:\n%s", fdTargets(pid))
	}
	return fdCount(pid)
}

// idleCPUTicks returns the CPU time (utime + stime, in clock ticks) the
// agent uses over idleWindow. Not synchronisation: the measurement leaves
// out half a second in which the agent may still finish what it was
// doing (rewriting the status file, answering), then counts its CPU over
// the idle window, which is what is measured.
func idleCPUTicks(t *testing.T, a *agent) int {
	t.Helper()
	time.Sleep(500 * time.Millisecond)
	before := agentCPU(t, a)
	time.Sleep(idleWindow)
	return agentCPU(t, a) - before
}

// terminalsOf counts the terminal masters (/dev/ptmx) pid holds open.
func terminalsOf(pid string) int {
	ents, _ := os.ReadDir("/proc/" + pid + "/fd")
	n := 0
	for _, e := range ents {
		if target, _ := os.Readlink(filepath.Join("/proc", pid, "fd", e.Name())); target == "/dev/ptmx" || target == "/dev/pts/ptmx" {
			n++
		}
	}
	return n
}
