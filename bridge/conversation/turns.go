//go:build linux

package conversation

import (
	"time"

	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/turn"
)

// This file is the turn in progress: how it starts, what the child's
// output gives it, and how it ends. Everything here runs under c.mu.

// startNext starts the first waiting ask whose asker is still there, once
// the child is ready and the last asker's frames are written. A child
// that was interrupted is ready only once it shows its prompt again.
func (c *Conversation) startNext(now time.Time) {
	for c.cur == nil && c.last == nil && !c.stopping && c.tracker != nil && c.tracker.Ready() && c.queue.Len() > 0 {
		w := c.queue.Pop()
		if a := c.open(w); a != nil {
			c.begin(a, now)
		}
		c.poke()
	}
}

// begin starts a's turn: the tracker is told, the input written, and a's
// writer and watch started.
func (c *Conversation) begin(a *asker, now time.Time) {
	input := turn.Line([]byte(a.req.Input))
	c.handle(c.tracker.Begin(input, a.req.Quiet, c.clock.at(now))) // what is left before is no answer
	c.cur, a.begun = a, now
	c.input.write(c.child, input)
	c.serveAsker(a)
}

// checkTurn interrupts the turn in progress when its asker went away or
// stopped reading, or it is past its time limit.
func (c *Conversation) checkTurn(now time.Time) {
	a := c.cur
	switch {
	case a == nil:
	case a.gone.Load():
		c.cfg.Log.Info("turn interrupted: its ask went away", "id", a.req.ID)
		c.abandon(nil)
	case a.failed != nil:
		c.cfg.Log.Info("turn interrupted: its asker lost it", "id", a.req.ID, "err", a.failed)
		c.abandon(nil)
	case expired(a.req, a.accepted, now):
		c.cfg.Log.Info("turn interrupted: past its time limit", "id", a.req.ID, "limit", a.req.Limit)
		c.timedOut++
		c.abandon(protocol.AppendEnd(nil, a.req.ID, protocol.End{TimedOut: true, NotReady: c.notReady(now),
			DurationMS: since(a.begun, now)}))
	}
}

// expired says whether an ask accepted at accepted is past its limit at
// now: the limit counts from the ask, its wait included, as its asker's.
func expired(req protocol.ParsedAsk, accepted, now time.Time) bool {
	return req.Limit > 0 && !now.Before(accepted.Add(req.Limit))
}

// handle passes the segments of the child's output the tracker settled to
// the turn in progress: its answer, in one frame, and its end.
func (c *Conversation) handle(segs []turn.Segment) {
	a := c.cur
	if a == nil {
		return
	}
	data := c.scratch[:0]
	for _, s := range segs {
		switch s.Kind {
		case turn.Answer:
			data = append(data, s.Data...)
		case turn.End, turn.Incomplete:
			c.answer(a, data)
			c.scratch = data[:0]
			c.endTurn(a, s.Kind, time.Now())
			return // what follows belongs to no turn
		}
	}
	c.answer(a, data)
	c.scratch = data[:0]
}

// endTurn ends a's turn at now, as the tracker says (kind): at the child's
// prompt (End), with the prompt's named groups and status in its end
// frame, or at its continuation prompt after the whole input (Incomplete):
// the child wants more than the turn gave, and is interrupted back to its
// prompt, which the next turn waits for.
func (c *Conversation) endTurn(a *asker, kind turn.Kind, now time.Time) {
	e := protocol.End{DurationMS: since(a.begun, now)}
	if kind == turn.Incomplete {
		c.cfg.Log.Info("turn incomplete: the child asks for more input; interrupting it", "id", a.req.ID)
		c.incomplete++
		e.Incomplete = true
		c.finish(protocol.AppendEnd(nil, a.req.ID, e))
		c.markIncomplete(now, a.req.Input)
		c.interrupt()
		return
	}
	c.answered++
	for _, g := range c.tracker.Groups() {
		e.Prompt = append(e.Prompt, protocol.PromptGroup{Name: g.Name, Text: g.Text})
	}
	if n, ok := c.tracker.Status(); ok {
		e.Status = &n
	}
	c.finish(protocol.AppendEnd(nil, a.req.ID, e))
}

// finish ends the turn in progress with its last frame: its asker becomes
// the last one until its frames are written.
func (c *Conversation) finish(last []byte) {
	a := c.cur
	c.cur = nil
	c.flushPartial(a)
	if last != nil {
		c.push(a, last)
	}
	a.done = true
	a.more.Broadcast()
	c.last = a
	c.room.Broadcast()
	c.activity()
	c.poke()
}

// abandon interrupts the turn in progress: what the child writes until it
// is ready again is dropped, the child is interrupted, and the next turn
// waits until it shows its prompt again.
func (c *Conversation) abandon(last []byte) {
	c.handle(c.tracker.Abandon())
	c.finish(last)
	c.markUnready(time.Now())
	c.interrupt()
}

// interrupt interrupts the child's foreground work: on a terminal ^C is
// typed, after the input before it; on pipes its process group gets
// SIGINT.
func (c *Conversation) interrupt() {
	if c.cfg.Terminal {
		c.input.write(c.child, []byte{0x03})
		return
	}
	c.child.Interrupt()
}

// nextLook is when the loop looks again: the tracker's deadline (none
// while the child's output is held up), the turn's limit, the first
// limit of a waiting ask.
func (c *Conversation) nextLook() (time.Time, bool) {
	var next time.Time
	ok := false
	take := func(t time.Time) {
		if !ok || t.Before(next) {
			next, ok = t, true
		}
	}
	if c.tracker != nil && !c.clock.held() {
		if d, has := c.tracker.Deadline(); has {
			take(c.clock.real(d))
		}
	}
	if a := c.cur; a != nil && a.req.Limit > 0 {
		take(a.accepted.Add(a.req.Limit))
	}
	c.queue.Each(func(w *waiting) {
		if w.req.Limit > 0 {
			take(w.accepted.Add(w.req.Limit))
		}
	})
	return next, ok
}
