//go:build linux

package conversation

import "github.com/fifobridge/fifobridge/status"

// Snapshot is the conversation's part of the status file: its turns, and
// the transcript's counts.
func (c *Conversation) Snapshot() (*status.Turn, *status.Transcript) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := "busy"
	if c.cur == nil && c.tracker != nil && c.tracker.Ready() {
		st = "ready"
	}
	return &status.Turn{State: st, Queued: c.queue.Len(), Answered: c.answered, TimedOut: c.timedOut, Incomplete: c.incomplete, Unready: c.unreadyNow()},
		&status.Transcript{Written: c.script.written.Load(), Dropped: c.script.dropped.Load()}
}

// Busy reports whether an ask waits or is in its turn, or its last frames
// are being written: the agent is not idle then (-idle-timeout).
func (c *Conversation) Busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queue.Len() > 0 || c.cur != nil || c.last != nil
}

// Readied reports whether the child started last has been ready since it
// started, until Exited is told of its end.
func (c *Conversation) Readied() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tracker != nil && c.tracker.Readies() > 0
}
