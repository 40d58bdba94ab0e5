//go:build linux

package sessions

import (
	"errors"
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
	if err := t.entryNamed(ctl.Session); err != nil {
		t.refuse(ctl, reply, err)
		return
	}
	s := t.session(ctl.Session)
	switch {
	case s == nil:
		t.refuse(ctl, reply, notOpen(ctl.Session))
		return
	case s.closing.Load():
		t.refuse(ctl, reply, fmt.Errorf("session %s is closing", ctl.Session))
		return
	}
	if err := s.eng.Watch(ctl.ID, reply, ctl.Raw); err != nil {
		what := "watch"
		if ctl.Session != "" {
			what += " session " + ctl.Session
		}
		t.refuse(ctl, reply, fmt.Errorf("%s: %w", what, err))
	}
}

// entryNamed refuses a line that names a session in stream mode, or none
// in sessions mode.
func (t *Table) entryNamed(name string) error {
	switch {
	case t.single() && name != "":
		return fmt.Errorf("stream mode has no sessions: the line names session %s", name)
	case !t.single() && name == "":
		return errors.New(`sessions mode: the line names no "session"`)
	}
	return nil
}
