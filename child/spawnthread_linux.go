package child

import (
	"errors"
	"os"
	"runtime"
)

// errReaperClosed is a start or a spawn-thread call after Close.
var errReaperClosed = errors.New("reaper closed")

// spawnThread is one goroutine locked to its OS thread for its whole life,
// which runs what it is given there. Every child is forked on it, so that
// the children's parent-death signal, which PR_SET_PDEATHSIG ties to the
// forking thread (golang/go#27505), fires only when the agent dies, and
// so that a cgroup v1 the thread joined (cgroup.LimitPids) holds every
// child from its birth.
type spawnThread struct {
	calls chan func()
	quit  chan struct{}
	done  chan struct{} // closed when the thread's goroutine returned
	// task is the thread's directory under /proc as /proc names it
	// ("PID/task/TID", from /proc/thread-self), or "" when that cannot
	// be read; set before newSpawnThread returns.
	task string
}

func newSpawnThread() *spawnThread {
	t := &spawnThread{calls: make(chan func()), quit: make(chan struct{}), done: make(chan struct{})}
	locked := make(chan struct{})
	go t.loop(locked)
	<-locked
	return t
}

// loop locks the goroutine to its thread, records the thread's task
// and closes locked, then runs what it is given until quit.
func (t *spawnThread) loop(locked chan<- struct{}) {
	defer close(t.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t.task, _ = os.Readlink("/proc/thread-self")
	close(locked)
	for {
		select {
		case <-t.quit:
			return
		case f := <-t.calls:
			f()
		}
	}
}

// run runs f on the thread and returns when it returned, or fails with
// errReaperClosed, without running f, once close was called.
func (t *spawnThread) run(f func()) error {
	finished := make(chan struct{})
	select {
	case t.calls <- func() { f(); close(finished) }:
	case <-t.quit:
		return errReaperClosed
	}
	<-finished
	return nil
}

// close ends the thread once what it runs returned, and waits for it.
func (t *spawnThread) close() {
	close(t.quit)
	<-t.done
}
