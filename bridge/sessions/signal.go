//go:build linux

package sessions

import (
	"context"
	"fmt"
	"syscall"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// signalOp sends the line's signal to the foreground of the entry it
// names: a session, or stream mode's one child.
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
		t.refuse(ctl, reply, fmt.Errorf("signal %s: %w", s.what(), err))
		return
	}
	t.writeNow(ctl.ID, reply, protocol.AppendSignaled(nil, ctl.ID))
}

// forward is the one loop that passes the signals the agent forwards
// (config.Run.Forward) to every entry's child, until ctx is done. Each
// is a kill(2), which waits for no entry.
func (t *Table) forward(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case sig := <-t.cfg.Forward:
			for _, s := range t.entries() {
				s.eng.Forward(sig.(syscall.Signal))
			}
		}
	}
}

// parseSignal reads the signal of a signal line.
func parseSignal(s string) (syscall.Signal, error) { return child.ParseSignal(s) }
