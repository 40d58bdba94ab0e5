package cgroup

import (
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// emptyRecheck bounds each wait for a change of cgroup.events, so that a
// missed notification costs at most this much. emptyPoll is how often the
// file is read without a watch (no inotify instance left to the user).
const (
	emptyRecheck = 100 * time.Millisecond
	emptyPoll    = 10 * time.Millisecond
)

// WaitEmpty waits until no process runs in the cgroup (cgroup.events says
// "populated 0") or until deadline, and reports whether it is empty.
func (c *Group) WaitEmpty(deadline time.Time) bool { return waitEmpty(c.path, deadline) }

// waitEmpty watches cgroup.events (fsnotify), which the kernel notifies
// (IN_MODIFY) when populated changes; an event only says when to read the
// file again. Without a watch it reads the file every emptyPoll.
func waitEmpty(path string, deadline time.Time) bool {
	if !populated(path) {
		return true // no watcher to make and close, the slow part
	}
	var events <-chan fsnotify.Event
	var errs <-chan error
	every := emptyPoll
	if w, err := fsnotify.NewWatcher(); err == nil {
		defer w.Close() // waits for fsnotify's reader goroutine
		if w.Add(filepath.Join(path, "cgroup.events")) == nil {
			events, errs, every = w.Events, w.Errors, emptyRecheck
		}
	}
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		if !populated(path) {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		t.Reset(min(left, every))
		select {
		case <-events: // a nil channel (no watch) never delivers
		case <-errs:
		case <-t.C:
		}
	}
}

// KillPatience is how long a cgroup killed with cgroup.kill is waited for
// to empty before it is given up on: a process in uninterruptible sleep
// (D state) dies only when it leaves it, which may be never.
const KillPatience = 5 * time.Second
