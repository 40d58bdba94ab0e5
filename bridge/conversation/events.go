//go:build linux

package conversation

import (
	"time"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/status"
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
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil { // the prompt was checked at start
		c.cfg.Log.Error("cannot follow the child's turns", "err", err)
		return
	}
	c.tracker, c.clock, c.reader = tr, outputClock{}, nil
	c.children++
	c.unready = unready{since: status.SinceStart, at: time.Now()}
	c.wakeLoop()
}

// Reading gives the conversation r, which sees whether the child started
// last waits for input: its prompt is then taken at once, without waiting
// -settle (probe.go). Without it (nil, or not called), -settle decides.
// Call it once the child runs, before Exited.
func (c *Conversation) Reading(r Reader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tracker != nil {
		c.reader = r
		c.wakeLoop()
	}
}

// Typed says bytes from the input FIFO went to the child: it is busy
// until it shows its prompt again.
func (c *Conversation) Typed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tracker != nil {
		c.tracker.Typed()
	}
}

// OutputEnded says the child's output ended: the turn in progress gets
// what is held of it.
func (c *Conversation) OutputEnded() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tracker != nil {
		c.handle(c.tracker.EOF())
	}
}

// Exited says the child ended with st, after its output was copied: the
// turn in progress gets an exit frame; when last (it is not restarted),
// the waiting asks get an error frame (the child ended, or the agent
// stops), and so do later ones. Otherwise they wait for the next child's
// prompt.
func (c *Conversation) Exited(st child.ExitStatus, last bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tracker != nil {
		c.handle(c.tracker.EOF())
	}
	c.tracker, c.reader = nil, nil
	if a := c.cur; a != nil {
		c.finish(protocol.AppendExit(nil, a.req.ID, protocol.Exit{Code: st.Code(),
			Signal: child.SignalName(st.Signal()), DurationMS: since(a.begun, time.Now())}))
	}
	if last && c.stopping {
		c.endAll(errStopping)
	} else if last {
		c.endAll(errNoChild)
	}
	c.poke()
}
