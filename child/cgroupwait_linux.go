package child

import (
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// emptyRecheck bounds each wait for a change of cgroup.events, so that a
// missed notification costs at most this much.
const emptyRecheck = 100 * time.Millisecond

// WaitEmpty waits until no process runs in the cgroup (cgroup.events says
// "populated 0") or until deadline, and reports whether it is empty.
func (c *Cgroup) WaitEmpty(deadline time.Time) bool { return waitEmpty(c.path, deadline) }

// waitEmpty watches cgroup.events with inotify, which the kernel notifies
// (IN_MODIFY) when populated changes; without inotify it polls.
func waitEmpty(path string, deadline time.Time) bool {
	if !populated(path) {
		return true // no inotify descriptor to make and close, the slow part
	}
	events := filepath.Join(path, "cgroup.events")
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err == nil {
		if _, err := unix.InotifyAddWatch(fd, events, unix.IN_MODIFY); err != nil {
			unix.Close(fd)
			fd = -1
		}
	} else {
		fd = -1
	}
	if fd >= 0 {
		defer unix.Close(fd)
	}
	var buf [4096]byte
	for {
		if !populated(path) {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		wait := min(left, emptyRecheck)
		if fd < 0 {
			time.Sleep(min(wait, 10*time.Millisecond))
			continue
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, _ := unix.Poll(pfd, int(wait.Milliseconds())+1); n > 0 {
			unix.Read(fd, buf[:]) // drain; the file itself says what changed
		}
	}
}
