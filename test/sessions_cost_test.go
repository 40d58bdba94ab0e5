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

// pipeSessions is how many sessions on pipes TestSessionsIdleCost keeps
// open in each of its shapes on pipes: one descriptor more per session
// than the bound is 20 more than it allows.
const pipeSessions = 20

// idleShape is one shape of session whose idle cost TestSessionsIdleCost
// measures: the run's flags and program, how many are opened, and
// whether they are on terminals.
type idleShape struct {
	name     string
	flags    []string
	program  []string
	sessions int
	tty      bool
}

// Issue 33: a session costs what a terminal window costs tmux. With 100
// sessions open (terminals, with a prompt, /bin/sh -i) in one agent and
// idle, the agent holds at most 6 descriptors per session (what each
// holds is docs/sessions.md's list), and its CPU time does not move over
// 5 s beyond what an agent with none open uses in the same time: nothing
// polls for an idle session. Sessions on pipes hold at most 6 too,
// counted the same way: with a prompt (/bin/sh -i, its stderr in its
// output, as a shell on pipes needs for its prompt to be seen), and
// with the first child's stderr copied to the agent's (-stderr log: one
// more pipe for as long as that child lives), without a prompt and with
// one (the child writes its prompt on its stdout), where a session on
// pipes used to hold 8 and 9, and then 7 with both (the child's cgroup
// was locked through a descriptor of its own: now the agent's one anchor
// is). Once all are closed, nothing of them is left: descriptors,
// terminals, children, cgroups.
func TestSessionsIdleCost(t *testing.T) {
	t.Parallel()
	for _, shape := range []idleShape{
		{name: "terminal prompt", flags: []string{"-tty", "-prompt", shPrompt}, program: []string{"/bin/sh", "-i"}, sessions: costSessions, tty: true},
		{name: "pipes prompt", flags: []string{"-stderr", "out", "-prompt", shPrompt}, program: []string{"/bin/sh", "-i"}, sessions: pipeSessions},
		{name: "pipes stderr copied", flags: []string{"-stderr", "log"}, program: []string{"/bin/cat"}, sessions: pipeSessions},
		{name: "pipes prompt stderr copied", flags: []string{"-stderr", "log", "-prompt", `^> $`},
			program: binSh(`while printf '> ' && read -r l; do echo "$l"; done`), sessions: pipeSessions},
	} {
		t.Run(shape.name, func(t *testing.T) { idleCost(t, shape) })
	}
}

// idleCost is TestSessionsIdleCost for one shape; the CPU is measured for
// the terminals, the contract's 100.
func idleCost(t *testing.T, shape idleShape) {
	checkLeaks(t, false)
	cg := testCgroup(t)
	a := startSessions(t, append(shape.flags, "-cgroup", cg, "-max-sessions", strconv.Itoa(shape.sessions)), shape.program)
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
	noneUsed := 0
	if shape.tty {
		noneUsed = idleCPUTicks(t, a)
	}

	names := make([]string, shape.sessions)
	for i := range names {
		names[i] = fmt.Sprintf("s%d", i)
		a.mustOpen(names[i], nil) // answered once its child is past its first run (with a prompt: shows it)
	}
	a.waitStatus("every session listed", func(status) bool { return len(a.statusSessions()) == shape.sessions })
	fds := settledFDs(t, a)
	t.Logf("%d sessions open and idle: %d descriptors, %d with none open: %.2f per session", shape.sessions, fds, base, float64(fds-base)/float64(shape.sessions))
	if fds > base+sessionFDs*shape.sessions {
		t.Errorf("%d sessions open and idle: the agent has %d descriptors, %d with none open: %.2f per session, want at most %d\n"+
			"with none open:\n%swith the sessions open:\n%s",
			shape.sessions, fds, base, float64(fds-base)/float64(shape.sessions), sessionFDs, baseList, fdTargets(pid))
	}
	if n, want := terminalsOf(pid), map[bool]int{true: shape.sessions}[shape.tty]; n != want {
		t.Errorf("the agent holds %d terminal masters for %d sessions, want %d", n, shape.sessions, want)
	}
	if shape.tty {
		used := idleCPUTicks(t, a)
		t.Logf("CPU over %v: %d clock ticks with %d idle sessions, %d with none open", idleWindow, used, shape.sessions, noneUsed)
		slack := idleSlack
		if raceBuild {
			slack = raceIdleSlack
		}
		if used > noneUsed+slack {
			t.Errorf("%d idle sessions: the agent used %d clock ticks of CPU in %v, with none open %d: want at most %d more",
				shape.sessions, used, idleWindow, noneUsed, slack)
		}
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
