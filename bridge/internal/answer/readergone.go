//go:build linux

package answer

import (
	"os"

	"golang.org/x/sys/unix"
)

// ReaderGone waits until the FIFO whose write end is f has no reader left,
// and reports whether that is why it returned. It sleeps in the runtime's
// poller: the write end of a pipe whose last reader closed it polls
// POLLERR, which wakes a read wait (nothing else does: a write end is never
// readable). A past read deadline on f ends the wait (false).
func ReaderGone(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd)}}
		n, err := unix.Poll(fds, 0)
		gone = err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
		return gone
	})
	return gone
}
