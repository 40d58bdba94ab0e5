package readwait

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// This file is the package's only contact with the kernel for paths: the
// few system calls that take one (openat, readlinkat, statx) are made on a path
// built in the probe's own buffer, NUL-terminated, so that a probe
// allocates nothing (unix.Open and unix.Readlink copy their string
// argument each time).

// procPath is a path under /proc, built in place, NUL-terminated.
type procPath struct {
	b [96]byte
	n int // length without the NUL
}

// set makes the path /proc/PID, then /task/TID when tid > 0, then /NAME,
// then /N when n >= 0 (a descriptor's number), and returns it.
func (p *procPath) set(pid, tid int, name string, n int) *procPath {
	b := append(p.b[:0], "/proc/"...)
	b = strconv.AppendInt(b, int64(pid), 10)
	if tid > 0 {
		b = append(b, "/task/"...)
		b = strconv.AppendInt(b, int64(tid), 10)
	}
	b = append(b, '/')
	b = append(b, name...)
	if n >= 0 {
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(n), 10)
	}
	p.n = len(b)
	p.b[p.n] = 0 // the longest path (two pids, "fdinfo", an fd) is under 60 bytes
	return p
}

// self makes the path /proc/self/NAME and returns it.
func (p *procPath) self(name string) *procPath {
	b := append(append(p.b[:0], "/proc/self/"...), name...)
	p.n = len(b)
	p.b[p.n] = 0
	return p
}

func (p *procPath) String() string { return string(p.b[:p.n]) }

// ptr is the NUL-terminated path for a system call.
func (p *procPath) ptr() uintptr { return uintptr(unsafe.Pointer(&p.b[0])) }

// atCWD is AT_FDCWD as a system call argument.
var atCWD = func() uintptr { fd := unix.AT_FDCWD; return uintptr(fd) }()

// open opens path read-only, with O_CLOEXEC, retrying on EINTR.
func open(path *procPath) (int, error) {
	for {
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, atCWD, path.ptr(),
			uintptr(unix.O_RDONLY|unix.O_CLOEXEC|unix.O_LARGEFILE), 0, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return -1, errno
		}
		return int(fd), nil
	}
}

// readlink reads the link at path into buf and returns its length; a
// link longer than buf reads as len(buf) bytes.
func readlink(path *procPath, buf []byte) (int, error) {
	for {
		n, _, errno := unix.Syscall6(unix.SYS_READLINKAT, atCWD, path.ptr(),
			uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return 0, errno
		}
		return int(n), nil
	}
}

// nlink is the link count of the file at path (statx into st), not
// following a link.
func nlink(path *procPath, st *unix.Statx_t) (uint32, error) {
	for {
		_, _, errno := unix.Syscall6(unix.SYS_STATX, atCWD, path.ptr(),
			uintptr(unix.AT_SYMLINK_NOFOLLOW), uintptr(unix.STATX_NLINK), uintptr(unsafe.Pointer(st)), 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return 0, errno
		}
		return st.Nlink, nil
	}
}

// readFile reads the file at path (from offset off, when it is not -1:
// /proc/PID/mem) into buf, as much as one read gives, which for the
// small files of /proc is all of them up to len(buf).
func readFile(path *procPath, buf []byte, off int64) (int, error) {
	fd, err := open(path)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	for {
		var n int
		if off >= 0 {
			n, err = unix.Pread(fd, buf, off)
		} else {
			n, err = unix.Read(fd, buf)
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		return n, nil
	}
}

// nextDirent reads the first entry of a getdents64 buffer: its name as a
// number (a pid or tid; 0 for ".", ".." and other names), and the rest.
func nextDirent(b []byte) (n int, rest []byte) {
	const nameOff = 19 // d_ino 8, d_off 8, d_reclen 2, d_type 1
	if len(b) < nameOff {
		return 0, nil
	}
	size := int(binary.NativeEndian.Uint16(b[16:]))
	if size < nameOff || size > len(b) {
		return 0, nil
	}
	name := b[nameOff:size]
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	n, _ = parseDec(name)
	return n, b[size:]
}
