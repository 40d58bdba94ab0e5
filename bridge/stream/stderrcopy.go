//go:build linux

package stream

import (
	"io"
	"os"
	"time"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/pipeio"
	"github.com/fifobridge/fifobridge/internal/tty"
)

// stderrCopy is the stderr of a session's first child on pipes when it
// is the agent's own (-stderr log): a pipe, whose bytes the agent copies
// to its stderr unchanged, showing them to the first run's watch while
// it lasts, so that a program that cannot start is quoted. The child
// keeps the pipe for life, so the copy lasts as long as the child: it
// ends at the child's unwire (finish), after what the pipe still holds.
// A write to the agent's stderr waits as the agent's log does. A nil
// stderrCopy is none, and its methods do nothing.
type stderrCopy struct {
	r    *os.File // the agent's end
	w    *os.File // the child's end, until the child has it
	done chan struct{}
}

// stderrChunk is the most copied at once: a child's stderr is small.
const stderrChunk = 4 << 10

// newStderrCopy makes the pipe: w is for the child's spec.
func newStderrCopy() (*stderrCopy, error) {
	r, w, err := pipeio.Pipe(true)
	if err != nil {
		return nil, err
	}
	return &stderrCopy{r: r, w: w, done: make(chan struct{})}, nil
}

// start copies the pipe, which the child that started has, to the
// agent's stderr, showing first its bytes, until finish.
func (c *stderrCopy) start(first *firstRun) {
	if c == nil {
		return
	}
	c.w.Close() // the child has it; holding it would hide its EOF
	go func() {
		defer close(c.done)
		c.copy(first, tty.Output(os.Stderr))
	}()
}

// abandon closes the pipe of a child that did not start.
func (c *stderrCopy) abandon() {
	if c != nil {
		c.w.Close()
		c.r.Close()
	}
}

// copy copies until the pipe has no writer left or finish set its
// deadline, and then what it still holds.
func (c *stderrCopy) copy(first *firstRun, out io.Writer) {
	buf := make([]byte, stderrChunk)
	for {
		n, err := c.r.Read(buf)
		if n > 0 {
			first.stderrOut(buf[:n])
			out.Write(buf[:n]) // as the agent's log, it has nowhere to say it failed
		}
		if err != nil {
			break
		}
	}
	if left := fifo.Drain(c.r); len(left) > 0 {
		first.stderrOut(left)
		out.Write(left)
	}
}

// finish ends the copy of a child whose tree is gone, once it copied what
// the pipe holds, and closes the pipe: a process outside the tree that
// still has it gets EPIPE.
func (c *stderrCopy) finish() {
	if c == nil {
		return
	}
	c.r.SetReadDeadline(time.Unix(1, 0))
	<-c.done
	c.r.Close()
}
