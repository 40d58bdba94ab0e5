package fifo

import (
	"context"
	"io"
	"os"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/internal/pipeio"
	"github.com/fifobridge/fifobridge/sharedir"
)

// Sink is the agent's writing end of an output FIFO. Because the Sink also
// holds the FIFO open for reading, a reader that goes away never causes
// EPIPE or lost bytes: what was written and not yet read stays in the pipe
// buffer for the next reader, and when the buffer is full Write waits
// (backpressure). Write and Close are safe to call from different goroutines;
// one Write runs at a time, so a Write is never interleaved with another.
type Sink struct {
	endpoint
	wmu sync.Mutex
}

// OpenSinkAt opens the existing FIFO name of d as a Sink. It never blocks.
// The Sink follows the entry through d, which must stay open as long as
// the Sink is.
func OpenSinkAt(d *sharedir.Dir, name string) (*Sink, error) {
	s := &Sink{}
	if err := s.openAt(d, name, false); err != nil {
		return nil, err
	}
	return s, nil
}

// Write writes all of p, waiting while the FIFO is full. After Reopen, bytes
// that no reader had taken from replaced FIFOs are moved to the new one
// first, so nothing is lost or repeated. It returns ErrClosed once Close was
// called.
func (s *Sink) Write(p []byte) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.write(p)
}

// CarryOver moves the bytes no reader took from replaced FIFOs to the current
// one now, rather than with the next Write. It waits while the FIFO is full.
func (s *Sink) CarryOver() error {
	_, err := s.Write(nil)
	return err
}

func (s *Sink) write(p []byte) (int, error) {
	written := 0
	var carried []byte // from replaced FIFOs: goes before the rest of p
	for {
		for old := s.oldest(); old != nil; old = s.oldest() {
			// What is in a replaced FIFO was written before what is
			// still to be written.
			carried = append(Drain(old), carried...)
			s.retire(old)
		}
		// Taken after the retiring: a FIFO replaced from now on is only
		// given a deadline, and closed by this loop's next round.
		f, err := s.current()
		if err != nil {
			return written, err
		}
		if len(carried) > 0 {
			n, err := f.Write(carried)
			carried = carried[n:]
			if err != nil && os.IsTimeout(err) {
				continue // Reopen woke us
			}
			if err != nil {
				return written, err
			}
		}
		if written == len(p) {
			return written, nil
		}
		n, err := f.Write(p[written:])
		written += n
		if err != nil && os.IsTimeout(err) {
			continue // Reopen woke us
		}
		if err != nil {
			if _, cerr := s.current(); cerr != nil {
				return written, cerr
			}
		}
		return written, err
	}
}

// Close closes the Sink and wakes a blocked Write, which returns ErrClosed.
// Bytes still in the pipe buffer stay there for as long as a reader has the
// FIFO open.
func (s *Sink) Close() error { return s.closeAll() }

// SpliceFrom moves up to max bytes from the pipe src into the FIFO inside
// the kernel, waiting until src has bytes and the FIFO has room. Bytes left
// in replaced FIFOs go first. It returns io.EOF when src has no writer
// left, an error when src's read deadline passes, and ErrClosed once Close
// was called.
func (s *Sink) SpliceFrom(src *os.File, max int) (int, error) {
	for {
		// Wait for bytes first, and without the write lock, so that
		// Write and CarryOver go on meanwhile.
		if err := pipeio.WaitReadable(src); err != nil {
			return 0, err
		}
		n, empty, err := s.spliceFrom(src, max)
		if !empty {
			return n, err
		}
	}
}

// spliceFrom is one SpliceFrom that waits while the FIFO is full, but
// returns empty rather than wait for src.
func (s *Sink) spliceFrom(src *os.File, max int) (n int, empty bool, err error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	for {
		f, err := s.current()
		if err != nil {
			return 0, false, err
		}
		if s.oldest() != nil {
			if _, err := s.write(nil); err != nil { // carries the old bytes over
				return 0, false, err
			}
			continue
		}
		n, empty, full, err := pipeio.SpliceNow(src, f, max)
		switch {
		case err != nil:
			if _, cerr := s.current(); cerr != nil {
				return 0, false, cerr
			}
			return 0, false, err
		case n > 0:
			return n, false, nil
		case empty:
			return 0, true, nil
		case full:
			if err := pipeio.WaitWritable(f); err != nil && !os.IsTimeout(err) {
				if _, cerr := s.current(); cerr != nil {
					return 0, false, cerr
				}
				return 0, false, err
			} // a timeout is Reopen waking us: look again
		default:
			return 0, false, io.EOF
		}
	}
}

// drainedPoll is how often WaitDrained looks at the FIFO. It runs only while
// an agent keeps a last child's output for a reader.
const drainedPoll = 10 * time.Millisecond

// WaitDrained waits until no byte written to the Sink is left unread, in
// the current FIFO or a replaced one, or until ctx is done (its error) or
// the Sink is closed (ErrClosed).
func (s *Sink) WaitDrained(ctx context.Context) error {
	t := time.NewTicker(drainedPoll)
	defer t.Stop()
	for {
		n, err := s.unread()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Unread returns how many bytes written to the Sink no reader has taken
// yet, 0 once it is closed.
func (s *Sink) Unread() int {
	n, _ := s.unread()
	return n
}

func (s *Sink) unread() (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	n := buffered(s.cur)
	for _, f := range s.retired {
		n += buffered(f)
	}
	return n, nil
}
