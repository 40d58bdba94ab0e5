package pipeio

import (
	"os"

	"golang.org/x/sys/unix"
)

// PipeBuf is PIPE_BUF on Linux: a write of at most this many bytes to a
// pipe goes whole or not at all, and never between another writer's
// bytes.
const PipeBuf = 4096

// WriteNow writes p, at most PipeBuf bytes, to the non-blocking pipe f in
// one write(2), without waiting: the kernel takes it whole or not at all,
// and when the pipe has no room for it the error is EAGAIN and nothing
// was written.
func WriteNow(f *os.File, p []byte) error {
	if len(p) > PipeBuf {
		return unix.EMSGSIZE
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var werr error
	if err := rc.Control(func(fd uintptr) {
		for {
			if _, werr = unix.Write(int(fd), p); werr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return werr
}
