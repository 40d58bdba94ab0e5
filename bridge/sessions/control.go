//go:build linux

package sessions

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// serve reads control lines and acts on each until the Source is closed;
// then the lines it had read are refused: the agent is stopping.
func (t *Table) serve(ctx context.Context) {
	lines := protocol.NewLineReader(t.src, t.cfg.MaxRequest)
	lines.Each(func(line []byte, err error) { t.accept(ctx, line, err) }) // until the Source is closed: stopping
	for _, line := range protocol.SplitLines(lines.Rest()) {
		t.accept(ctx, line, nil)
	}
}

// accept handles one control line, or the *protocol.TooLongError that
// stands for one. A line is answered on its own reply FIFO only: one that
// names no usable reply FIFO, or one that cannot be opened, is answered in
// the log alone (and the FIFO that cannot be opened is removed, see
// answer.DropUnanswerable). A damaged line (protocol.ErrDamaged) is
// answered nowhere, and the reply FIFO its first piece names is removed.
func (t *Table) accept(ctx context.Context, line []byte, err error) {
	t.idle.Touch() // a line read is activity, even one refused
	if err == nil && protocol.IsBlank(line) {
		return
	}
	var ctl protocol.ParsedControl
	var tooLong *protocol.TooLongError
	if errors.As(err, &tooLong) {
		ctl.ID, ctl.Reply = protocol.SalvageHead(tooLong.Head)
	} else {
		ctl, err = protocol.ParseControl(line)
	}
	if errors.Is(err, protocol.ErrDamaged) {
		answer.RefuseDamaged(t.log, t.cfg.Replies, "control line", ctl.Reply, err)
		return
	}
	if ctl.ID == "" {
		ctl.ID = t.newID()
	}
	if ctl.Reply == "" {
		t.log.Warn("control line not answered: it names no reply fifo", "id", ctl.ID, "err", err)
		return
	}
	reply, rerr := fifo.OpenReply(t.cfg.Replies, ctl.Reply)
	if rerr != nil {
		t.log.Warn("control line not answered: its reply fifo cannot be opened", "id", ctl.ID, "err", rerr)
		if !answer.NotAReply(rerr) {
			answer.DropUnanswerable(t.log, t.cfg.Replies, ctl.Reply, rerr)
		}
		return
	}
	if err == nil && ctx.Err() != nil {
		err = errStopping
	}
	if err != nil {
		t.refuse(ctl, reply, err)
		return
	}
	t.do(ctl, reply)
}

// do acts on a control line that parsed; reply is its own, handed over.
func (t *Table) do(ctl protocol.ParsedControl, reply *fifo.Reply) {
	switch ctl.Op {
	case protocol.OpOpen:
		t.openOp(ctl, reply)
	case protocol.OpClose:
		t.closeOp(ctl, reply)
	case protocol.OpSignal:
		t.signalOp(ctl, reply)
	case protocol.OpList:
		t.listOp(ctl, reply)
	case protocol.OpWatch:
		t.watchOp(ctl, reply)
	}
}

// newID names a line that came without an id; only the loop calls it.
func (t *Table) newID() string {
	t.nextID++
	return "c" + strconv.FormatUint(t.nextID, 10)
}

func notOpen(name string) error { return fmt.Errorf("session %s is not open", name) }

var (
	errStopping       = errors.New("the agent is stopping")
	errTooManyWaiting = fmt.Errorf("too many answers waiting (at most %d at once)", maxWaiting)
)
