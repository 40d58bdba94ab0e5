//go:build linux

package answer

import (
	"context"
	"log/slog"
	"time"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/sharedir"
)

// Reply FIFOs left behind. send removes its reply FIFO on every way out it
// lives to see; one killed by SIGKILL cannot, and its FIFO would stay in
// DIR/replies for good. The agent removes such a FIFO once all of these
// hold:
//
//   - no request names it: none that is queued, running or being answered
//     holds it open (exec mode's named; a conversation's asks whose
//     reader is gone are abandoned anyway, so there none counts);
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

// Sweep removes the reply FIFOs of replies that named says no request or
// ask names, that nobody reads and that have not changed for SweepAge, at
// start and every SweepPeriod, until ctx is done. every, if set, replaces
// both (tests only: FIFOBRIDGE_TEST_REPLY_SWEEP).
func Sweep(ctx context.Context, log *slog.Logger, replies *sharedir.Dir, every time.Duration, named func(string) bool) {
	if replies == nil {
		return
	}
	period, age := SweepPeriod, SweepAge
	if every > 0 {
		period, age = every, every
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		sweepOnce(log, replies, named, time.Now().Add(-age))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sweepOnce removes the reply FIFOs that named says nothing names, that
// nobody reads and that have not changed since before.
func sweepOnce(log *slog.Logger, replies *sharedir.Dir, named func(string) bool, before time.Time) {
	removed, kept := 0, 0
	err := replies.EachName(func(name string) {
		if !named(name) {
			ok, err := fifo.RemoveUnreadAt(replies, name, before)
			if err != nil {
				log.Debug("reply sweep: left one alone", "err", fifo.Unnamed("reply sweep", err))
			}
			if ok {
				removed++
				return
			}
		}
		kept++
	})
	if err != nil {
		log.Warn("reply sweep failed", "err", err)
	}
	if removed > 0 {
		log.Info("removed reply fifos left behind by their senders", "dir", replies.Path(), "removed", removed)
	}
	log.Debug("reply sweep done", "removed", removed, "kept", kept)
}
