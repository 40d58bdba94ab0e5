//go:build linux

package conversation

import "time"

// loop runs the turns until Stop.
func (c *Conversation) loop() {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	probe := prober{log: c.cfg.Log, settle: c.settle}
	for {
		now := time.Now()
		next, ok, look := c.step(now)
		if look.r != nil {
			again, atOnce := probe.probe(look, now)
			c.probed()
			if atOnce {
				continue
			}
			if !again.IsZero() && (!ok || again.Before(next)) {
				next, ok = again, true
			}
		}
		t.Stop()
		if ok {
			t.Reset(max(time.Until(next), 0))
		}
		select {
		case <-c.quit:
			return
		case <-c.note.wake:
		case <-t.C:
		}
	}
}

// step does what is due at now, says when to look again, and returns the
// prompt the child shows, not yet taken, for the loop to probe.
func (c *Conversation) step(now time.Time) (time.Time, bool, promptLook) {
	c.lock()
	defer c.mu.Unlock()
	c.turn.handle(c.child.tick(now))
	c.turn.check(now)
	c.queue.expire(now)
	c.queue.startNext(now)
	next, ok := c.nextLook()
	look, due := c.child.look()
	if !due {
		c.turn.probed() // nothing for the loop to probe: nothing to hold for
	}
	return next, ok, look
}

// settle takes the prompt look showed, if it still stands (probe.go).
func (c *Conversation) settle(look promptLook) {
	c.lock()
	defer c.mu.Unlock()
	c.turn.handle(c.child.settle(look, time.Now()))
}

// nextLook is when the loop looks again: the tracker's deadline (none
// while the child's output is held up), the turn's limit, the first
// limit of a waiting ask.
func (c *Conversation) nextLook() (time.Time, bool) {
	var next time.Time
	ok := false
	take := func(t time.Time, has bool) {
		if has && (!ok || t.Before(next)) {
			next, ok = t, true
		}
	}
	take(c.child.deadline())
	take(c.turn.limit())
	c.queue.limits(take)
	return next, ok
}
