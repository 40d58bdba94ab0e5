//go:build linux

package client

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/protocol"
)

// blockedPipe is a pipe, blocking as a shell's stdout is, that nobody
// reads: writes to it block once it is full.
func blockedPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var p [2]int
	require.NoError(t, unix.Pipe2(p[:], unix.O_CLOEXEC))
	return os.NewFile(uintptr(p[0]), "stdout-r"), os.NewFile(uintptr(p[1]), "stdout-w")
}

// pipeHolds returns how many unread bytes the pipe f is an end of holds,
// and its capacity.
func pipeHolds(t *testing.T, f *os.File) (n, capacity int) {
	t.Helper()
	rc, err := f.SyscallConn()
	require.NoError(t, err)
	var ierr, cerr error
	require.NoError(t, rc.Control(func(fd uintptr) {
		n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) // FIONREAD
		capacity, cerr = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0)
	}))
	require.NoError(t, ierr)
	require.NoError(t, cerr)
	return n, capacity
}

// A Send whose stdout nobody reads (`send | (sleep 60)`) still ends when
// its context does: it removes its reply FIFO and cancels its request. It
// stops reading the reply FIFO while the write blocks: what the agent
// writes after waits there, in the agent's backpressure, not in Send.
func TestSendStdoutBlocked(t *testing.T) {
	checkLeaks(t)
	dir := newDir(t)
	a := startFakeAgent(t, dir)
	r, w := blockedPipe(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := startCall(t, func(c *call) (Result, error) {
		return Send(ctx, Options{Dir: dir, Stdout: w, Stderr: &c.stderr})
	})
	t.Cleanup(func() {
		r.Close() // fails a write still blocked
		<-s.done
		w.Close()
	})

	req := a.next()
	reply := a.openReply(req)
	defer reply.Close()
	big := bytes.Repeat([]byte("x"), 1<<20)
	_, err := reply.Write(protocol.AppendData(protocol.AppendStart(nil, req.ID, 42), req.ID, protocol.FrameStdout, big))
	require.NoError(t, err, "Send reads the whole frame before it writes it")
	waitFull(t, r, "stdout")

	// More than the reply FIFO and Send's read buffer hold: with its
	// stdout blocked, Send reads no more, and the agent waits.
	var more []byte
	for range 8 {
		more = protocol.AppendData(more, req.ID, protocol.FrameStderr, bytes.Repeat([]byte("e"), 32<<10))
	}
	more = protocol.AppendExit(more, req.ID, protocol.Exit{Code: 0})
	wrote := make(chan error, 1)
	go func() { _, err := reply.Write(more); wrote <- err }()
	waitFull(t, reply, "the reply FIFO")
	select {
	case err := <-wrote:
		t.Fatalf("the agent wrote all its frames (%v): Send read on while its stdout was blocked", err)
	default:
	}

	cancel()
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		t.Fatal("Send, blocked on its stdout, did not return when its context ended")
	}
	require.ErrorIs(t, s.err, context.Canceled)
	require.Empty(t, s.stderr.String(), "nothing is written after a blocked write")
	requireNoReplies(t, dir)
	c := a.next()
	require.True(t, c.IsCancel, "the request is cancelled")
	require.Equal(t, req.ID, c.ID)
	require.ErrorIs(t, <-wrote, unix.EPIPE, "the reply FIFO lost its reader")
}

// waitFull waits until the pipe f is an end of is full.
func waitFull(t *testing.T, f *os.File, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for n, capacity := pipeHolds(t, f); n < capacity; n, capacity = pipeHolds(t, f) {
		require.True(t, time.Now().Before(deadline), "%s holds %d bytes of %d: it never filled", what, n, capacity)
		time.Sleep(time.Millisecond)
	}
}
