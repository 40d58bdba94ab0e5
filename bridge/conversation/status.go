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

// Changes moves whenever what Snapshot shows may have changed: the
// conversation's state (every change takes lock, which moves it) and the
// transcript's counts. Whoever reads Changes and then Snapshot, and later
// reads the same Changes, knows that Snapshot would show the same: a
// change under way when Changes was read ends before that Snapshot, which
// waits for the lock. The agent's status file renders a session again
// only when its Changes moved.
func (c *Conversation) Changes() uint64 {
	return c.changes.Load() + c.script.written.Load() + c.script.dropped.Load()
}

// lock takes mu to change the conversation's state, and moves Changes.
func (c *Conversation) lock() {
	c.mu.Lock()
	c.changes.Add(1)
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
