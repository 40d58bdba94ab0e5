//go:build linux

package conversation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// unread is how many bytes wait in a's reply FIFO.
func (a *client) unread() int {
	a.t.Helper()
	n, err := unix.IoctlGetInt(int(a.r.Fd()), unix.TIOCINQ)
	require.NoError(a.t, err)
	return n + a.frames.Buffered()
}

// waitUnread waits until a's reply FIFO holds bytes, and returns how
// many.
func (a *client) waitUnread() int {
	a.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if n := a.unread(); n > 0 {
			return n
		}
		require.True(a.t, time.Now().Before(deadline), "ask %s: no frame within 10s", a.id)
		time.Sleep(time.Millisecond)
	}
}

// A turn that ends at a prompt the child is seen waiting at reaches its
// asker in one write: while the reader is asked, nothing of the answer is
// written; once it says yes, the answer and the end frame come together.
// When it says no, the answer goes at once, alone, and the end frame
// after a later probe.
func TestAnswerWaitsForTheProbe(t *testing.T) {
	r := &fakeReader{probing: make(chan struct{}), gate: make(chan bool)}
	h := withReader(t, always(true), nil)
	h.ready()
	h.c.Reading(r)

	a := h.ask("a", "go", nil)
	require.Equal(t, "go\n", h.input())
	h.out("went\n" + testPrompt)
	r.wait(t)
	deadline := time.Now().Add(200 * time.Millisecond)
	for time.Now().Before(deadline) {
		require.Zero(t, a.unread(), "the answer frame was written while the probe was under way")
		time.Sleep(time.Millisecond)
	}
	r.gate <- true
	n := a.waitUnread()
	f := a.next()
	require.Equal(t, "answer", f.Type, f.line)
	last := a.requireLast("end")
	require.True(t, last.Ready, last.line)
	require.Equal(t, len(f.line)+len(last.line), n, "the answer and the end frame in one write")

	b := h.ask("b", "slow", nil)
	require.Equal(t, "slow\n", h.input())
	h.out("half\n" + testPrompt)
	r.wait(t)
	r.gate <- false // not waiting yet: the answer goes
	f = b.next()
	require.Equal(t, "answer", f.Type, f.line)
	require.Equal(t, "half\n", *f.Data)
	r.wait(t)
	r.gate <- true
	b.requireLast("end")
}
