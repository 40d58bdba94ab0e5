package readwait

import "golang.org/x/sys/unix"

// verdict is what a probe makes of one thread.
type verdict uint8

const (
	waitsOther verdict = iota // running, or blocked on something else, or not seen
	waitsInput                // blocked reading the input
	exited                    // gone
)

// thread judges thread tid of process pid, whose ABI is a, by its
// /proc/PID/task/TID/syscall, or by its wchan where that file cannot be
// read.
func (p *Probe) thread(a *abi, pid, tid int) verdict {
	if p.wchanOnly {
		return p.byWchan(pid, tid)
	}
	n, err := readFile(p.path.set(pid, tid, "syscall", -1), p.scratch().text[:], -1)
	switch {
	case isGone(err):
		return exited
	case isDenied(err):
		return p.byWchan(pid, tid)
	case err != nil:
		p.see(err)
		return waitsOther
	}
	nr, args, ok := parseSyscall(p.scratch().text[:n])
	if !ok { // "running", or "-1 SP PC": not in a system call
		return waitsOther
	}
	var yes bool
	switch a.kind(nr) {
	case callRead:
		yes = args[0] <= maxFD && p.isInput(pid, int(args[0]))
	case callSelect:
		yes = p.selectReads(a, pid, args[0], args[1])
	case callPoll:
		yes = p.pollReads(a, pid, args[0], args[1])
	case callEpoll:
		yes = args[0] <= maxFD && p.epollReads(pid, int(args[0]))
	}
	if yes {
		return waitsInput
	}
	return waitsOther
}

// maxFD bounds a descriptor number read from another process.
const maxFD = 1 << 30

// isDenied reports whether err says this agent may not look.
func isDenied(err error) bool { return err == unix.EACCES || err == unix.EPERM }

// parseSyscall reads a /proc/PID/syscall line: "NR ARG0 ... ARG5 SP PC",
// the number in decimal, the rest in hex with 0x. ok is false for
// "running" and for "-1 SP PC" (blocked, but not in a system call).
func parseSyscall(b []byte) (nr int, args [6]uint64, ok bool) {
	f, b := field(b)
	nr, ok = parseDec(f)
	if !ok {
		return 0, args, false
	}
	for i := range args {
		f, b = field(b)
		v, ok := parseHex(f)
		if !ok {
			return 0, args, false
		}
		args[i] = v
	}
	return nr, args, true
}

// field splits off the first space-separated field of b.
func field(b []byte) (f, rest []byte) {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n') {
		b = b[1:]
	}
	i := 0
	for i < len(b) && b[i] != ' ' && b[i] != '\n' {
		i++
	}
	return b[:i], b[i:]
}

// parseHex reads a hexadecimal number, with or without 0x.
func parseHex(b []byte) (uint64, bool) {
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		b = b[2:]
	}
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}

// parseDec reads a decimal number that fits a 32-bit int.
func parseDec(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}
