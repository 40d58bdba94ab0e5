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
	lines := protocol.NewLineReader(t.src, t.run.MaxRequest)
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
	}
}

// signalOp sends a session's foreground the line's signal.
func (t *Table) signalOp(ctl protocol.ParsedControl, reply *fifo.Reply) {
	s := t.session(ctl.Session)
	if s == nil {
		t.refuse(ctl, reply, notOpen(ctl.Session))
		return
	}
	sig, err := parseSignal(ctl.Signal)
	if err == nil {
		err = s.eng.Signal(sig)
	}
	if err != nil {
		t.refuse(ctl, reply, fmt.Errorf("signal session %s: %w", ctl.Session, err))
		return
	}
	t.writeNow(ctl.ID, reply, protocol.AppendSignaled(nil, ctl.ID))
}

// listOp answers with the status of every open session. A list too long
// for one write that the pipe takes whole is written by a goroutine of
// its own, under the rule.
func (t *Table) listOp(ctl protocol.ParsedControl, reply *fifo.Reply) {
	b, err := marshalSessions(asSessions(t.list()))
	if err != nil {
		t.refuse(ctl, reply, err)
		return
	}
	frame := protocol.AppendSessions(nil, ctl.ID, b)
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

// session returns the open session name, or nil.
func (t *Table) session(name string) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessions[name]
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
