package fifo

import (
	"io"
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

// spliceNow moves up to max bytes from the pipe src to the pipe dst inside
// the kernel, without waiting. When nothing moves it says why: src is empty,
// or dst is full; neither means src has no writer left (EOF).
func spliceNow(src, dst *os.File, max int) (n int, empty, full bool, err error) {
	srcRC, err := src.SyscallConn()
	if err != nil {
		return 0, false, false, err
	}
	dstRC, err := dst.SyscallConn()
	if err != nil {
		return 0, false, false, err
	}
	cerr := srcRC.Control(func(sfd uintptr) {
		dstRC.Control(func(dfd uintptr) {
			for {
				var m int64
				m, err = unix.Splice(int(sfd), nil, int(dfd), nil, max, unix.SPLICE_F_NONBLOCK|unix.SPLICE_F_MOVE)
				if err == unix.EINTR {
					continue
				}
				n = int(m)
				if err == unix.EAGAIN {
					// Which end blocks is asked of poll(2), level-
					// triggered: guessing wrong would wait for an edge
					// that never comes. Both ready means bytes arrived
					// just now: go again.
					err = nil
					fds := []unix.PollFd{{Fd: int32(sfd), Events: unix.POLLIN}, {Fd: int32(dfd), Events: unix.POLLOUT}}
					if _, perr := unix.Poll(fds, 0); perr != nil {
						continue
					}
					full = fds[1].Revents&(unix.POLLOUT|unix.POLLERR) == 0
					empty = !full && fds[0].Revents&(unix.POLLIN|unix.POLLHUP) == 0
					if !full && !empty {
						continue
					}
				}
				return
			}
		})
	})
	if err == nil {
		err = cerr
	}
	return n, empty, full, err
}

// waitReadable waits until f has bytes (or no writer left), or its read
// deadline passes.
func waitReadable(f *os.File) error { return waitFor(f, unix.POLLIN) }

// waitWritable waits until f has room, or its write deadline passes.
func waitWritable(f *os.File) error { return waitFor(f, unix.POLLOUT) }

// Splice moves up to max bytes from the pipe src to the pipe dst inside the
// kernel, waiting until src has bytes and dst has room. Both must be
// non-blocking (pollable); their deadlines apply. It returns io.EOF when
// src is empty and has no writer left.
func Splice(src, dst *os.File, max int) (int, error) {
	for {
		// Waiting first, rather than on a splice that says EAGAIN: when
		// lines go back and forth, src is empty at every call.
		if err := waitReadable(src); err != nil {
			return 0, err
		}
		n, empty, full, err := spliceNow(src, dst, max)
		switch {
		case err != nil:
			return 0, err
		case n > 0:
			return n, nil
		case empty:
			continue
		case full:
			if err := waitWritable(dst); err != nil {
				return 0, err
			}
		default:
			return 0, io.EOF
		}
	}
}
