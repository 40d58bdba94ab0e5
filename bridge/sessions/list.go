//go:build linux

package sessions

import (
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// listOp answers with the status of every open session. A list too long
// for one write that the pipe takes whole is written by a goroutine of
// its own, under the rule.
func (t *Table) listOp(ctl protocol.ParsedControl, reply *fifo.Reply) {
	b, err := t.sessionsJSON()
	if err != nil {
		t.refuse(ctl, reply, err)
		return
	}
	frame := protocol.AppendSessions(make([]byte, 0, len(b)+len(ctl.ID)+64), ctl.ID, b) // one allocation
	if len(frame) <= pipeBuf {
		t.writeNow(ctl.ID, reply, frame)
		return
	}
	if !t.wait() {
		t.refuse(ctl, reply, errTooManyWaiting)
		return
	}
	t.later(func() { t.write(ctl.ID, reply, frame) })
}
