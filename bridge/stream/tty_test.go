//go:build linux

package stream

import (
	"bytes"
	"crypto/rand"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/idle"
	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/internal/pipeio"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestTerminalKeepsInputNoTerminalTook: input read from the FIFO that a
// terminal did not take when its child ended goes, first and in order, to
// the next terminal. Pipes stand in for the terminals, so that what the
// first one took can be read back.
func TestTerminalKeepsInputNoTerminalTook(t *testing.T) {
	before := leakcheck.FDs(t)
	src, srcW, srcDir := inputFIFO(t)
	term := newTerminal(&Config{Log: slog.New(slog.DiscardHandler)}, src, nil, nil, idle.NewClock())
	fed := make(chan struct{})
	go func() { defer close(fed); term.feed() }()

	data := make([]byte, 3<<20)
	rand.Read(data)
	wrote := make(chan error, 1)
	go func() { _, err := srcW.Write(data); wrote <- err }()

	// The first terminal takes a pipe's worth and no more: the rest of
	// what the feeder read is held when its child ends.
	in1, took1, err := pipeio.Pipe(false)
	require.NoError(t, err)
	out1, end1, err := pipeio.Pipe(true)
	require.NoError(t, err)
	term.attach(in1, out1, nil)
	size, err := unix.FcntlInt(took1.Fd(), unix.F_GETPIPE_SZ, 0)
	require.NoError(t, err)
	waitUnread(t, took1, size)
	// The pipe may have filled with a whole chunk (ttyChunk is a pipe's
	// size): the feeder then holds the next one once it read it and
	// finds no room. Until then there is nothing to hold.
	for deadline := time.Now().Add(10 * time.Second); term.held() == 0; {
		require.True(t, time.Now().Before(deadline), "the feeder held nothing: the test proves nothing")
		time.Sleep(time.Millisecond)
	}
	end1.Close() // the terminal's output ends
	term.unwire(nil, 0)
	require.Positive(t, term.held(), "the feeder held nothing: the test proves nothing")
	got1, err := io.ReadAll(took1)
	require.NoError(t, err)
	took1.Close()

	in2, took2, err := pipeio.Pipe(false)
	require.NoError(t, err)
	out2, end2, err := pipeio.Pipe(true)
	require.NoError(t, err)
	term.attach(in2, out2, nil)
	got2 := make([]byte, len(data)-len(got1))
	read := make(chan error, 1)
	go func() { _, err := io.ReadFull(took2, got2); read <- err }()
	select {
	case err = <-read:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatalf("the next terminal got less than the %d bytes the first did not take", len(got2))
	}
	require.NoError(t, <-wrote)
	require.True(t, bytes.Equal(data, append(got1, got2...)), "input lost or reordered across terminals")

	end2.Close()
	term.unwire(nil, 0)
	took2.Close()
	term.close()
	src.Close() // wakes the feeder's read
	<-fed
	srcW.Close()
	srcDir.Close()
	require.Equal(t, before, leakcheck.FDs(t), "descriptors left open")
}
