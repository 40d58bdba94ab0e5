package readwait

import (
	"bytes"

	"golang.org/x/sys/unix"
)

// This file reads what a process waits on: one descriptor, a select or
// poll set in its memory (/proc/PID/mem), an epoll set (its fdinfo).

// isInput reports whether descriptor fd of pid is the input: its link
// reads as the input's does. The comparison is exact: a pipe's link
// names its inode ("pipe:[123]"), a terminal's the path of its devpts
// mount as this agent sees it, the one the child's descriptor came from.
func (p *Probe) isInput(pid, fd int) bool {
	buf := p.scratch().text[:len(p.link)+1] // a longer link reads as len(link)+1 bytes
	n, err := readlink(p.path.set(pid, 0, "fd", fd), buf)
	if isDenied(err) {
		p.see(err)
	}
	return err == nil && bytes.Equal(buf[:n], p.link)
}

// selectReads reports whether a select with nfds whose read set is at
// addr in pid's memory waits for the input to be readable.
func (p *Probe) selectReads(a *abi, pid int, nfds, addr uint64) bool {
	if addr == 0 || nfds == 0 {
		return false
	}
	nfds = min(nfds, 1024) // FD_SETSIZE
	bits := uint64(a.long * 8)
	size := (nfds + bits - 1) / bits * uint64(a.long)
	set, ok := p.memory(pid, addr, int(size))
	if !ok {
		return false
	}
	checked := 0
	for fd := uint64(0); fd < nfds && checked < maxFDs; fd++ {
		if !fdIsSet(set, fd, a) {
			continue
		}
		checked++
		if p.isInput(pid, int(fd)) {
			return true
		}
	}
	return false
}

// fdIsSet reports whether fd is in set, an fd_set of ABI a: an array of
// C longs, fd's bit being bit fd%bits of word fd/bits.
func fdIsSet(set []byte, fd uint64, a *abi) bool {
	bits := uint64(a.long * 8)
	word, bit := fd/bits*uint64(a.long), fd%bits
	i := word + bit/8 // the byte of the bit, in a little-endian word
	if a.bigEndian {
		i = word + uint64(a.long-1) - bit/8
	}
	return i < uint64(len(set)) && set[i]&(1<<(bit%8)) != 0
}

// pollReads reports whether a poll of n entries at addr in pid's memory
// waits for the input to be readable.
func (p *Probe) pollReads(a *abi, pid int, addr, n uint64) bool {
	const entry = 8 // struct pollfd: int fd; short events, revents
	if addr == 0 || n == 0 {
		return false
	}
	n = min(n, uint64(len(p.scratch().big)/entry))
	fds, ok := p.memory(pid, addr, int(n)*entry)
	if !ok {
		return false
	}
	order, checked := a.order(), 0
	for b := fds; len(b) >= entry && checked < maxFDs; b = b[entry:] {
		fd, events := int32(order.Uint32(b)), order.Uint16(b[4:])
		if fd < 0 || events&(unix.POLLIN|pollRdNorm) == 0 {
			continue
		}
		checked++
		if p.isInput(pid, int(fd)) {
			return true
		}
	}
	return false
}

// pollRdNorm is POLLRDNORM, the same on every Linux architecture
// (golang.org/x/sys has it for some only).
const pollRdNorm = 0x40

// memory reads size bytes at addr of pid's memory into p.scratch().big.
func (p *Probe) memory(pid int, addr uint64, size int) ([]byte, bool) {
	if addr > 1<<63-1 || size > len(p.scratch().big) {
		return nil, false
	}
	n, err := readFile(p.path.set(pid, 0, "mem", -1), p.scratch().big[:size], int64(addr))
	if err != nil && !isGone(err) {
		p.see(err)
	}
	return p.scratch().big[:n], err == nil && n == size
}

// epollReads reports whether epoll descriptor epfd of pid holds the
// input for reading. Its fdinfo lists each watched file with its events,
// inode and device, one line each:
//
//	tfd:        0 events:       19 data:                0  pos:0 ino:3 sdev:19
func (p *Probe) epollReads(pid, epfd int) bool {
	n, err := readFile(p.path.set(pid, 0, "fdinfo", epfd), p.scratch().big[:], -1)
	if err != nil {
		if isDenied(err) {
			p.see(err)
		}
		return false
	}
	for b := p.scratch().big[:n]; len(b) > 0; {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		if !bytes.HasPrefix(line, []byte("tfd:")) {
			continue
		}
		events, ok1 := hexAfter(line, "events:")
		ino, ok2 := hexAfter(line, "ino:")
		sdev, ok3 := hexAfter(line, "sdev:")
		if ok1 && ok2 && ok3 && events&unix.EPOLLIN != 0 && ino == p.ino && sdev == p.sdev {
			return true
		}
	}
	return false
}

// hexAfter reads the hexadecimal number after key in line.
func hexAfter(line []byte, key string) (uint64, bool) {
	i := bytes.Index(line, []byte(key))
	if i < 0 {
		return 0, false
	}
	f, _ := field(line[i+len(key):])
	return parseHex(f)
}
