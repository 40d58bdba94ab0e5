//go:build linux

package conversation

import (
	"time"

	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/turn"
)

// piece is the most of the child's output the tracker takes at once:
// Output cuts what it is given into pieces, and waits for room before
// each.
const piece = 64 << 10

// Output takes bytes the child wrote (p is not kept): the transcript is
// offered them, which never waits, and the tracker follows them. While
// the asker of the turn in progress has no room for their frames (maxHeld
// of them wait for it), Output waits: the child waits with it, its
// output no longer read. The wait ends when the asker takes frames, when
// the turn ends (its asker took nothing for the patience, or past its
// limit) or when the agent stops.
func (c *Conversation) Output(p []byte) {
	c.script.offer(p)
	for len(p) > 0 {
		n := min(len(p), piece)
		c.take(p[:n])
		p = p[n:]
	}
	c.note.wakeLoop()
}

// take gives the tracker p, at most piece bytes, once there is room for
// its frames.
func (c *Conversation) take(p []byte) {
	c.lock()
	defer c.mu.Unlock()
	c.turn.waitRoom(len(p))
	c.turn.handle(c.child.output(p, time.Now()))
	c.turn.holdForProbe()
}

// waitRoom waits until the asker of the turn in progress has room for the
// frames of n more bytes of output, or the turn ends, or the agent stops.
// The tracker's clock stands still meanwhile: a child kept waiting is not
// quiet.
func (t *turns) waitRoom(n int) {
	a := t.cur
	if a == nil || a.roomFor(n) || t.stopping {
		return
	}
	t.child.clock.hold(time.Now())
	t.probed() // the writer makes the room: nothing is held for a probe now
	for t.cur == a && !a.roomFor(n) && a.failed == nil && !t.stopping {
		t.room.Wait()
	}
	t.child.clock.release(time.Now())
	t.note.wakeLoop() // the tracker's deadline counts again
}

// roomFor says whether a's frames of n more bytes of output fit in
// maxHeld: at worst every byte, and what the tracker held of the line
// before, is escaped as \u00XX, in one frame.
func (a *asker) roomFor(n int) bool {
	worst := 6*(n+turn.MaxHold+len(a.partial)) + 6*protocol.MaxIDLen + 64
	return a.held == 0 || a.held+worst <= maxHeld
}
