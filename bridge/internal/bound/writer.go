//go:build linux

package bound

import (
	"errors"
	"os"
	"sync"
	"time"
)

// Target is where a Writer writes: a reply FIFO.
type Target interface {
	Write(p []byte) (int, error)
	SetWriteDeadline(t time.Time) error
}

// chunk is the most a Writer writes at once: PIPE_BUF, which a pipe takes
// whole or not at all, so that every write that returns made progress
// and the patience counts from the last byte the reader took.
const chunk = 4096

// Writer writes to one reader under the rule: a write waits at most the
// patience for the reader to take something; once a stop began, no later
// than the stop's deadline. Write is for one goroutine at a time;
// ArmDeadline is safe from any.
type Writer struct {
	rule *Rule
	to   Target

	mu sync.Mutex // held while a deadline is chosen and set
}

// NewWriter returns a Writer to to, watched by r until Close.
func (r *Rule) NewWriter(to Target) *Writer {
	w := &Writer{rule: r, to: to}
	r.Watch(w)
	return w
}

// Write writes p in pieces the pipe takes whole, each with the deadline
// the rule gives a write beginning then. It returns the error of the
// first piece that fails: a timeout means the reader took nothing for
// the patience, or the stop's deadline passed.
func (w *Writer) Write(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		w.ArmDeadline()
		n, err := w.to.Write(p[written:min(len(p), written+chunk)])
		written += n
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// ArmDeadline gives the target the deadline the rule gives a write
// beginning now; a stop calls it for the write under way.
func (w *Writer) ArmDeadline() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.to.SetWriteDeadline(w.rule.WriteDeadline())
}

// Close stops watching the writer; its writes must be over.
func (w *Writer) Close() { w.rule.Forget(w) }

// GivenUp reports whether err, from a Writer's write, means the rule gave
// the write up: the patience or the stop's deadline passed.
func GivenUp(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
