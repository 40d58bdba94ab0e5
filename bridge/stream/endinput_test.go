//go:build linux

package stream

import (
	"crypto/rand"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/bridge/internal/idle"
	"github.com/fifobridge/fifobridge/internal/leakcheck"
)

// TestEndWaits: an end is due once the bytes counted for it were moved,
// in order; one not counted yet is never due; a removed one gets nothing.
func TestEndWaits(t *testing.T) {
	var e endWaits
	require.False(t, e.waiting())
	a := e.add()
	require.False(t, e.due(), "not counted yet")
	e.moved(100) // before it was counted: not its bytes
	e.count(func() int { return 5 })
	require.False(t, e.due())
	b := e.add()
	e.moved(3)
	e.count(func() int { return 4 }) // b: the 2 left of a's, and 2 more
	e.moved(2)
	require.True(t, e.due(), "a's 5 bytes moved")
	e.finish(nil)
	require.NoError(t, <-a.done)
	require.False(t, e.due(), "b has 2 bytes to go")
	c := e.add()
	require.True(t, e.remove(c))
	require.False(t, e.remove(c), "removed once")
	e.moved(2)
	require.True(t, e.due())
	require.Same(t, b, e.first())
	e.fail(errChildEnded)
	require.ErrorIs(t, <-b.done, errChildEnded)
	require.False(t, e.waiting())
	select {
	case err := <-c.done:
		t.Fatalf("a removed end got %v", err)
	default:
	}
}

// An end of the input, on pipes, closes the child's stdin once what the
// input FIFO held was moved into it, also more than its pipe takes at
// once: the child reads all of it, then end-of-file. A second end is
// refused while the child lives; what is typed after the end waits in
// the FIFO for the next child, whose stdin is fresh. What a child left
// unread in its pipe after an end is taken back for the next child too,
// though the agent's one descriptor of the pipe (pipeio.Input) was
// closed for the end. No child, no end.
func TestFeederEndInput(t *testing.T) {
	before := leakcheck.FDs(t)
	src, srcW, srcDir := inputFIFO(t)
	f := newFeeder(src, idle.NewClock())
	done := make(chan struct{})
	go func() { defer close(done); f.run() }()

	_, err := f.endInput()
	require.ErrorIs(t, err, errNoChild, "no child attached")

	stdin1, back1, child1 := childPipe(t)
	f.attach(stdin1, back1, nil)
	size, err := unix.FcntlInt(child1.Fd(), unix.F_GETPIPE_SZ, 0)
	require.NoError(t, err)
	data := make([]byte, 2*size+123) // more than the child's pipe takes: moved as it reads
	rand.Read(data)
	wrote := make(chan error, 1)
	go func() { _, err := srcW.Write(data); wrote <- err }()
	waitUnread(t, child1, size) // written, and the pipe full
	w, err := f.endInput()
	require.NoError(t, err)
	got, err := io.ReadAll(child1) // ends at end-of-file: the feeder closed stdin
	require.NoError(t, err)
	require.Equal(t, data, got, "every byte before the end, then end-of-file")
	require.NoError(t, <-w.done)
	require.NoError(t, <-wrote)

	_, err = f.endInput()
	require.ErrorIs(t, err, errEnded)
	_, err = srcW.Write([]byte("later\n"))
	require.NoError(t, err)
	child1.Close()
	f.detach()

	stdin2, back2, child2 := childPipe(t)
	f.attach(stdin2, back2, nil)
	later := make([]byte, len("later\n"))
	_, err = io.ReadFull(child2, later)
	require.NoError(t, err)
	require.Equal(t, "later\n", string(later), "the next child gets what was typed after the end")
	_, err = srcW.Write([]byte("read\nleft\n"))
	require.NoError(t, err)
	waitUnread(t, child2, len("read\nleft\n"))
	w, err = f.endInput()
	require.NoError(t, err, "the next child's input is not ended")
	require.NoError(t, <-w.done)
	line := make([]byte, len("read\n"))
	_, err = io.ReadFull(child2, line)
	require.NoError(t, err)
	child2.Close() // it leaves "left\n" unread
	f.detach()
	require.Equal(t, len("left\n"), f.held(), "what the child left after the end is not taken back")

	stdin3, back3, child3 := childPipe(t)
	f.attach(stdin3, back3, nil)
	left := make([]byte, len("left\n"))
	_, err = io.ReadFull(child3, left)
	require.NoError(t, err)
	require.Equal(t, "left\n", string(left))
	child3.Close()

	f.detach()
	f.close()
	_, err = f.endInput()
	require.ErrorIs(t, err, errNoInput)
	src.Close()
	<-done
	srcW.Close()
	srcDir.Close()
	require.Equal(t, before, leakcheck.FDs(t), "descriptors left open")
}
