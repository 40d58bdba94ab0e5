//go:build linux

package client

import (
	"context"
	"errors"
	"syscall"
)

// writeAsk writes an Asker's line to DIR/ask through the descriptor it
// keeps open, by writeLine's rule (atomic up to PipeBuf, else under the
// FIFO's lock); openInput checked, when it opened it, that the reply
// FIFO's key allows it there and that the agent serves it as DIR/ask. When the agent
// that read that FIFO is gone (EPIPE, nothing written), DIR/ask is opened
// again, once, through DIR's descriptor: an agent that serves DIR now
// reads the FIFO found there.
func (a *Asker) writeAsk(ctx context.Context, line []byte) error {
	path := a.dir.Join(askName)
	for retried := false; ; retried = true {
		if a.in == nil {
			in, err := openInput(ctx, dirInput(a.dir, askName), a.reply.key)
			if err != nil {
				return err
			}
			a.in = in
		}
		n, err := writeLine(ctx, a.in, path, line)
		if err == nil || n > 0 || retried || !errors.Is(err, syscall.EPIPE) {
			return err
		}
		a.in.Close()
		a.in = nil
	}
}
