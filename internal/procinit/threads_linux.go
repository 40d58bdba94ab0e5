package procinit

import (
	"runtime"
	"sync"

	"github.com/fifobridge/fifobridge/cgroup"
)

// maxReservedThreads bounds ReserveThreads' reserve.
const maxReservedThreads = 64

// ReserveThreads reserves the idle threads an agent running up to
// children children at once may need at one moment: one per P that runs
// Go code, and one for each goroutine that may sit in a system call
// meanwhile (a few of the agent's own, two for each child's), at most
// maxReservedThreads, and at most a quarter of what a pids limit on the
// agent's cgroup leaves, so that the reserve does not starve the children
// it is there to survive. Call it before any child starts. It returns the
// number reserved.
func ReserveThreads(children int) int {
	n := min(runtime.GOMAXPROCS(0)+7+2*children, maxReservedThreads)
	if headroom, limited := cgroup.PidsHeadroom(); limited {
		n = min(n, max(headroom/4, 1))
	}
	reserveThreads(n)
	return n
}

// The Go runtime makes an OS thread whenever it needs one more than it has
// idle (a goroutine blocked in a system call holds its thread), and it
// aborts the whole process when the kernel refuses one (EAGAIN under a
// pids limit that a fork bomb of a child has used up): no error reaches
// the program. It never ends an idle thread, though, so threads made at
// start are there to be reused for the agent's whole life.

// reserveThreads makes the runtime hold at least n idle OS threads: n
// goroutines each lock a thread of their own at once, then let go and
// end, and their threads stay with the runtime, idle. Call it before any
// child starts, while the agent's CPU mask is its own (a thread inherits
// the mask of the thread that made it).
func reserveThreads(n int) {
	var locked, done sync.WaitGroup
	release := make(chan struct{})
	locked.Add(n)
	done.Add(n)
	for range n {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			locked.Done()
			<-release // parked with its thread: the next one needs another
			runtime.UnlockOSThread()
		}()
	}
	locked.Wait()
	close(release)
	done.Wait()
}
