package bridge

import "time"

// blockedAfter is how long a write must have waited, with no write of the
// same FIFO finishing meanwhile, to count as blocked at the give-up
// deadline. A reader that is attached takes a frame in far less.
const blockedAfter = 250 * time.Millisecond

// giveUpTick is how often, once the give-up deadline has passed, writes
// are looked at for ones that block.
const giveUpTick = 50 * time.Millisecond

// hardAfter is how long after the give-up deadline every write still under
// way is given up, progressing or not, so that the stop ends within
// -stop-timeout + 1 s.
const hardAfter = 350 * time.Millisecond

// giveUp is the stop's one give-up deadline, in the spirit of os/exec's
// WaitDelay: from deadline on, until finished is closed, every write that
// is blocked (no reader, or a reader that does not read) is given up: the
// output FIFO is closed, a reply FIFO's write is woken, and error frames
// that find the rejection queue full are dropped. Writes that make
// progress are left alone, so frames of requests that end late still reach
// a reader that is attached, but only until hardAfter more: a reader that
// takes a byte now and then cannot hold the stop either.
func (e *execMode) giveUp(deadline time.Time, finished <-chan struct{}) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-finished:
		return
	case <-t.C:
	}
	e.rejections.giveUp()
	tick := time.NewTicker(giveUpTick)
	defer tick.Stop()
	sinkClosed := false
	hard := deadline.Add(hardAfter)
	for {
		all := !time.Now().Before(hard)
		if !sinkClosed && (all || e.out.blocked(blockedAfter)) {
			e.cfg.Log.Warn("stopping: giving up on the output fifo: nobody takes what is left")
			e.out.sink.Close()
			sinkClosed = true
		}
		e.mu.Lock()
		for o := range e.writers {
			if all || o.blocked(blockedAfter) {
				e.cfg.Log.Warn("stopping: giving up on a reply fifo nobody reads", "id", o.id)
				o.giveUp()
			}
		}
		e.mu.Unlock()
		select {
		case <-finished:
			return
		case <-tick.C:
		}
	}
}
