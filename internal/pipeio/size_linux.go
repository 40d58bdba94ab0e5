package pipeio

import (
	"os"

	"golang.org/x/sys/unix"
)

// PipeSize is the buffer size asked for the pipes and FIFOs that carry a
// stream: larger buffers mean fewer wake-ups per MiB. The kernel may grant
// less (fs.pipe-max-size).
const PipeSize = 1 << 20

// Grow asks the kernel for a PipeSize buffer on the pipe or FIFO f; a
// refusal is harmless and ignored.
func Grow(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, PipeSize) })
	}
}

// Capacity is how many bytes the pipe or FIFO f holds at most, as the
// kernel says (F_GETPIPE_SZ); 64 KiB, Linux's default, when it does not.
func Capacity(f *os.File) int {
	size := 64 << 10
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			if n, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0); err == nil && n > 0 {
				size = n
			}
		})
	}
	return size
}
