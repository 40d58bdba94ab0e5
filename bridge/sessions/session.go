//go:build linux

package sessions

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/follow"
	"github.com/fifobridge/fifobridge/bridge/stream"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/sharedir"
)

// session is one open session: its stream engine, its files, and how it
// ended. Its run (Table.runSession) owns everything in it.
type session struct {
	name  string
	files *sharedir.Dir  // DIR/sessions/NAME (unit's Dir); DIR for stream mode's (nil when missing)
	unit  *sharedir.Unit // a session's directory with its files; nil for stream mode's
	eng   *stream.Engine
	roles *follow.Roles // what its input FIFOs serve; the status names them
	// follower keeps a session's in and out on their entries (Table.follow);
	// nil for stream mode's.
	follower *follow.Follower
	log      *slog.Logger
	started  time.Time
	tty      bool
	prompt   bool

	ctx    context.Context
	cancel context.CancelCauseFunc // a close, its cause what waiting asks are told

	closing atomic.Bool // a close (or the agent's stop) began

	part part // its part of the status file's sessions, as last encoded (render.go)

	done   chan struct{} // closed once it is gone; then status and err are set
	status child.ExitStatus
	err    error
}

// close begins the session's close: its engine stops its child's tree.
func (s *session) close() {
	s.closing.Store(true)
	s.cancel(fmt.Errorf("%s is closing", s.what()))
}

// streamMode reports whether s is stream mode's one entry, on DIR's own
// FIFOs, which are the agent's: made, followed and removed by it, not by
// the table. Its end is the table's, and it stays listed until then.
func (s *session) streamMode() bool { return s.name == "" }

// what names s in messages: "session NAME", or stream mode's "the
// child".
func (s *session) what() string {
	if s.streamMode() {
		return "the child"
	}
	return "session " + s.name
}

// runSession runs s until its engine returns (a close, its child ended
// for good, -session-idle, the agent's stop); then a session's files are
// removed and its name forgotten, and done is closed.
func (t *Table) runSession(s *session) {
	defer t.wg.Done()
	st, err := s.eng.Run(s.ctx)
	s.closing.Store(true)
	s.cancel(nil)
	s.status, s.err = st, err
	if s.streamMode() {
		close(s.done)
		return
	}
	s.follower.Stop() // before the files go: none is made again
	t.removeFiles(s)
	t.mu.Lock()
	t.remove(s)
	t.mu.Unlock()
	t.flush()
	close(s.done)
	if err != nil {
		s.log.Warn("session closed: its child could not start", "err", err)
	} else {
		s.log.Info("session closed", "status", st.String())
	}
	t.idle.Touch() // the end of a session is activity
	t.poke()
}
