package bridge

import (
	"context"
	"time"
)

// Reply FIFOs left behind. send removes its reply FIFO on every way out it
// lives to see; one killed by SIGKILL cannot, and its FIFO would stay in
// DIR/replies for good. The agent removes such a FIFO once all of these
// hold:
//
//   - no request names it: none that is queued, running or being answered
//     holds it open (execMode.replyNames);
//   - nobody has it open for reading: its send is gone (a live send holds
//     its read end from just after it made the FIFO until it removes it);
//   - it has not changed for SweepAge: a send that made its FIFO a moment
//     ago and is about to open it is not raced.
//
// It looks at start and every SweepPeriod, listing replies/ through its
// descriptor, and never follows a link: anything but a FIFO is left
// alone, and so is a FIFO it may not open (it cannot tell whether that
// one has a reader). replies/ belongs to the agent's user and has the
// sticky bit, so an agent that is not root may remove any entry too.

// SweepPeriod and SweepAge are the sweep's defaults: a killed send's FIFO
// goes within two minutes.
const (
	SweepPeriod = time.Minute
	SweepAge    = time.Minute
)

// sweep removes reply FIFOs left behind, at start and every period, until
// ctx is done.
func (e *execMode) sweep(ctx context.Context) {
	if e.replies == nil {
		return
	}
	period, age := SweepPeriod, SweepAge
	if e.cfg.ReplySweep > 0 {
		period, age = e.cfg.ReplySweep, e.cfg.ReplySweep
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		e.sweepOnce(time.Now().Add(-age))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sweepOnce removes the reply FIFOs that no request names, that nobody
// reads and that have not changed since before.
func (e *execMode) sweepOnce(before time.Time) {
	removed, kept := 0, 0
	err := e.replies.EachName(func(name string) {
		e.mu.Lock()
		named := e.replyNames[name] > 0
		e.mu.Unlock()
		if !named {
			ok, err := e.replies.RemoveUnread(name, before)
			if err != nil {
				e.cfg.Log.Debug("reply sweep: left alone", "name", name, "err", err)
			}
			if ok {
				removed++
				return
			}
		}
		kept++
	})
	if err != nil {
		e.cfg.Log.Warn("reply sweep failed", "err", err)
	}
	if removed > 0 {
		e.cfg.Log.Info("removed reply fifos left behind by their senders", "dir", e.replies.Path(), "removed", removed)
	}
	e.cfg.Log.Debug("reply sweep done", "removed", removed, "kept", kept)
}
