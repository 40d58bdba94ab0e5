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

// idleSessions and wakeWindow are how many sessions TestSessionsIdleWakeNothing
// keeps open and how long it counts the agent's wakeups.
const (
	idleSessions = 20
	wakeWindow   = 4 * time.Second
)

// Issue 33: a session costs what a terminal window costs tmux, and while
// open and idle none of the agent's CPU: nothing runs for it, no timer
// wakes the agent. The agent's wakeups (its threads' voluntary context
// switches) over idle seconds with 20 idle sessions open, each a
// conversation on a terminal or on pipes, are those with none open, give
// or take the agent's own timers (the status file, the followers of DIR's
// FIFOs), well under one a second per session. Each session used to wake
// the agent some eight times a second: its ask FIFO's follower ticked
// every second, and it swept DIR/replies by itself.
func TestSessionsIdleWakeNothing(t *testing.T) {
	// Not parallel: it counts the agent's wakeups, which the others' load
	// adds to (one race pass of the parallel suite saw 115 for 95).
	checkLeaks(t, true)
	a := startSessions(t, []string{"-stderr", "out", "-prompt", shPrompt, "-max-sessions", strconv.Itoa(idleSessions)},
		[]string{"/bin/sh", "-i"})
	idle := func() int {
		t.Helper()
		// Not synchronisation: the count leaves out a second and a half in
		// which the agent may still finish what came before (a session's
		// first run is watched for a second), then counts over wakeWindow,
		// the idle seconds the test is about.
		time.Sleep(1500 * time.Millisecond)
		before := wakeups(t, a.pid)
		time.Sleep(wakeWindow)
		return wakeups(t, a.pid) - before
	}
	none := idle()
	for i := range idleSessions {
		a.mustOpen(fmt.Sprintf("s%d", i), map[string]any{"tty": i%2 == 1})
	}
	open := idle()
	if limit := none + idleSessions*int(wakeWindow/time.Second); open > limit {
		t.Errorf("the agent woke %d times in %v with %d idle sessions open, %d times with none (at most %d)",
			open, wakeWindow, idleSessions, none, limit)
	}
	t.Logf("wakeups in %v: %d with none open, %d with %d idle sessions", wakeWindow, none, open, idleSessions)
	a.requireRunning()
}

// wakeups is how many times the threads of process pid gave up the CPU
// to wait (their voluntary context switches).
func wakeups(t *testing.T, pid int) int {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil || len(tasks) == 0 {
		t.Fatalf("list the threads of %d: %v", pid, err)
	}
	n := 0
	for _, path := range tasks {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // a thread that ended
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
				k, _ := strconv.Atoi(strings.TrimSpace(v))
				n += k
			}
		}
	}
	return n
}
