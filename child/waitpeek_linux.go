package child

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// siginfoPidOffset is where si_pid sits in a siginfo_t: after three ints
// (si_signo, si_errno, si_code), at the union that is aligned as a pointer.
const siginfoPidOffset = (12 + unsafe.Sizeof(uintptr(0)) - 1) &^ (unsafe.Sizeof(uintptr(0)) - 1)

// exitedChild returns the pid of a child that has exited and is not yet
// reaped, without reaping it (waitid with WNOWAIT); ok is false when there
// is none.
func exitedChild() (pid int, ok bool) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, false
		}
		pid := *(*int32)(unsafe.Add(unsafe.Pointer(&info), siginfoPidOffset))
		return int(pid), pid > 0
	}
}
