//go:build linux

package sessions

import (
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// closeOp closes the session the line names: its engine stops its tree,
// answers its waiting asks, and its run removes its files; the answer, the
// last child's status, waits for all of that in a goroutine of its own.
// A close of a session that is closing already waits for the same end.
// Sessions close in parallel: each closes in its own run.
func (t *Table) closeOp(ctl protocol.ParsedControl, reply *fifo.Reply) {
	s := t.session(ctl.Session)
	if s == nil {
		t.refuse(ctl, reply, notOpen(ctl.Session))
		return
	}
	if !t.wait() {
		t.refuse(ctl, reply, errTooManyWaiting)
		return
	}
	s.log.Info("closing the session")
	s.close()
	t.poke()
	t.later(func() {
		<-s.done
		t.write(ctl.ID, reply, protocol.AppendClosed(nil, ctl.ID, s.status.Code()))
	})
}
