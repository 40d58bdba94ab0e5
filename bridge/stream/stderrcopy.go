//go:build linux

package stream

import (
	"log/slog"
	"os"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/pipeio"
)

// stderrCopy is the stderr of a session's first child on pipes when it
// is the agent's own (-stderr log): a pipe, whose bytes the agent copies
// to its stderr unchanged, showing them to the first run's watch while
// it lasts, so that a program that cannot start is quoted. The child
// keeps the pipe for life, so the copy lasts as long as the child: it
// ends at the child's unwire (finish), after what the pipe still holds,
// at most one pipe's capacity.
//
// The agent's stderr can stall (a log driver that reads nothing, a
// terminal stopped with XOFF), and it is shared with the agent's log and
// later children, so it is never made non-blocking: every write waits
// for room with poll(2) first (stderrwrite.go). While the child runs,
// it waits as the child's own writes would; once finish began, at most
// the patience of the engines' give-up rule (package bound). What the
// agent's stderr does not take by then is dropped, and finish logs how
// much. A nil stderrCopy is none, and its methods do nothing.
type stderrCopy struct {
	r, w *os.File // the agent's end; the child's, until the child has it
	out  *stderrOut
	log  *slog.Logger
	cap  int // the pipe's capacity: the most read once finish began
	done chan struct{}
}

// stderrChunk is the most copied at once: a child's stderr is small.
const stderrChunk = 4 << 10

// newStderrCopy makes the pipe, w for the child's spec, whose bytes go
// to out (the agent's stderr); finish waits at most patience for out to
// take them, and log says what was dropped.
func newStderrCopy(out *os.File, patience time.Duration, log *slog.Logger) (*stderrCopy, error) {
	r, w, err := pipeio.Pipe(true)
	if err != nil {
		return nil, err
	}
	return &stderrCopy{r: r, w: w, out: newStderrOut(out, patience), log: log, cap: pipeio.Capacity(r), done: make(chan struct{})}, nil
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
		c.copy(first)
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
// deadline, and then what it still holds, at most its capacity: a
// process outside the tree that keeps writing cannot keep it going.
func (c *stderrCopy) copy(first *firstRun) {
	buf := make([]byte, stderrChunk)
	for {
		n, err := c.r.Read(buf)
		if n > 0 {
			first.stderrOut(buf[:n])
			c.out.write(buf[:n])
		}
		if err != nil {
			break
		}
	}
	if left := fifo.DrainAtMost(c.r, c.cap); len(left) > 0 {
		first.stderrOut(left)
		c.out.write(left)
	}
}

// finish ends the copy of a child whose tree is gone, once it copied what
// the pipe holds, and closes the pipe: a process outside the tree that
// still has it gets EPIPE. It waits at most the patience, when the
// copy's writes are given up, and bound.StopGrace more for the copy to
// end; a write that poll(2) found room for and that blocks still
// (another writer of the agent's stderr took the room) is not waited
// for, and its goroutine ends when that write does.
func (c *stderrCopy) finish() {
	if c == nil {
		return
	}
	end := c.out.giveUpAt()
	c.r.SetReadDeadline(time.Unix(1, 0))
	t := time.NewTimer(time.Until(end) + bound.StopGrace)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		c.log.Warn("the first child's stderr copy did not end: a write to the agent's stderr is blocked")
	}
	c.r.Close()
	if n := c.out.dropped.Load(); n > 0 {
		c.log.Warn("the first child's stderr was not all copied: the agent's stderr took nothing", "dropped", n, "waited", c.out.patience)
	}
}
