//go:build linux

package sessions

// maxWaiting bounds the answers that wait in the agent at once (an open
// for its child, a close for its tree, a long list): each holds its reply
// FIFO and a goroutine. One more is refused at once.
const maxWaiting = 1024

// wait reserves room for one more waiting answer, or reports false when
// maxWaiting wait already. done gives the room back.
func (t *Table) wait() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.waiting >= maxWaiting {
		return false
	}
	t.waiting++
	return true
}

// later runs answer, which writes an answer that waits, in a goroutine
// the engine owns and waits for; the room wait reserved for it is given
// back when it returns.
func (t *Table) later(answer func()) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer t.done()
		answer()
	}()
}

// done gives back the room wait reserved.
func (t *Table) done() {
	t.mu.Lock()
	t.waiting--
	t.mu.Unlock()
}
