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
	if ctl.All {
		t.closeAll(ctl, reply)
		return
	}
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

// closeAll closes every session open now (a close with "all"), each in
// its own run, in parallel, and answers once all are gone, with code 0:
// the sessions' own statuses are their closes' to tell. None open is
// answered at once. A session opened after the line was read is not
// closed by it.
func (t *Table) closeAll(ctl protocol.ParsedControl, reply *fifo.Reply) {
	if !t.wait() {
		t.refuse(ctl, reply, errTooManyWaiting)
		return
	}
	all := t.entries()
	if len(all) > 0 {
		t.log.Info("closing every session", "sessions", len(all))
	}
	for _, s := range all {
		s.close()
	}
	t.poke()
	t.later(func() {
		for _, s := range all {
			<-s.done
		}
		t.write(ctl.ID, reply, protocol.AppendClosed(nil, ctl.ID, 0))
	})
}
