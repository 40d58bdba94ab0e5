//go:build linux

package client

import (
	"fmt"
	"time"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

// agentWatch tells, while a request waits to be read, whether an agent
// still serves DIR: one that reads the input FIFO, or one that stopped
// reading it because it is stopping and still answers the lines it read.
type agentWatch struct {
	dir   *sharedir.Dir // DIR, entered once; not the watch's to close
	in    input         // the FIFO the request went to
	start string        // the serving agent at send's start (identity), or ""
}

func newAgentWatch(in input) *agentWatch {
	w := &agentWatch{dir: in.dir, in: in}
	if s, err := w.status(); err == nil {
		w.start = identity(s)
	}
	return w
}

// newAgentWatchOf is newAgentWatch with the serving agent's identity
// given, start ("" when unknown).
func newAgentWatchOf(in input, start string) *agentWatch {
	return &agentWatch{dir: in.dir, in: in, start: start}
}

// watchPeriod is how often a request still waiting to be read checks that
// an agent serves DIR.
const watchPeriod = 250 * time.Millisecond

// gone returns why no agent that can answer the request serves DIR any
// more, or nil while one does.
func (w *agentWatch) gone() error {
	if r, err := fifo.OpenWriterNowAt(w.in.fifos, w.in.fileName()); err == nil {
		r.Close()
		if w.start != "" {
			if s, err := w.status(); err == nil && identity(s) != w.start {
				return fmt.Errorf("%w: a new agent serves %s, the one sent to is gone", ErrAgentGone, w.dir.Path())
			}
		}
		return nil
	}
	// Nobody reads the input FIFO: the agent died, or it is stopping and
	// answers every line it read before it exits.
	s, err := w.status()
	if err != nil || !w.alive() {
		return fmt.Errorf("%w: no agent reads %s", ErrAgentGone, w.in.path())
	}
	if w.start != "" && identity(s) != w.start {
		return fmt.Errorf("%w: a new agent serves %s, the one sent to is gone", ErrAgentGone, w.dir.Path())
	}
	if _, open := findSession(s, w.in.session); w.in.session != "" && !open {
		// Its close answers the asks it read; this one it never read.
		return fmt.Errorf("%w: session %s was closed", ErrNoSession, w.in.session)
	}
	if s.State != "stopping" && s.State != "running" {
		return fmt.Errorf("%w: the agent is %s", ErrAgentGone, s.State)
	}
	return nil
}

func (w *agentWatch) status() (status.Status, error) {
	return status.ReadAt(w.dir, statusName)
}

// identity names one run of an agent: its pid and start time.
func identity(s status.Status) string { return identityOf(s.PID, s.StartedAt) }

// identityOf is identity of the agent pid started at start.
func identityOf(pid int, start time.Time) string {
	return fmt.Sprintf("%d@%s", pid, start.Format(time.RFC3339Nano))
}

// alive says whether an agent holds DIR/lock: right from any PID
// namespace, and false at once when the agent died. A lock that cannot be
// checked counts as no agent.
func (w *agentWatch) alive() bool {
	ok, err := status.AgentAliveAt(w.dir)
	return err == nil && ok
}
