//go:build linux

package sessions

import (
	"context"
	"errors"
	"fmt"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// eofOp ends the input of the entry the line names (a session, or stream
// mode's one child) once what its input FIFO held when the line was
// served has reached the child (stream.Engine.EndInput), and answers
// then, in a goroutine of its own: an eof frame, or an error frame when
// the end cannot come (no child runs now, the input is ended already,
// the child ended first), with "timed_out" when the line's timeout
// passed first, the end then given up. The entry's close and the agent's
// stop end the wait.
func (t *Table) eofOp(ctl protocol.ParsedControl, reply *fifo.Reply) {
	s := t.session(ctl.Session)
	if s == nil {
		t.refuse(ctl, reply, notOpen(ctl.Session))
		return
	}
	if !t.wait() {
		t.refuse(ctl, reply, errTooManyWaiting)
		return
	}
	ctx, cancel := s.ctx, context.CancelFunc(func() {})
	if ctl.Limit > 0 {
		ctx, cancel = context.WithTimeout(ctx, ctl.Limit)
	}
	t.later(func() {
		defer cancel()
		err := s.eng.EndInput(ctx)
		switch {
		case err == nil:
			t.write(ctl.ID, reply, protocol.AppendEOF(nil, ctl.ID))
		case errors.Is(err, context.DeadlineExceeded):
			msg := fmt.Sprintf("end the input of %s: its input FIFO was not read within %v; the input is not ended", s.what(), ctl.Limit)
			s.log.Warn("eof given up: the child did not read its input in time", "id", ctl.ID, "timeout", ctl.Limit)
			t.write(ctl.ID, reply, protocol.AppendTimedOut(nil, ctl.ID, msg))
		default:
			if s.ctx.Err() != nil {
				err = errStopping
				if !t.stopping() {
					err = fmt.Errorf("%s is closing", s.what())
				}
			}
			s.log.Info("eof refused", "id", ctl.ID, "err", err)
			t.write(ctl.ID, reply, answer.ErrorFrame(ctl.ID, fmt.Errorf("end the input of %s: %w", s.what(), err)))
		}
	})
}
