//go:build linux

package stream

import (
	"errors"
	"os"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/idle"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/pipeio"
)

// feeder moves bytes from the input FIFO to the stdin of whichever child is
// attached, with splice(2), so they never pass through the agent's memory.
// While no child is attached, input waits in the FIFO (backpressure). When
// a child is detached, the bytes left unread in its stdin pipe are taken
// back and go, first and in order, to the next child. An end of the
// input (endInput) closes the child's stdin, between two moves, once the
// bytes the input FIFO held before it were moved; input waits in the
// FIFO from then on, for the next child.
type feeder struct {
	src *fifo.Source

	mu      sync.Mutex
	cond    sync.Cond
	pending []byte   // taken back from a child, not yet written to the next
	stdin   *os.File // the attached child's stdin (agent's end), or nil
	back    *os.File // where leftovers are recovered from: stdin itself, or the same pipe's read end (pipeio.Input)
	ended   bool     // the attached child's stdin was closed by an end of its input
	ends    endWaits // ends of the input that wait
	answers expecter // the attached child's output: told after each turn that an answer is due
	busy    bool     // a splice or write to stdin is under way
	closed  bool
	turns   int // writeTurn calls waiting or under way: run waits for them

	// typed is told when bytes from the input FIFO went to a child (a
	// conversation's child is then busy).
	typed func()

	clock *idle.Clock // told of every byte read from src
}

func newFeeder(src *fifo.Source, clock *idle.Clock) *feeder {
	f := &feeder{src: src, clock: clock, typed: func() {}}
	f.cond.L = &f.mu
	return f
}

// run feeds until close is called, or src is closed.
func (f *feeder) run() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		for (f.stdin == nil || f.turns > 0) && !f.closed {
			f.cond.Wait()
		}
		if f.closed {
			return
		}
		if f.serveEnds() {
			continue
		}
		w, pending := f.stdin, f.pending
		f.busy = true
		f.src.Rearm() // before the lock is let go, so detach's Wake counts
		f.mu.Unlock()
		var n, moved int
		var err error
		if len(pending) > 0 {
			n, err = w.Write(pending)
		} else {
			if moved, err = f.src.SpliceTo(w, pipeio.PipeSize); moved > 0 {
				f.clock.Touch()
			}
			if moved > 0 {
				f.typed()
			}
		}
		f.mu.Lock()
		f.ends.moved(moved)
		f.busy = false
		f.pending = f.pending[n:]
		f.cond.Broadcast()
		if errors.Is(err, fifo.ErrClosed) {
			return
		}
	}
}

// expecter is told that an answer is due: a *pipeio.ReadSpinner.
type expecter interface{ Expect() }

// attach makes stdin the destination; back is what the child leaves in
// its pipe is read back from (stdin itself when it is open for both, see
// pipeio.Input), and answers the spinner of the same child's output.
func (f *feeder) attach(stdin, back *os.File, answers expecter) {
	f.mu.Lock()
	f.stdin, f.back, f.answers = stdin, back, answers
	f.cond.Broadcast()
	f.mu.Unlock()
}

// detach takes the child's stdin away, recovers the bytes the child did not
// read, and closes the agent's ends of its pipe (its stdin may be closed
// already: an end of its input). Ends of the input that still wait fail.
// Call it after the child's tree is gone.
func (f *feeder) detach() {
	f.mu.Lock()
	w, back := f.stdin, f.back
	f.stdin, f.back, f.answers, f.ended = nil, nil, nil, false
	f.ends.fail(errChildEnded)
	if back == nil {
		f.mu.Unlock()
		return
	}
	if w != nil {
		w.SetWriteDeadline(time.Unix(1, 0))
	}
	f.src.Wake()
	for f.busy {
		f.cond.Wait()
	}
	if left := fifo.Drain(back); len(left) > 0 {
		f.pending = append(left, f.pending...)
	}
	f.mu.Unlock()
	if w != nil {
		w.Close()
	}
	if back != w {
		back.Close()
	}
}

// close ends run; the caller also closes src, which wakes a splice.
func (f *feeder) close() {
	f.mu.Lock()
	f.closed = true
	f.ends.fail(errNoInput)
	f.cond.Broadcast()
	f.mu.Unlock()
}

// held reports how many bytes taken back wait for the next child.
func (f *feeder) held() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending)
}

// errNoInput is writeTurn's error once the feeder is closed.
var errNoInput = errors.New("the agent is stopping: no child takes input")

// writeTurn writes p whole to the attached child's stdin between two of
// run's moves, so that it never lands inside one chunk of the input
// FIFO's bytes; it waits for a child to be attached, and for the input
// taken back from the last one to go first. It fails once the feeder is
// closed, or when the child is detached while p is written. Once p is
// written, the copy of the child's output is told that an answer is due
// (pipeio.ReadSpinner.Expect), so that it is polling when that comes.
func (f *feeder) writeTurn(p []byte) error {
	f.mu.Lock()
	f.turns++
	f.src.Wake() // a splice waiting for input gives way
	for (f.stdin == nil || f.busy || len(f.pending) > 0) && !f.closed {
		if f.stdin != nil && len(f.pending) > 0 && !f.busy {
			break // the leftovers go first: run does not wait for them
		}
		f.cond.Wait()
	}
	if f.closed {
		f.turns--
		f.cond.Broadcast()
		f.mu.Unlock()
		return errNoInput
	}
	w, answers := f.stdin, f.answers
	f.busy = true
	if len(f.pending) > 0 {
		p = append(f.pending, p...)
		f.pending = nil
	}
	f.mu.Unlock()
	_, err := w.Write(p)
	if err == nil && answers != nil {
		answers.Expect() // while busy: detach waits, and the output is still open
	}
	f.mu.Lock()
	f.busy = false
	f.turns--
	f.cond.Broadcast()
	f.mu.Unlock()
	return err
}

// endInput has the attached child's input ended (see endinput.go): the
// returned wait gets the outcome once run served it. It fails at once
// when no child is attached, its input is ended already, or the feeder
// is closed.
func (f *feeder) endInput() (*endWait, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.closed:
		return nil, errNoInput
	case f.ended:
		return nil, errEnded
	case f.stdin == nil:
		return nil, errNoChild
	}
	w := f.ends.add()
	f.src.Wake() // a splice waiting for input gives way: run counts
	f.cond.Broadcast()
	return w, nil
}

// cancelEnd gives up w, unless it has its outcome.
func (f *feeder) cancelEnd(w *endWait) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ends.remove(w)
}

// serveEnds serves, with the lock held and no move under way, the ends
// of the input that wait: it counts the input FIFO's bytes for those new,
// and once the first is due and nothing taken back from a child waits to
// be written, closes the attached child's stdin (the child reads
// end-of-file once it has read its pipe) and answers it; the ends after
// it fail, the input being ended. It reports whether it closed stdin.
func (f *feeder) serveEnds() bool {
	if !f.ends.waiting() {
		return false
	}
	f.ends.count(f.src.Buffered)
	if !f.ends.due() || len(f.pending) > 0 {
		return false
	}
	if f.back == f.stdin {
		// One descriptor reads and writes the pipe (pipeio.Input): a read
		// end of its own keeps what the child leaves unread to be taken
		// back, once the writing end is closed. Without it (no descriptor
		// left), that is lost, and the input ends all the same.
		f.back, _ = pipeio.ReadEnd(f.stdin)
	}
	err := f.stdin.Close()
	f.stdin, f.ended = nil, true
	f.ends.finish(err)
	f.ends.fail(errEnded)
	return true
}
