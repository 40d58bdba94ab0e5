//go:build linux

package child

import "time"

// crashLoopRuns is how many runs in a row that each ended within the
// restart window put a supervised child in a crash loop, as Kubernetes'
// CrashLoopBackOff does.
const crashLoopRuns = 3

// crashLoopSettle is how long a child in a crash loop must run to leave
// it, unless the restart window is shorter: then a whole window does.
const crashLoopSettle = 10 * time.Second

// crashLoop is the crash-loop rule of one supervised child. It goes by
// runs, not by restarts inside the window: however long the backoff has
// grown, a child that keeps dying stays in the loop, through its
// backoffs, and one that recovered leaves it once it has run for
// settle(). The caller gives the clock, so the rule can be tested
// without one.
type crashLoop struct {
	window  time.Duration // -restart-window: a run shorter than that is quick
	quick   int           // runs in a row that each ended within window
	started time.Time     // the running child's start; zero between runs
}

// start records that a child started at now.
func (c *crashLoop) start(now time.Time) { c.started = now }

// exit records that the running child ended at now: one more quick run,
// or, after a run of a whole window, none.
func (c *crashLoop) exit(now time.Time) {
	if c.started.IsZero() {
		return
	}
	if now.Sub(c.started) < c.window {
		c.quick++
	} else {
		c.quick = 0
	}
	c.started = time.Time{}
}

// settle is how long a child in a crash loop must run to leave it.
func (c *crashLoop) settle() time.Duration { return min(crashLoopSettle, c.window) }

// in reports whether the child is in a crash loop at now: crashLoopRuns
// quick runs in a row, and no child has run for settle() since.
func (c *crashLoop) in(now time.Time) bool {
	if c.quick < crashLoopRuns {
		return false
	}
	return c.started.IsZero() || now.Sub(c.started) < c.settle()
}

// leavesIn is how long from now the running child, in a crash loop,
// leaves it if it keeps running; 0 when it is not in one or no child
// runs.
func (c *crashLoop) leavesIn(now time.Time) time.Duration {
	if c.started.IsZero() || !c.in(now) {
		return 0
	}
	return c.settle() - now.Sub(c.started)
}
