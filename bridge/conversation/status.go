//go:build linux

package conversation

import "github.com/fifobridge/fifobridge/status"

// tally counts how the turns ended, for the status file. Under the
// conversation's lock.
type tally struct {
	answered   uint64 // at the child's prompt
	timedOut   uint64 // past their limit, in their turn or while waiting
	incomplete uint64 // at the child's continuation prompt
}

// Snapshot is the conversation's part of the status file: its turns, and
// the transcript's counts.
func (c *Conversation) Snapshot() (*status.Turn, *status.Transcript) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := "busy"
	if c.turn.cur == nil && c.child.ready() {
		st = "ready"
	}
	return &status.Turn{State: st, Queued: c.queue.len(), Answered: c.count.answered, TimedOut: c.count.timedOut,
			Incomplete: c.count.incomplete, Unready: c.child.unreadyNow()},
		&status.Transcript{Written: c.script.written.Load(), Dropped: c.script.dropped.Load()}
}

// Busy reports whether an ask waits or is in its turn, or its last frames
// are being written: the agent is not idle then (-idle-timeout).
func (c *Conversation) Busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queue.len() > 0 || c.turn.busy()
}

// Readied reports whether the child started last has been ready since it
// started, until Exited is told of its end.
func (c *Conversation) Readied() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.child.readied()
}
