package child

import (
	"os"
	"os/signal"
	"slices"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Catch is signal.Notify(c, sigs...), made cheaper for many signals. The
// runtime registers each signal with a round trip to a thread of its own
// that keeps the signal mask, and on a machine with several CPUs each leg
// may wake that thread or the caller on another CPU: about 50 µs a
// signal, 2 to 3 ms for the agent's 56, more than the rest of its start.
// So every thread of the agent runs on the caller's CPU meanwhile, where
// a leg is a plain switch, and gets its affinity back after, also the
// threads made meanwhile. Call it before any child starts: a child
// inherits the affinity of the thread that forks it.
func Catch(c chan<- os.Signal, sigs ...os.Signal) {
	defer pinThreads()()
	signal.Notify(c, sigs...)
}

// pinThreads binds every thread of the process to the CPU the caller runs
// on, and returns a func that gives every thread the caller's affinity
// back. Failures only leave things as they were: this is about speed.
func pinThreads() (restore func()) {
	var orig, one unix.CPUSet
	if unix.SchedGetaffinity(0, &orig) != nil || orig.Count() < 2 {
		return func() {}
	}
	var cpu uint32
	if _, _, errno := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); errno != 0 {
		return func() {}
	}
	one.Set(int(cpu))
	for _, tid := range threads() {
		unix.SchedSetaffinity(tid, &one)
	}
	return func() {
		// Until a listing shows no thread that was not given it back:
		// a thread inherits the affinity of the one that made it.
		var done []int
		for {
			fresh := false
			for _, tid := range threads() {
				if !slices.Contains(done, tid) {
					unix.SchedSetaffinity(tid, &orig)
					done = append(done, tid)
					fresh = true
				}
			}
			if !fresh {
				return
			}
		}
	}
}

// threads lists the thread ids of the process.
func threads() []int {
	ents, _ := os.ReadDir("/proc/self/task")
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids
}
