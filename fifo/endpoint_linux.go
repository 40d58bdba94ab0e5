package fifo

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/internal/pipeio"
	"github.com/fifobridge/fifobridge/sharedir"
)

// endpoint is the part shared by Source and Sink: the FIFO currently open
// O_RDWR as the entry name of dir, replaced by Reopen when the entry gets a
// new inode. Every look at the entry goes through dir's descriptor. A
// pending end (PendingSourceAt) has no FIFO until Reopen serves the first.
type endpoint struct {
	dir    *sharedir.Dir
	name   string
	ownDir bool // dir was opened for this end and is closed with it
	// arrived, for a pending end only, is closed once it serves its
	// first FIFO, or is closed itself.
	arrived chan struct{}

	mu      sync.Mutex
	cur     *os.File   // nil while a pending end has no FIFO
	retired []*os.File // replaced FIFOs, oldest first, until emptied
	closed  bool
	woken   bool // Wake is in force: every current file gets a past deadline
	// release, if set, is told of every FIFO the end lets go of (SetRelease).
	release func(Info)
}

// openAt opens the FIFO name of d as e; with ownDir, d is closed with e,
// or now if that fails.
func (e *endpoint) openAt(d *sharedir.Dir, name string, ownDir bool) error {
	e.dir, e.name, e.ownDir = d, name, ownDir
	f, err := openAt(d, name, unix.O_RDWR|unix.O_NONBLOCK)
	if err != nil {
		if ownDir {
			d.Close()
		}
		return err
	}
	pipeio.Grow(f)
	e.cur = f
	return nil
}

// Path returns the FIFO path this end follows.
func (e *endpoint) Path() string { return e.dir.Join(e.name) }

// current returns the file Read or Write should use now: nil while a
// pending end has none (it arrives on e.arrived).
func (e *endpoint) current() (*os.File, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	return e.cur, nil
}

// Describe describes the FIFO the end uses now, from its descriptor.
func (e *endpoint) Describe() (Info, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return Info{}, ErrClosed
	case e.cur == nil:
		return Info{}, fmt.Errorf("describe fifo %s: %w", e.Path(), ErrPending)
	}
	return Describe(e.cur)
}

// maxRetired bounds the replaced FIFOs an end keeps open until they are
// emptied. Whoever may rename DIR's entries can replace a FIFO every
// time the agent looks, each time with one it keeps a byte in, while the
// agent reads nothing (its queue full, its child not reading): past the
// bound, Reopen serves no new FIFO until the end emptied the old ones, so
// the agent's descriptors do not grow with every replacement.
const maxRetired = 16

// Reopen makes the end follow its path again after the entry changed. If the
// path names a different FIFO than the open one, that FIFO is opened and,
// unless accept (when set) refuses it, looked at on the descriptor just
// opened, used from now on; if the path is missing and create is set, a
// FIFO is made there with mode perm first. An entry that is not a FIFO,
// one accept refuses, or any while maxRetired replaced FIFOs are still to
// be emptied, is reported and the open FIFO stays in use. changed says
// whether a new FIFO was opened, created whether this call made it. A
// pending end's first FIFO is served the same way, and wakes its Read.
func (e *endpoint) Reopen(create bool, perm os.FileMode, accept func(Info) error) (changed, created bool, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return false, false, ErrClosed
	}
	if _, err := e.dir.Stat(e.name); errors.Is(err, os.ErrNotExist) {
		if !create {
			return false, false, nil
		}
		if created, err = MakeAt(e.dir, e.name, perm); err != nil {
			return false, false, err
		}
	}
	now, err := e.dir.Stat(e.name)
	if err != nil {
		return false, created, fmt.Errorf("reopen fifo %s: %w", e.Path(), err)
	}
	var was unix.Stat_t
	if e.cur != nil && unix.Fstat(int(e.cur.Fd()), &was) == nil && sameFile(&was, &now) {
		return false, created, nil
	}
	if len(e.retired) >= maxRetired {
		return false, created, fmt.Errorf("reopen fifo %s: %d replaced fifos are not emptied yet; the new one is served once they are", e.Path(), len(e.retired))
	}
	f, err := openAt(e.dir, e.name, unix.O_RDWR|unix.O_NONBLOCK)
	if err != nil {
		return false, created, err
	}
	if accept != nil {
		i, err := Describe(f)
		if err == nil {
			err = accept(i)
		}
		if err != nil {
			f.Close()
			return false, created, fmt.Errorf("reopen fifo %s: %w", e.Path(), err)
		}
	}
	pipeio.Grow(f)
	old := e.cur
	e.cur = f
	if e.woken {
		f.SetDeadline(time.Unix(1, 0)) // a Wake covers the new FIFO too
	}
	if old == nil {
		close(e.arrived) // the first FIFO of a pending end: its Read goes on
		return true, created, nil
	}
	e.retired = append(e.retired, old)
	// Wake a Read or Write blocked on the old FIFO; it moves over to f.
	old.SetDeadline(time.Unix(1, 0))
	return true, created, nil
}

// oldest returns the oldest replaced FIFO not yet emptied, or nil.
func (e *endpoint) oldest() *os.File {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.retired) == 0 {
		return nil
	}
	return e.retired[0]
}

// SetRelease has fn told of every FIFO the end closes for good, a
// replaced one once emptied and every one at Close, with its description
// taken just before (Nlink 0: no name is left, so once closed it is
// gone, and its inode number may be given to a new file).
func (e *endpoint) SetRelease(fn func(Info)) {
	e.mu.Lock()
	e.release = fn
	e.mu.Unlock()
}

// letGo closes f, one of the end's FIFOs, for good, telling release first.
func letGo(f *os.File, release func(Info)) error {
	if release != nil {
		if i, err := Describe(f); err == nil {
			release(i)
		}
	}
	return f.Close()
}

// retire closes f, the oldest replaced FIFO, once it is empty.
func (e *endpoint) retire(f *os.File) {
	e.mu.Lock()
	if len(e.retired) > 0 && e.retired[0] == f {
		e.retired = e.retired[1:]
	}
	release := e.release
	e.mu.Unlock()
	letGo(f, release)
}

// closeAll marks the end closed and closes every file, which wakes a blocked
// Read or Write.
func (e *endpoint) closeAll() error {
	_, err := e.closeDrain(false)
	return err
}

// closeDrain is closeAll that first, when drain is set, takes what is still
// buffered in the FIFOs, oldest first.
func (e *endpoint) closeDrain(drain bool) ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	e.closed = true
	var left []byte
	for _, f := range e.retired {
		if drain {
			left = append(left, Drain(f)...)
		}
		letGo(f, e.release)
	}
	e.retired = nil
	var err error
	if e.cur == nil {
		close(e.arrived) // a pending end's Read waits no more
	} else {
		if drain {
			left = append(left, Drain(e.cur)...)
		}
		err = letGo(e.cur, e.release)
	}
	if e.ownDir {
		e.dir.Close()
	}
	return left, err
}

// readBuffered reads from f whatever is buffered in the pipe now, without
// waiting and regardless of deadlines or of f being in blocking mode: it asks
// FIONREAD how much there is and reads no more. It returns 0 when nothing is.
func readBuffered(f *os.File, p []byte) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	rc.Control(func(fd uintptr) {
		avail, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ) // FIONREAD
		if err != nil || avail <= 0 {
			return
		}
		for {
			m, err := unix.Read(int(fd), p[:min(avail, len(p))])
			if err == unix.EINTR {
				continue
			}
			n = max(m, 0)
			return
		}
	})
	return n
}

// Drain reads from the non-blocking f everything buffered in it now, without
// waiting. It is how bytes left in a pipe by a process that went away are
// recovered.
// Nothing is allocated while nothing is buffered, the usual case: every
// exec request and every stream child ends with a Drain.
func Drain(f *os.File) []byte { return DrainAtMost(f, math.MaxInt) }

// DrainAtMost is Drain that stops after limit bytes: a process that keeps
// writing to the pipe cannot keep it reading.
func DrainAtMost(f *os.File, limit int) []byte {
	var out []byte
	for len(out) < limit {
		avail := min(buffered(f), limit-len(out))
		if avail == 0 {
			return out
		}
		out = slices.Grow(out, min(avail, 64<<10))
		n := readBuffered(f, out[len(out):min(cap(out), limit)])
		if n == 0 {
			return out
		}
		out = out[:len(out)+n]
	}
	return out
}

// buffered returns how many bytes FIONREAD says f holds, 0 on failure.
func buffered(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	avail := 0
	rc.Control(func(fd uintptr) {
		if n, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil && n > 0 {
			avail = n
		}
	})
	return avail
}
