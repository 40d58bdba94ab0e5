//go:build linux

package fifo

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/internal/pipeio"
)

// pollablePipe is a pipe whose ends the runtime poller serves, as the agent
// makes them.
func pollablePipe(t testing.TB) (r, w *os.File) {
	var fds [2]int
	require.NoError(t, unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK))
	r, w = os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	pipeio.Grow(r)
	return r, w
}

// A Wake that comes just before Reopen still ends the SpliceTo that
// waits: Reopen keeps it in force on the new FIFO.
func TestWakeSurvivesReopen(t *testing.T) {
	checkLeaks(t)
	p := newFIFO(t)
	src, err := OpenSource(p)
	require.NoError(t, err)
	defer src.Close()
	r, w := pollablePipe(t)
	defer r.Close()
	defer w.Close()
	done := make(chan error, 1)
	go func() { _, err := src.SpliceTo(w, pipeio.PipeSize); done <- err }()
	waitParked(t, "IO wait", "fifo.(*Source).SpliceTo") // waits for bytes

	// A Wake, then the FIFO is replaced before SpliceTo looks again.
	require.NoError(t, os.Remove(p))
	_, err = Make(p, 0o600)
	require.NoError(t, err)
	src.Wake()
	_, _, err = src.Reopen(false, 0, nil)
	require.NoError(t, err)
	select {
	case err := <-done:
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	case <-time.After(3 * time.Second):
		src.Close()
		<-done
		t.Fatal("SpliceTo slept through Wake because the FIFO was replaced")
	}
	src.Rearm()
}

// A Wake ends a WaitReadable that waits for bytes, as it ends a
// SpliceTo; after Rearm it waits again, until bytes come. Buffered
// counts what the FIFO, and one it replaced, hold.
func TestWakeWaitReadable(t *testing.T) {
	checkLeaks(t)
	p := newFIFO(t)
	src, err := OpenSource(p)
	require.NoError(t, err)
	defer src.Close()
	done := make(chan error, 1)
	go func() { done <- src.WaitReadable() }()
	waitParked(t, "IO wait", "fifo.(*Source).WaitReadable")
	src.Wake()
	select {
	case err := <-done:
		require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	case <-time.After(3 * time.Second):
		src.Close()
		<-done
		t.Fatal("WaitReadable slept through Wake")
	}
	src.Rearm()
	require.Zero(t, src.Buffered())

	w, err := OpenWriterNow(p)
	require.NoError(t, err)
	_, err = w.Write([]byte("abc"))
	require.NoError(t, err)
	w.Close()
	require.Equal(t, 3, src.Buffered())
	require.NoError(t, os.Remove(p)) // replaced: its bytes still count
	_, err = Make(p, 0o600)
	require.NoError(t, err)
	_, _, err = src.Reopen(false, 0, nil)
	require.NoError(t, err)
	w, err = OpenWriterNow(p)
	require.NoError(t, err)
	_, err = w.Write([]byte("de"))
	require.NoError(t, err)
	w.Close()
	require.Equal(t, 5, src.Buffered())
	require.NoError(t, src.WaitReadable(), "bytes are there")
	buf := make([]byte, 8)
	n, err := src.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "abc", string(buf[:n]), "the replaced FIFO's first")
	require.Equal(t, 2, src.Buffered())
}
