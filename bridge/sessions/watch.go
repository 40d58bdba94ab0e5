//go:build linux

package sessions

import (
	"fmt"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// watchOp hands the line's reply FIFO to the entry's engine, which follows
// its child's output on it from now on (stream.Engine.Watch) until that
// child ends or the entry closes; or refuses the line with one error
// frame: no such entry, one that is closing, too many watchers, or a
// reply FIFO whose owner may not read the entry's output FIFO (watching
// is reading). In sessions mode the line names its session; on stream
// mode's control FIFO it names none.
func (t *Table) watchOp(ctl protocol.ParsedControl, reply *fifo.Reply) {
	s := t.session(ctl.Session) // scope checked the line names a session, or none in stream mode
	switch {
	case s == nil:
		t.refuse(ctl, reply, notOpen(ctl.Session))
		return
	case s.closing.Load():
		t.refuse(ctl, reply, fmt.Errorf("%s is closing", s.what()))
		return
	}
	if err := s.eng.Watch(ctl.ID, reply, ctl.Raw); err != nil {
		t.refuse(ctl, reply, fmt.Errorf("watch %s: %w", s.what(), err))
	}
}
