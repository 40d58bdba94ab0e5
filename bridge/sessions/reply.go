//go:build linux

package sessions

import (
	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// pipeBuf is the most a pipe takes whole in one write (PIPE_BUF).
const pipeBuf = 4096

// refuse answers a control line with one error frame, at once or not at
// all, and closes its reply FIFO.
func (t *Table) refuse(ctl protocol.ParsedControl, reply *fifo.Reply, err error) {
	t.log.Warn("control line refused", "id", ctl.ID, "op", ctl.Op, "session", ctl.Session, "err", err)
	t.writeNow(ctl.ID, reply, answer.ErrorFrame(ctl.ID, err))
}

// writeNow writes frame, at most PIPE_BUF bytes, to reply at once or
// drops it (answer.WriteNow), and closes reply.
func (t *Table) writeNow(id string, reply *fifo.Reply, frame []byte) {
	defer reply.Close()
	if err := answer.WriteNow(reply, frame); err != nil {
		t.log.Warn("answer dropped: its reply fifo takes nothing", "id", id, "err", err)
	}
}

// flush rewrites the status file before an answer that changes what it
// lists (Config.Flush), or has it rewritten soon without one.
func (t *Table) flush() {
	if t.cfg.Flush == nil {
		t.poke()
		return
	}
	t.cfg.Flush()
}

// write writes frame to reply under the rule: a reader that takes nothing
// for the patience, or at the stop's deadline, is given up. Then reply is
// closed. Only goroutines that may wait call it.
func (t *Table) write(id string, reply *fifo.Reply, frame []byte) {
	defer reply.Close()
	w := t.rule.NewWriter(reply)
	defer w.Close()
	_, err := w.Write(frame)
	switch {
	case err == nil:
	case bound.GivenUp(err) && !t.rule.Stopping():
		t.log.Warn("giving up on a reply fifo whose reader takes nothing", "id", id, "after", t.rule.Patience())
		answer.DropGivenUp(t.log, reply)
	default:
		t.log.Warn("answer dropped", "id", id, "err", err)
	}
}
