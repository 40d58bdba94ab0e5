//go:build linux

package stream

import (
	"os"

	"github.com/fifobridge/fifobridge/internal/tty"
)

// This file is the end of a terminal child's input (endinput.go): the
// terminal's EOF character typed by the feed, after the bytes the input
// FIFO held when the end was asked for, between two of its writes.

// endInput has the EOF character typed on the running child's terminal
// once the input FIFO's bytes before it are typed: the returned wait
// gets the outcome. It fails at once when no terminal is attached or
// the terminal is closed.
func (t *terminal) endInput() (*endWait, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.closed:
		return nil, errNoInput
	case t.master == nil:
		return nil, errNoChild
	}
	w := t.ends.add()
	t.src.Wake() // a feed waiting for input gives way: it counts
	t.cond.Broadcast()
	return w, nil
}

// cancelEnd gives up w, unless it has its outcome.
func (t *terminal) cancelEnd(w *endWait) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ends.remove(w)
}

// serveEnds serves, with the lock held, the ends of the input that wait
// on m, the current terminal: it counts the input FIFO's bytes for those
// new, and once the first is due and every byte read before it was
// written, types m's EOF character (one per end, as a person presses ^D
// once for each) and answers it. While a turn's input is being written
// it waits for that. It reports whether the feed is to look again
// before it reads more input.
func (t *terminal) serveEnds(m *os.File) bool {
	if !t.ends.waiting() {
		return false
	}
	t.ends.count(t.src.Buffered)
	if !t.ends.due() || len(t.pending) > 0 {
		return false
	}
	if t.busy { // a turn's input is being written
		t.cond.Wait()
		return true
	}
	w := t.ends.first()
	c, err := tty.EOFChar(m)
	if err == nil {
		t.busy = true
		t.mu.Unlock()
		_, err = m.Write([]byte{c})
		t.mu.Lock()
		t.busy = false
		t.cond.Broadcast()
	}
	if err == nil {
		t.talk.Typed()
	}
	if t.ends.remove(w) { // detachInput may have failed it meanwhile
		w.done <- err
	}
	return true
}
