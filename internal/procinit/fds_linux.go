package procinit

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeInheritedOnExec makes every descriptor above 2 that the process
// holds close-on-exec, so that nothing inherited from whoever started the
// agent reaches a child. It also points any of 0, 1 and 2 that is closed at
// /dev/null, so that no later open lands there by accident.
func closeInheritedOnExec() error {
	for fd := 0; fd <= 2; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == unix.EBADF {
			null, err := unix.Open("/dev/null", unix.O_RDWR, 0)
			if err != nil {
				return fmt.Errorf("open /dev/null for fd %d: %w", fd, err)
			}
			if null != fd {
				unix.Dup3(null, fd, 0)
				unix.Close(null)
			}
		}
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("list /proc/self/fd: %w", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		// The directory's own descriptor is gone by now: EBADF is fine.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && err != unix.EBADF {
			return fmt.Errorf("set close-on-exec on fd %d: %w", fd, err)
		}
	}
	return nil
}
