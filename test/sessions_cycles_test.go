//go:build linux

package test

import (
	"fmt"
	"testing"
)

// sessionCycles is how many opens and closes each kind of session gets
// in TestSessionsThousandCycles: issue 28's 1,000, in -short too.
const sessionCycles = 1000

// agentGauge is what a leak of sessions would grow in the agent.
type agentGauge struct {
	fds, goroutines, threads, rss, pts, children, cgroups int
}

func (g agentGauge) String() string {
	return fmt.Sprintf("%d descriptors, %d goroutines, %d threads, %d KiB resident, %d terminals, %d children, %d cgroups",
		g.fds, g.goroutines, g.threads, g.rss>>10, g.pts, g.children, g.cgroups)
}

// Issue 28, test 3: a thousand opens and closes on terminals, and a
// thousand on pipes, leave the agent's descriptors, goroutines, /dev/pts
// entries (its own: another process opens and closes terminals all the
// while), children and cgroups where they were with none open; its
// threads do not grow with the cycles, nor does its resident memory.
func TestSessionsThousandCycles(t *testing.T) {
	t.Parallel()
	for _, kind := range []struct {
		name string
		tty  bool
	}{{"tty", true}, {"pipes", false}} {
		t.Run(kind.name, func(t *testing.T) {
			checkLeaks(t, false)
			startPTYChurner(t)
			cg := testCgroup(t)
			a := startSessions(t, []string{"-stderr", "out", "-cgroup", cg, "-prompt", shPrompt}, []string{"/bin/sh", "-i"})
			cycle := func(i int) {
				a.mustOpen("c", map[string]any{"tty": kind.tty})
				if f := a.closeSession("c"); f.typ() != "closed" {
					t.Fatalf("cycle %d: close: %v", i, f)
				}
			}
			gauge := func() agentGauge {
				st := a.waitStatus("no session open", func(status) bool { return len(a.statusSessions()) == 0 })
				return agentGauge{fds: st.FDs, goroutines: *st.Goroutines, threads: threads(t, a.pid),
					rss: vmRSS(t, a.pid), pts: agentTerminals(a.pid), children: len(childrenOf(a.pid)), cgroups: len(leftCgroups(cg))}
			}
			// Warm up: the first sessions make the runtime's threads,
			// buffers and caches that every later one reuses.
			for i := range 100 {
				cycle(i)
			}
			before := gauge()
			for i := range sessionCycles - 100 {
				cycle(i)
			}
			var after agentGauge
			if !eventually(hangTimeout, func() bool {
				after = gauge()
				return after.fds <= before.fds && after.goroutines <= before.goroutines && after.pts <= before.pts &&
					after.children == 0 && after.cgroups == 0
			}) {
				t.Errorf("after %d cycles: %v\nafter the first 100: %v", sessionCycles, after, before)
			}
			// Threads and memory may move a little with the runtime's
			// own work, but not with the number of sessions: 900 more
			// cycles leave them within a small constant.
			if after.threads > before.threads+4 {
				t.Errorf("threads grew with the cycles: %d after %d cycles, %d after 100", after.threads, sessionCycles, before.threads)
			}
			// A -race build's detector keeps history of every goroutine
			// that ever ran: its memory grows with the cycles by design.
			if after.rss > before.rss+4<<20 && !raceBuild {
				t.Errorf("resident memory grew with the cycles: %d KiB after %d cycles, %d KiB after 100",
					after.rss>>10, sessionCycles, before.rss>>10)
			}
			t.Logf("after 100 cycles: %v\nafter %d: %v", before, sessionCycles, after)
			a.requireRunning()
		})
	}
}
