//go:build linux

package conversation

import (
	"bufio"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/fifo"
)

// waitKept waits until the conversation keeps a reply FIFO named name,
// and returns it.
func (h *harness) waitKept(name string) *fifo.Reply {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.c.kept.mu.Lock()
		k := h.c.kept.reply
		h.c.kept.mu.Unlock()
		if k != nil && k.Name() == name {
			return k
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the conversation kept no reply fifo %q", name)
		}
		time.Sleep(time.Millisecond)
	}
}

// An asker that asks again on the same reply FIFO gets its turn on the
// descriptor kept from its turn before; an ask on another reply FIFO
// takes the place of the kept one, which is closed (the harness checks
// that no descriptor is left at the end).
func TestKeptReply(t *testing.T) {
	h := newHarness(t, nil)
	h.ready()
	a := h.ask("a", "one", nil)
	require.Equal(t, "one\n", h.input())
	h.out("1\n" + testPrompt)
	a.requireAnswer("1\n")
	kept := h.waitKept("a")

	h.send(a, "two", nil)
	require.Equal(t, "two\n", h.input())
	h.c.mu.Lock()
	require.Same(t, kept, h.c.turn.cur.reply, "the second turn's reply fifo")
	h.c.mu.Unlock()
	h.out("2\n" + testPrompt)
	a.requireAnswer("2\n")
	require.Same(t, kept, h.waitKept("a"))

	b := h.ask("b", "three", nil)
	require.Equal(t, "three\n", h.input())
	h.out("3\n" + testPrompt)
	b.requireAnswer("3\n")
	h.waitKept("b")
}

// A kept reply FIFO whose name was given to another FIFO is not written
// to: the ask's frames go to the FIFO its name names now.
func TestKeptReplyReplaced(t *testing.T) {
	h := newHarness(t, nil)
	h.ready()
	a := h.ask("a", "one", nil)
	require.Equal(t, "one\n", h.input())
	h.out("1\n" + testPrompt)
	a.requireAnswer("1\n")
	h.waitKept("a")

	require.NoError(t, os.Remove(a.path))
	require.NoError(t, unix.Mkfifo(a.path, 0o600))
	r, err := os.OpenFile(a.path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	keep, err := os.OpenFile(a.path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	old := a.r
	defer old.Close()
	fresh := &client{t: t, id: "a", path: a.path, r: r, keep: keep, frames: bufio.NewReader(r)}
	t.Cleanup(fresh.leave)
	h.send(fresh, "two", nil)
	require.Equal(t, "two\n", h.input())
	h.out("2\n" + testPrompt)
	fresh.requireAnswer("2\n")
	n, err := unix.IoctlGetInt(int(old.Fd()), unix.TIOCINQ)
	require.NoError(t, err)
	require.Zero(t, n, "bytes written to the replaced fifo")
}

// An ask on a kept reply FIFO that nobody reads any more is refused as
// one whose FIFO cannot be opened: the child never sees it.
func TestKeptReplyReaderGone(t *testing.T) {
	h := newHarness(t, nil)
	h.ready()
	a := h.ask("a", "one", nil)
	require.Equal(t, "one\n", h.input())
	h.out("1\n" + testPrompt)
	a.requireAnswer("1\n")
	h.waitKept("a")

	a.r.Close()
	a.keep.Close()
	a.keep = nil
	h.send(a, "two", nil)
	h.noInput(300 * time.Millisecond)
	h.c.kept.mu.Lock()
	require.Nil(t, h.c.kept.reply, "a reply fifo nobody reads, kept")
	h.c.kept.mu.Unlock()
}
