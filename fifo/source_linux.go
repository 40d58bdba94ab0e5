package fifo

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/internal/pipeio"
	"github.com/fifobridge/fifobridge/sharedir"
)

// Source is the agent's reading end of an input FIFO. Writers may open and
// close the FIFO any number of times: because the Source also holds the FIFO
// open for writing, Read never returns io.EOF and never spins; it waits in
// the runtime poller until bytes arrive. Read and Close are safe to call from
// different goroutines; one Read runs at a time.
type Source struct {
	endpoint
	rmu sync.Mutex
}

// OpenSourceAt opens the existing FIFO name of d as a Source. It never blocks.
// The Source follows the entry through d, which must stay open as long as
// the Source is.
func OpenSourceAt(d *sharedir.Dir, name string) (*Source, error) {
	s := &Source{}
	if err := s.openAt(d, name, false); err != nil {
		return nil, err
	}
	return s, nil
}

// PendingSourceAt returns a Source of the FIFO name of d that serves no
// FIFO yet, where none could be opened (it is missing, or is not one the
// caller accepts): its Read waits until Reopen serves one (made with
// create, where it is missing), and a follower of the entry makes it as
// any other. Until then Describe and SpliceTo fail with ErrPending. d
// must stay open as long as the Source is.
func PendingSourceAt(d *sharedir.Dir, name string) *Source {
	s := &Source{}
	s.dir, s.name, s.arrived = d, name, make(chan struct{})
	return s
}

// Read reads the next bytes written to the FIFO. After Reopen, bytes still
// buffered in replaced FIFOs are returned first, oldest FIFO first. It
// returns ErrClosed once Close was called, and os.ErrDeadlineExceeded
// while Wake is in force (until Rearm), as SpliceTo does.
func (s *Source) Read(p []byte) (int, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	for {
		f, err := s.current()
		if err != nil {
			return 0, err
		}
		if f == nil { // pending: no FIFO yet
			<-s.arrived
			continue
		}
		if old := s.oldest(); old != nil {
			if n := readBuffered(old, p); n > 0 {
				return n, nil
			}
			s.retire(old)
			continue
		}
		n, err := pipeio.Read(f, p)
		if err != nil && os.IsTimeout(err) && !s.isWoken() {
			continue // Reopen woke us
		}
		if err != nil {
			if _, cerr := s.current(); cerr != nil {
				return n, cerr
			}
		}
		return n, err
	}
}

// WaitReadable waits until Read has bytes to return, without reading
// them: a reader that waits so holds no buffer meanwhile (an idle
// session's terminal feed). It waits as Read does (for a pending Source's
// first FIFO, in the runtime's poller), and returns ErrClosed once Close
// was called, os.ErrDeadlineExceeded when Wake was called (until
// Rearm), as SpliceTo does; a Read after it that finds nothing waits as
// any Read.
func (s *Source) WaitReadable() error {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	for {
		f, err := s.current()
		if err != nil {
			return err
		}
		if f == nil { // pending: no FIFO yet
			<-s.arrived
			continue
		}
		if old := s.oldest(); old != nil {
			if buffered(old) > 0 {
				return nil
			}
			s.retire(old)
			continue
		}
		err = pipeio.WaitReadable(f)
		if err != nil && os.IsTimeout(err) && !s.isWoken() {
			continue // Reopen woke us
		}
		if err != nil {
			if _, cerr := s.current(); cerr != nil {
				return cerr
			}
		}
		return err
	}
}

// Buffered returns how many bytes the Source's FIFOs hold now, the
// replaced ones' too: what Read and SpliceTo would return before they
// wait. Bytes written after it looks are not counted.
func (s *Source) Buffered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0
	}
	n := 0
	for _, f := range s.retired {
		n += buffered(f)
	}
	if s.cur != nil {
		n += buffered(s.cur)
	}
	return n
}

// Close closes the Source and wakes a blocked Read, which returns ErrClosed.
func (s *Source) Close() error { return s.closeAll() }

// CloseDrain closes the Source like Close and returns the bytes still
// buffered in its FIFOs, which no Read will return: what writers had written
// when the reading stopped.
func (s *Source) CloseDrain() ([]byte, error) { return s.closeDrain(true) }

// SpliceTo moves up to max bytes from the FIFO into the pipe dst inside the
// kernel, without copying them through user space, waiting until there are
// bytes and dst has room. Bytes of replaced FIFOs go first. It returns
// os.ErrDeadlineExceeded when Wake was called or dst's write deadline
// passed, ErrClosed once Close was called, and ErrPending while a
// pending Source has no FIFO.
func (s *Source) SpliceTo(dst *os.File, max int) (int, error) {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	for {
		f, err := s.current()
		if err != nil {
			return 0, err
		}
		if f == nil {
			return 0, fmt.Errorf("splice from fifo %s: %w", s.Path(), ErrPending)
		}
		if old := s.oldest(); old != nil {
			n, _, full, err := pipeio.SpliceNow(old, dst, max)
			switch {
			case err != nil:
				return 0, err
			case n > 0:
				return n, nil
			case full:
				if err := pipeio.WaitWritable(dst); err != nil {
					return 0, err
				}
			default: // emptied
				s.retire(old)
			}
			continue
		}
		n, err := pipeio.Splice(f, dst, max)
		if err != nil && os.IsTimeout(err) && !s.isWoken() {
			if now, cerr := s.current(); cerr != nil {
				return 0, cerr
			} else if now != f || s.oldest() != nil {
				continue // Reopen woke us
			}
		}
		if err != nil {
			if _, cerr := s.current(); cerr != nil {
				return 0, cerr
			}
		}
		return n, err
	}
}

// Wake makes a SpliceTo that waits for bytes, or the next one to start,
// return os.ErrDeadlineExceeded, until Rearm; also when Reopen replaces the
// FIFO meanwhile.
func (s *Source) Wake() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.woken = true
	if !s.closed && s.cur != nil {
		s.cur.SetReadDeadline(time.Unix(1, 0))
	}
}

// Rearm undoes Wake. Without a Wake in force it costs a lock and nothing
// more: it runs before every splice.
func (s *Source) Rearm() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.woken {
		return
	}
	s.woken = false
	if !s.closed && s.cur != nil {
		s.cur.SetReadDeadline(time.Time{})
	}
}

func (s *Source) isWoken() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.woken
}
