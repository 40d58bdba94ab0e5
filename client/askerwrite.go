//go:build linux

package client

import (
	"context"
	"errors"
	"syscall"
)

// writeAsk writes an Asker's line to DIR/ask (or its session's ask FIFO)
// through the descriptor it keeps open, by writeLine's rule (atomic up to
// PipeBuf, else under the FIFO's lock); openInput checked, when it opened
// it, that the reply FIFO's key allows it there and that the agent serves
// it as that FIFO. When the agent that read that FIFO is gone (EPIPE,
// nothing written), the FIFO is opened again, once, through DIR's
// descriptor: an agent that serves DIR now reads the FIFO found there. A
// session's directory is entered again first (reenter), at this turn and
// at every later one until that works: a session closed and opened again
// is a new directory.
func (a *Asker) writeAsk(ctx context.Context, line []byte) error {
	for retried := false; ; retried = true {
		if a.in == nil {
			if err := a.reenter(); err != nil {
				return err
			}
			in, err := openInput(ctx, a.target, a.reply.key)
			if err != nil {
				return err
			}
			a.in = in
		}
		n, err := writeLine(ctx, a.in, a.target.path(), line)
		if err == nil || n > 0 || retried || !errors.Is(err, syscall.EPIPE) {
			return err
		}
		a.in.Close()
		a.in = nil
		a.stale = a.target.session != ""
	}
}

// reenter enters a session's directory again, from DIR's descriptor, in
// place of the one entered before, once a write found nobody reading its
// ask FIFO (stale); it does nothing otherwise.
func (a *Asker) reenter() error {
	if !a.stale {
		return nil
	}
	in, err := enterSession(a.dir, a.target.session)
	if err != nil {
		return err
	}
	a.target.fifos.Close()
	a.target, a.stale = in, false
	return nil
}
