//go:build linux

package conversation

import (
	"time"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/turn"
)

// This file is how the stream engine tells the conversation of its child:
// its start, how to see it wait for input, typed input, the end of its
// output, and its end.

// Started gives the conversation a new child, busy until its first
// prompt. Call it before the child can write.
func (c *Conversation) Started() {
	tr, err := turn.New(turn.Config{Prompt: c.cfg.Prompt, Continuation: c.cfg.Continuation,
		Settle: c.cfg.Settle, Terminal: c.cfg.Terminal, Ready: c.cfg.Ready})
	c.lock()
	defer c.mu.Unlock()
	if err != nil { // the prompt was checked at start
		c.cfg.Log.Error("cannot follow the child's turns", "err", err)
		return
	}
	c.child.start(tr, time.Now())
	c.note.wakeLoop()
}

// Reading gives the conversation r, which sees whether the child started
// last waits for input: its prompt is then taken at once, without waiting
// -settle (probe.go). Without it (nil, or not called), -settle decides.
// Call it once the child runs, before Exited.
func (c *Conversation) Reading(r Reader) {
	c.lock()
	defer c.mu.Unlock()
	if c.child.reading(r) {
		c.note.wakeLoop()
	}
}

// Typed says bytes from the input FIFO went to the child: it is busy
// until it shows its prompt again.
func (c *Conversation) Typed() {
	c.lock()
	defer c.mu.Unlock()
	c.turn.handle(c.child.typed())
}

// OutputEnded says the child's output ended: the turn in progress gets
// what is held of it.
func (c *Conversation) OutputEnded() {
	c.lock()
	defer c.mu.Unlock()
	c.turn.handle(c.child.eof())
}

// Exited says the child ended with st, after its output was copied: the
// turn in progress gets an exit frame; when last (it is not restarted),
// the waiting asks get an error frame (the child ended, or the agent
// stops), and so do later ones. Otherwise they wait for the next child's
// prompt.
func (c *Conversation) Exited(st child.ExitStatus, last bool) {
	c.lock()
	defer c.mu.Unlock()
	c.turn.handle(c.child.eof())
	c.child.end()
	c.turn.exited(st, time.Now())
	if last && c.turn.stopping {
		c.queue.endAll(c.stopReason())
	} else if last {
		c.queue.endAll(errNoChild)
	}
	c.note.poke()
}
