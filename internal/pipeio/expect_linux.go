package pipeio

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A ReadSpinner waits for bytes on one pipe, as WaitReadable does, and
// can be told that bytes are due: after Expect, its waits spin for
// expectWindow, parked ones included, rather than park.
//
// Why: a conversation's child answers each turn's input some tens of
// microseconds after it was written, but the copy of its output has
// parked long before (the child was idle while the asker read the last
// answer and wrote the next question), and waking a parked wait costs
// more than the answer took. The writer of the input knows when an
// answer is due: Expect lets it say so, for this one descriptor.
//
// How: a wait parked in the runtime's poller is woken by a read deadline
// in the past, set by Expect and taken back by the wait before it returns
// or waits again, so that the owner's deadline (SetReadDeadline) is the
// one f has whenever no wait is parked. Expect does nothing with the
// busy-poll off (FIFOBRIDGE_BUSY_POLL=0), or while the runtime has one P.
type ReadSpinner struct {
	f     *os.File
	armed atomic.Int64 // sinceEpoch, in ns, until which waits spin

	mu       sync.Mutex
	deadline time.Time // the owner's read deadline of f
	parked   bool      // a wait is parked, or about to
	poked    bool      // Expect woke it with a past deadline
}

// expectWindow is how long waits spin after an Expect: a child that
// answers later is waited for parked.
const expectWindow = time.Millisecond

// NewReadSpinner returns the spinner of f, a non-blocking pipe that the
// caller owns and reads from one goroutine at a time: from now on, set its
// read deadline through the spinner, and wait for it only through it.
func NewReadSpinner(f *os.File) *ReadSpinner { return &ReadSpinner{f: f} }

// WaitReadable waits until f has bytes (or no writer left), or its read
// deadline passes, as WaitReadable(f) does.
func (s *ReadSpinner) WaitReadable() error {
	for {
		err := wait(s.f, unix.POLLIN, &s.armed, s.parking)
		s.mu.Lock()
		poked := s.poked
		s.parked, s.poked = false, false
		if poked {
			s.f.SetReadDeadline(s.deadline)
		}
		s.mu.Unlock()
		if !poked || !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
	}
}

// parking is told by a wait that it parks.
func (s *ReadSpinner) parking() {
	s.mu.Lock()
	s.parked = true
	s.mu.Unlock()
}

// Expect says that bytes are due soon: waits spin for expectWindow from
// now, and a parked wait is woken to spin. It never waits.
func (s *ReadSpinner) Expect() {
	if !busyPoll || maxSpinners() == 0 {
		return
	}
	s.armed.Store(int64(sinceEpoch() + expectWindow))
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.parked || s.poked || !s.deadline.IsZero() {
		return // nothing parked, woken already, or the owner set a deadline: left be
	}
	s.poked = true
	s.f.SetReadDeadline(time.Unix(1, 0))
}

// SetReadDeadline is f's SetReadDeadline.
func (s *ReadSpinner) SetReadDeadline(t time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deadline = t
	return s.f.SetReadDeadline(t)
}
