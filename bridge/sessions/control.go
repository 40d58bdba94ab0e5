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

// serve reads control lines from src (sessions mode's DIR/in, stream
// mode's DIR/control) and acts on each until src is closed; then the
// lines it had read are answered: refused when the agent is stopping.
func (t *Table) serve(ctx context.Context, src *fifo.Source) {
	lines := protocol.NewLineReader(src, t.cfg.MaxRequest)
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
	if err == nil {
		err = t.scope(ctl)
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
	case protocol.OpEOF:
		t.eofOp(ctl, reply)
	case protocol.OpList:
		t.listOp(ctl, reply)
	case protocol.OpWatch:
		t.watchOp(ctl, reply)
	default:
		t.refuse(ctl, reply, fmt.Errorf("op %q is not served by this agent", ctl.Op))
	}
}

// scope refuses a line that the FIFO it came on does not take: stream
// mode's control FIFO takes the ops that act on its one child (signal,
// watch, eof), naming no session; sessions mode's DIR/in takes open,
// close and list, and those ops of a session it names.
func (t *Table) scope(ctl protocol.ParsedControl) error {
	acts := ctl.Op == protocol.OpSignal || ctl.Op == protocol.OpWatch || ctl.Op == protocol.OpEOF
	switch {
	case t.single() && !acts:
		return fmt.Errorf(`invalid op %q on stream mode's control fifo: it takes "signal", "watch" and "eof"`, ctl.Op)
	case t.single() && ctl.Session != "":
		return fmt.Errorf(`invalid %s line: stream mode has no sessions, and a line on its control fifo names none (it names %q)`,
			ctl.Op, ctl.Session)
	case !t.single() && acts && ctl.Session == "":
		return fmt.Errorf(`invalid %s line: in sessions mode it names a "session"`, ctl.Op)
	}
	return nil
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
