package readwait

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/fifobridge/fifobridge/internal/procfs"
	"golang.org/x/sys/unix"
)

// Bounds of one probe: the processes it looks at (the group's leader and
// its descendants, breadth first), the threads of each, and the
// descriptors of one select, poll or epoll set it checks.
const (
	maxProcs   = 16
	maxThreads = 64
	maxFDs     = 16
)

// scratch holds the buffers of one probe: taken from scratches for a
// Blocked and given back after it, so that the Probe of an idle child (a
// session at its prompt) holds none.
type scratch struct {
	text [512]byte // a syscall line, a wchan, a link, an ELF header
	big  [4096]byte
	dent [4096]byte // a thread directory's entries
	stx  unix.Statx_t
	pids [maxProcs]int
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

// scratch returns the buffers of the probe under way, taken from the pool
// at its first use.
func (p *Probe) scratch() *scratch {
	if p.buf == nil {
		p.buf = scratches.Get().(*scratch)
	}
	return p.buf
}

// giveBack gives the probe's buffers back to the pool, once it is over.
func (p *Probe) giveBack() {
	if p.buf != nil {
		scratches.Put(p.buf)
		p.buf = nil
	}
}

// Probe tells whether the reader of one child's input is blocked reading
// it. It is made once per input (a child's stdin pipe, a terminal) and
// used by one goroutine at a time.
type Probe struct {
	tty  bool     // the input is a terminal, else a pipe
	link []byte   // what readlink gives for a descriptor of the input: "pipe:[123]", "/dev/pts/4"
	ino  uint64   // the input's inode, and its device as the kernel
	sdev uint64   // writes it (epoll's fdinfo): major<<20 | minor
	abis abiCache // the ABI of each process seen
	path procPath // the path of the file being read
	buf  *scratch // the buffers of the probe under way, nil between probes

	linkBuf [128]byte
	cannot  error // the first "cannot see" of the probe under way

	wchanOnly bool // for tests: judge as if no /proc/PID/syscall could be read
}

// NewProbe makes a probe for the input of a child: input is a descriptor
// of the same pipe as the child's stdin (either end: the agent's write
// end will do), or of the terminal the child reads (its slave, taken
// before the agent closes its copy; the master is not the terminal a
// child reads). The error wraps ErrCannotSee when this agent cannot see
// other processes' waits at all; it is ErrOff when the probe is turned
// off (OffEnv).
func NewProbe(input *os.File) (*Probe, error) {
	if off {
		return nil, ErrOff
	}
	p := &Probe{}
	rc, err := input.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", input.Name(), err)
	}
	cerr := rc.Control(func(fd uintptr) { err = p.identify(int(fd)) })
	if cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", input.Name(), err)
	}
	if pid := procfs.SelfPID(); pid != os.Getpid() {
		return nil, fmt.Errorf("%w: /proc is another PID namespace's (it sees this process as %d, not %d)",
			ErrCannotSee, pid, os.Getpid())
	}
	if _, _, err := nativeABI(); err != nil {
		return nil, fmt.Errorf("%w: read /proc/self/exe: %w", ErrCannotSee, err)
	}
	return p, nil
}

// identify records what tells descriptor fd's file apart: its link text,
// inode and device.
func (p *Probe) identify(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFIFO:
	case unix.S_IFCHR:
		if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
			return fmt.Errorf("not a terminal: %w", err)
		}
		p.tty = true
	default:
		return errors.New("neither a pipe nor a terminal")
	}
	p.ino = uint64(st.Ino)
	p.sdev = uint64(unix.Major(uint64(st.Dev)))<<20 | uint64(unix.Minor(uint64(st.Dev)))
	n, err := readlink(p.path.self("fd/"+fmt.Sprint(fd)), p.linkBuf[:])
	if err != nil {
		return fmt.Errorf("read %s: %w", &p.path, err)
	}
	if n == len(p.linkBuf) {
		return fmt.Errorf("read %s: longer than %d bytes", &p.path, len(p.linkBuf)-1)
	}
	p.link = p.linkBuf[:n]
	return nil
}

// Blocked reports whether a process of group pgid is blocked reading the
// input now (the rule is in the package comment). It looks at the group's
// leader (pid pgid) and its descendants; a group whose leader is gone
// reads as not blocked. The error wraps ErrCannotSee when no reader was
// found and some process could not be seen: the answer is then unknown,
// not no.
func (p *Probe) Blocked(pgid int) (bool, error) {
	if pgid <= 0 {
		return false, nil
	}
	p.cannot = nil
	defer p.giveBack()
	queue := append(p.scratch().pids[:0], pgid)
	for i := 0; i < len(queue); i++ {
		switch p.process(queue[i]) {
		case reads:
			return true, nil
		case sharesReads:
			return false, nil // the answer is known: -settle decides
		case procGone:
			if i == 0 {
				return false, p.leaderGone(pgid)
			}
			continue
		}
		queue = p.appendChildren(queue, queue[i], pgid)
	}
	return false, p.cannot
}

// leaderGone tells a group whose leader has exited (or is a zombie,
// which /proc shows) from one whose leader /proc hides (hidepid).
func (p *Probe) leaderGone(pgid int) error {
	if p.group(pgid) >= 0 {
		return nil
	}
	if err := unix.Kill(pgid, 0); err == nil || err == unix.EPERM {
		return fmt.Errorf("%w: process %d runs but /proc does not show it", ErrCannotSee, pgid)
	}
	return nil
}

// see records, the first time in a probe, that the file at p.path could
// not be read, or told nothing, for err.
func (p *Probe) see(err error) {
	if p.cannot == nil {
		p.cannot = fmt.Errorf("%w: read %s: %w", ErrCannotSee, &p.path, err)
	}
}

// found is what a probe makes of one process.
type found uint8

const (
	readsNot    found = iota // no thread of it is seen reading the input
	reads                    // its only thread is blocked reading the input
	sharesReads              // a thread of it is, but it has others, which may still write
	procGone                 // it has exited
)

// process judges the threads of pid, its main thread first: whether one
// is reading the input, and whether it is the process's only thread.
func (p *Probe) process(pid int) found {
	a, err := p.abiOf(pid)
	if isGone(err) {
		return procGone
	}
	if err != nil {
		p.see(err)
		return readsNot
	}
	switch p.thread(a, pid, pid) {
	case waitsInput:
		return p.alone(pid)
	case exited:
		return procGone
	}
	fd, err := open(p.path.set(pid, 0, "task", -1))
	if err != nil {
		if isGone(err) {
			return procGone
		}
		return readsNot
	}
	defer unix.Close(fd)
	seen := 1
	for seen < maxThreads {
		n, err := unix.Getdents(fd, p.scratch().dent[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return readsNot
		}
		for b := p.scratch().dent[:n]; len(b) > 0 && seen < maxThreads; {
			var tid int
			tid, b = nextDirent(b)
			if tid > 0 && tid != pid {
				seen++
				if p.thread(a, pid, tid) == waitsInput {
					return sharesReads // not the main thread: there are two
				}
			}
		}
	}
	return readsNot
}

// alone judges process pid, whose main thread was seen blocked reading
// the input: it reads when that is its only thread. The count is read
// after the wait was seen, so a thread started before the look is
// counted.
func (p *Probe) alone(pid int) found {
	switch n := p.threads(pid); {
	case n == 1:
		return reads
	case n < 0:
		return readsNot // gone meanwhile, or hidden: not seen reading
	}
	return sharesReads
}

// appendChildren appends the children of every thread of pid that are
// in group pgid to queue, as far as queue's capacity goes.
// /proc/PID/task/TID/children needs CONFIG_PROC_CHILDREN; without it,
// only the leader is seen.
func (p *Probe) appendChildren(queue []int, pid, pgid int) []int {
	fd, err := open(p.path.set(pid, 0, "task", -1))
	if err != nil {
		return queue
	}
	defer unix.Close(fd)
	for len(queue) < cap(queue) {
		n, err := unix.Getdents(fd, p.scratch().dent[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return queue
		}
		for b := p.scratch().dent[:n]; len(b) > 0 && len(queue) < cap(queue); {
			var tid int
			tid, b = nextDirent(b)
			if tid <= 0 {
				continue
			}
			m, err := readFile(p.path.set(pid, tid, "children", -1), p.scratch().big[:], -1)
			for c := p.scratch().big[:m]; err == nil && len(c) > 0 && len(queue) < cap(queue); {
				var f []byte
				f, c = field(c)
				if child, ok := parseDec(f); ok && p.group(child) == pgid {
					queue = append(queue, child)
				}
			}
		}
	}
	return queue
}

// isGone reports whether err says the process or thread has exited.
func isGone(err error) bool { return err == unix.ENOENT || err == unix.ESRCH }
