//go:build linux

package conversation

// This file makes a turn that ends at a prompt the child is seen waiting
// at reach its asker in one write. The child's answer and its prompt come
// as one read of its output, the answer frame is queued at once, and the
// end frame only once the loop has probed the child (probe.go): written
// as they came, the asker would be woken twice, with the probe in
// between, and each wake of a client idle since its last turn costs tens
// of microseconds of a cold CPU. So while a probe is due (the output
// just read ends in a line that looks like the prompt, and the child has
// a Reader), the asker's writer holds the frames it has; the loop lets
// it go on as soon as it has probed, or found nothing to probe: with the
// end frame when the child was seen waiting, alone otherwise. Nothing is
// held longer than one step of the loop, none after the turn ended or
// once the agent stops.

// holdForProbe says, after the tracker took output under the lock, whether
// the writer of the turn in progress holds its frames for the loop's
// probe: while the child shows a prompt the loop will probe.
func (t *turns) holdForProbe() {
	_, due := t.child.look()
	t.probeDue = due && t.cur != nil && !t.stopping
}

// held says whether a's writer waits for the loop's probe before it
// writes.
func (t *turns) held(a *asker) bool { return t.probeDue && t.cur == a }

// probed lets the writer of the turn in progress go on with what it held.
func (t *turns) probed() {
	if t.probeDue {
		t.probeDue = false
		if a := t.cur; a != nil {
			a.more.Broadcast()
		}
	}
}

// probed is turns.probed under the conversation's lock, for the loop once
// it has probed.
func (c *Conversation) probed() {
	c.lock()
	defer c.mu.Unlock()
	c.turn.probed()
}
