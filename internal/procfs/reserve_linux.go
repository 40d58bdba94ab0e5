package procfs

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Descriptors held in reserve for the files a stop reads and writes (/proc,
// cgroup.events, cgroup.kill): an agent that has run out of descriptors
// (EMFILE, its RLIMIT_NOFILE used up under load) gives one of them back
// to the kernel and opens again, so that it can still stop a child's
// tree. Each such file is closed right after use; the reserve is made
// whole again on a later open, once descriptors are free.

// reservedFDs is how many descriptors are kept: a stop holds at most two
// files open at once (an inotify watch and the file it reads), and a few
// stops may run together.
const reservedFDs = 8

var fdReserve struct {
	mu  sync.Mutex
	fds []int
}

// Reserve fills the reserve; call it at start, before the descriptors
// can run out.
func Reserve() { refillReserve() }

// refillReserve tops the reserve up with descriptors of /dev/null, as far
// as the kernel gives them.
func refillReserve() {
	fdReserve.mu.Lock()
	defer fdReserve.mu.Unlock()
	for len(fdReserve.fds) < reservedFDs {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return
		}
		fdReserve.fds = append(fdReserve.fds, fd)
	}
}

// releaseReserved closes one reserved descriptor and reports whether there
// was one.
func releaseReserved() bool {
	fdReserve.mu.Lock()
	defer fdReserve.mu.Unlock()
	n := len(fdReserve.fds)
	if n == 0 {
		return false
	}
	unix.Close(fdReserve.fds[n-1])
	fdReserve.fds = fdReserve.fds[:n-1]
	return true
}

// reserveShort reports whether the reserve is not whole.
func reserveShort() bool {
	fdReserve.mu.Lock()
	defer fdReserve.mu.Unlock()
	return len(fdReserve.fds) < reservedFDs
}

// Open opens path with flag and O_CLOEXEC, retrying on EINTR, and
// on EMFILE after giving back a reserved descriptor.
func Open(path string, flag int) (int, error) {
	if reserveShort() {
		refillReserve()
	}
	for {
		fd, err := unix.Open(path, flag|unix.O_CLOEXEC, 0)
		switch {
		case err == unix.EINTR:
		case err == unix.EMFILE && releaseReserved():
		default:
			return fd, err
		}
	}
}
