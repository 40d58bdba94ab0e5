package cgroup

import (
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/internal/watch"
)

// emptyRecheck bounds each wait for a change of cgroup.events, so that a
// notification the kernel did not send costs at most this much: the
// watch is made before the file is read, so none that was sent is lost
// (tests make it longer). emptyPoll is how often the file is read
// without a watch (no inotify instance or watch to be had).
var emptyRecheck = 100 * time.Millisecond

const emptyPoll = 10 * time.Millisecond

// addWatch adds the watch of an EmptyWatch; tests replace it to make it
// fail.
var addWatch = watch.Add

// EmptyWatch waits, as often as its owner asks, for a cgroup to empty,
// with one watch of cgroup.events for all the waits: a stop that wakes
// now and then to do something else while the cgroup empties adds one
// watch to the agent's one inotify instance (package watch), not one per
// wait. The watch is made by the first wait that finds the cgroup
// populated; when it cannot be made, the waits read the file every
// emptyPoll instead, so that waiting needs no new descriptor. Close ends
// it, and costs no wait: the instance stays (closing one would make the
// kernel wait for a grace period, which every stop would pay). An
// EmptyWatch is for one goroutine.
type EmptyWatch struct {
	path    string
	tried   bool         // the watch was made, or could not be
	w       *watch.Watch // nil without a watch
	changed chan struct{}
	wake    <-chan struct{} // WakeOn's, until it is closed
	every   time.Duration   // how long to wait without a notification
	timer   *time.Timer
}

// WakeOn has the waits read cgroup.events again as soon as ch is closed
// (once), besides at its notifications: the caller knows a moment the
// cgroup may have emptied, such as its last process reaped (the kernel
// empties the cgroup before it tells the parent), where the notification
// may come 10 ms later (the kernel spaces a file's notifications that
// far apart: one at the cgroup's first fork, one at its emptying) and
// after a workqueue's delay.
func (e *EmptyWatch) WakeOn(ch <-chan struct{}) { e.wake = ch }

// WatchEmpty returns an EmptyWatch of the cgroup, which the caller closes.
func (c *Group) WatchEmpty() *EmptyWatch { return watchEmpty(c.path) }

func watchEmpty(path string) *EmptyWatch { return &EmptyWatch{path: path, every: emptyPoll} }

// Wait waits until no process runs in the cgroup (cgroup.events says
// "populated 0") or until deadline, and reports whether it is empty.
func (e *EmptyWatch) Wait(deadline time.Time) bool {
	if !populated(e.path) {
		return true
	}
	e.watch()
	for {
		// Read again once the watch is there: an emptying before it made
		// no event.
		if !populated(e.path) {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		e.sleep(min(left, e.every))
	}
}

// watch makes the watch of cgroup.events, once. An event only says when
// to read the file again: the kernel notifies (IN_MODIFY) when populated
// changes.
func (e *EmptyWatch) watch() {
	if e.tried {
		return
	}
	e.tried = true
	changed := make(chan struct{}, 1)
	w, err := addWatch(filepath.Join(e.path, "cgroup.events"), unix.IN_MODIFY, func(watch.Event) {
		select { // the watch's reader never waits
		case changed <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return
	}
	e.w, e.changed, e.every = w, changed, emptyRecheck
}

// sleep waits for a notification or for d. A watch that ended (the
// cgroup went) is told too: the next read of the file says so.
func (e *EmptyWatch) sleep(d time.Duration) {
	if e.timer == nil {
		e.timer = time.NewTimer(d)
	} else {
		e.timer.Reset(d) // Go 1.23 timers: Reset drops a stale tick
	}
	select {
	case <-e.changed: // a nil channel (no watch) never delivers
	case <-e.wake:
		e.wake = nil // closed: once is enough
	case <-e.timer.C:
	}
}

// Close ends the watch, if one was made. The EmptyWatch is not used after.
func (e *EmptyWatch) Close() {
	if e.timer != nil {
		e.timer.Stop()
	}
	if e.w != nil {
		e.w.Remove()
		e.w = nil
	}
}

// WaitEmpty waits until no process runs in the cgroup or until deadline,
// and reports whether it is empty; it is one wait of an EmptyWatch.
func (c *Group) WaitEmpty(deadline time.Time) bool { return waitEmpty(c.path, deadline) }

// waitEmpty is one wait of an EmptyWatch of the cgroup at path; a cgroup
// that is empty already costs no watch.
func waitEmpty(path string, deadline time.Time) bool {
	e := watchEmpty(path)
	defer e.Close()
	return e.Wait(deadline)
}

// KillPatience is how long a cgroup killed with cgroup.kill is waited for
// to empty before it is given up on: a process in uninterruptible sleep
// (D state) dies only when it leaves it, which may be never.
const KillPatience = 5 * time.Second
