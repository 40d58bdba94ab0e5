//go:build linux

package stream

import (
	"context"
	"errors"
	"fmt"
)

// This file is the end of a child's input (the control line "op":"eof",
// `fifobridge type -eof`): it comes once what the input FIFO held when
// the line was served has reached the child, between two of the feed's
// moves. On pipes the agent then closes its end of the child's stdin
// (the child reads end-of-file once it has read what the pipe holds,
// and its input stays ended until it exits: a restarted child gets a
// fresh stdin again); on a terminal it types the terminal's EOF
// character (tty.EOFChar), after the typed bytes, as a person would.

// endWait is one end of the input that waits: the input FIFO's bytes
// still to be moved before it (counted once, when the feed first sees
// it; uncounted until then), and where its outcome goes, once.
type endWait struct {
	left    int
	counted bool
	done    chan error // buffered: the feed never waits for its reader
}

// endWaits are the ends that wait on one feed (the feeder's, or the
// terminal's), in order. The feed's lock guards them; the feed serves
// them between its moves, so that no move is under way when it counts.
type endWaits struct{ list []*endWait }

// add adds an end that waits, uncounted.
func (e *endWaits) add() *endWait {
	w := &endWait{done: make(chan error, 1)}
	e.list = append(e.list, w)
	return w
}

// waiting says whether an end waits.
func (e *endWaits) waiting() bool { return len(e.list) > 0 }

// count counts, for every end not counted yet, the bytes the input FIFO
// holds now (buffered): those written before its line was served, and
// perhaps a few after, which go first all the same.
func (e *endWaits) count(buffered func() int) {
	for _, w := range e.list {
		if !w.counted {
			w.left, w.counted = buffered(), true
		}
	}
}

// moved counts n bytes moved from the input FIFO towards the child.
func (e *endWaits) moved(n int) {
	for _, w := range e.list {
		if w.counted {
			w.left -= n
		}
	}
}

// due says whether the first end is counted and its bytes were moved.
func (e *endWaits) due() bool {
	return len(e.list) > 0 && e.list[0].counted && e.list[0].left <= 0
}

// first is the first end.
func (e *endWaits) first() *endWait { return e.list[0] }

// finish gives the first end its outcome.
func (e *endWaits) finish(err error) {
	e.list[0].done <- err
	e.list[0] = nil
	e.list = e.list[1:]
}

// fail gives every end err.
func (e *endWaits) fail(err error) {
	for len(e.list) > 0 {
		e.finish(err)
	}
	e.list = nil
}

// remove takes w out, and reports whether it was still there (it got no
// outcome).
func (e *endWaits) remove(w *endWait) bool {
	for i, x := range e.list {
		if x == w {
			e.list = append(e.list[:i], e.list[i+1:]...)
			return true
		}
	}
	return false
}

// The errors of an end that cannot come.
var (
	errEnded      = errors.New("the child's input is ended already (by an eof before): what is typed now goes to its next start")
	errChildEnded = errors.New("the child ended before its input was read")
)

// endFeed is the feed an end waits on: the feeder (pipes) or the
// terminal.
type endFeed interface {
	endInput() (*endWait, error)
	cancelEnd(w *endWait) bool
}

// EndInput ends the running child's input once what its input FIFO
// holds now has reached it (see endinput.go), and returns then; or
// ctx's error when ctx ends first, the end then given up (nothing is
// ended). It fails at once when no child runs now, when the input is
// ended already (pipes), or when the engine stops; and when the child
// ends first.
func (s *Engine) EndInput(ctx context.Context) error {
	var feed endFeed = s.feed
	if s.tty != nil {
		feed = s.tty
	}
	w, err := feed.endInput()
	if err != nil {
		return err
	}
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		if feed.cancelEnd(w) {
			return fmt.Errorf("end the child's input: %w", ctx.Err())
		}
		return <-w.done
	}
}
