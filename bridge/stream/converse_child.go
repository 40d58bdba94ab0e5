package stream

import (
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/turn"
)

// This file is how the conversation learns of the child: its start, its
// output, typed input, and its end.

// started gives the conversation a new child, busy until its first prompt.
func (c *conversation) started() {
	tr, err := turn.New(turn.Config{Prompt: c.cfg.Prompt, Terminal: c.cfg.Tty})
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil { // the prompt was checked at start
		c.cfg.Log.Error("cannot follow the child's turns", "err", err)
		return
	}
	c.tracker, c.recovering = tr, time.Time{}
	c.wakeLoop()
}

// output takes bytes the child wrote (p is not kept).
func (c *conversation) output(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tracker == nil {
		return
	}
	c.handle(c.tracker.Output(p, time.Now()))
	c.wakeLoop()
}

// outputEnded says the child's output ended: the turn in progress gets
// what is held of it.
func (c *conversation) outputEnded() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tracker != nil {
		c.handle(c.tracker.EOF())
	}
}

// typed says bytes from the input FIFO went to the child.
func (c *conversation) typed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tracker != nil {
		c.tracker.Typed()
	}
}

// exited says the child ended with st, after its output was copied: the
// turn in progress gets an exit frame; when last (not restarted), queued
// asks get an error frame, and so do later ones.
func (c *conversation) exited(st child.ExitStatus, last bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tracker != nil {
		c.handle(c.tracker.EOF())
	}
	c.tracker, c.recovering = nil, time.Time{}
	if a := c.cur; a != nil {
		c.finish(exitFrame(a.req.ID, st, since(a.begun, time.Now())))
	}
	if last {
		c.endAll(errNoChild)
	}
	c.poke()
}

// stop refuses the asks queued and to come, and ends the turn in progress
// with an error frame: the agent is stopping.
func (c *conversation) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.cur; a != nil {
		c.cur = nil
		a.out.send(answer.ErrorFrame(a.req.ID, errStoppingAsk))
		a.out.finish()
	}
	c.endAll(errStoppingAsk)
}

// endAll answers every queued ask with err, and every later one.
func (c *conversation) endAll(err error) {
	if c.ended == nil {
		c.ended = err
	}
	for _, a := range c.queue {
		c.cfg.Log.Info("ask refused", "id", a.req.ID, "err", err)
		a.out.send(answer.ErrorFrame(a.req.ID, err))
		a.out.finish()
	}
	clear(c.queue)
	c.queue = nil
}
