package pipeio

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// SpliceNow moves up to max bytes from the pipe src to the pipe dst inside
// the kernel, without waiting. When nothing moves it says why: src is
// empty, or dst is full; neither means src has no writer left (EOF).
func SpliceNow(src, dst *os.File, max int) (n int, empty, full bool, err error) {
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
			n, empty, full, err = spliceFD(int(sfd), int(dfd), max)
		})
	})
	if err == nil {
		err = cerr
	}
	return n, empty, full, err
}

// spliceFD is SpliceNow on the descriptors, which the caller holds open.
func spliceFD(sfd, dfd, max int) (n int, empty, full bool, err error) {
	for {
		m, err := unix.Splice(sfd, nil, dfd, nil, max, unix.SPLICE_F_NONBLOCK|unix.SPLICE_F_MOVE)
		switch {
		case err == unix.EINTR:
			continue
		case err == nil:
			return int(m), false, false, nil
		case err != unix.EAGAIN:
			return 0, false, false, err
		}
		// Which end blocks is asked of poll(2), level-triggered:
		// guessing wrong would wait for an edge that never comes. Both
		// ready means bytes arrived just now: go again.
		fds := []unix.PollFd{{Fd: int32(sfd), Events: unix.POLLIN}, {Fd: int32(dfd), Events: unix.POLLOUT}}
		if _, perr := poll(fds, 0); perr != nil {
			continue
		}
		full = fds[1].Revents&(unix.POLLOUT|unix.POLLERR) == 0
		empty = !full && fds[0].Revents&(unix.POLLIN|unix.POLLHUP) == 0
		if full || empty {
			return 0, empty, full, nil
		}
	}
}

// Splice moves up to max bytes from the pipe src to the pipe dst inside the
// kernel, waiting until src has bytes and dst has room. Both must be
// non-blocking (pollable); their deadlines apply. It returns io.EOF when
// src is empty and has no writer left.
func Splice(src, dst *os.File, max int) (int, error) {
	for {
		// Waiting first, rather than on a splice that says EAGAIN: when
		// lines go back and forth, src is empty at every call.
		if err := WaitReadable(src); err != nil {
			return 0, err
		}
		n, empty, full, err := SpliceNow(src, dst, max)
		switch {
		case err != nil:
			return 0, err
		case n > 0:
			return n, nil
		case empty:
			continue
		case full:
			if err := WaitWritable(dst); err != nil {
				return 0, err
			}
		default:
			return 0, io.EOF
		}
	}
}
